# The two commands of the README: `make run` and `make test`.
.PHONY: run test venv schema clean csar

venv:
	@scripts/bootstrap

run: venv
	.venv/bin/ansible-playbook playbooks/optimise.yml $(ARGS)

test: venv
	scripts/test

schema: venv
	.venv/bin/python scripts/export_schema.py > schemas/modak-dsl.schema.json
	.venv/bin/python scripts/sync_scheduler_names.py
	.venv/bin/python scripts/export_tosca_types.py --write

# The CSAR of the TOSCA example (dist/modak.zip); see docs/tosca.md.
csar:
	scripts/opera-venv
	mkdir -p dist
	cd tosca && ../.venv-opera/bin/opera package -t service.yaml -o ../dist/modak .

clean:
	rm -rf out build tests/output
