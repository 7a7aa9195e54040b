# The two commands of the README: `make run` and `make test`.
.PHONY: run test venv schema clean csar demo

venv:
	@scripts/bootstrap

run: venv
	.venv/bin/ansible-playbook playbooks/optimise.yml $(ARGS)

test: venv
	scripts/test

# End to end as root: build the example's image from modak's recipe, push it, run the MNIST job in it under
# Slurm with Charliecloud and with Podman (scripts/demo; docs/containers.md).
demo: venv
	scripts/demo

schema: venv
	.venv/bin/python scripts/export_schema.py > schemas/modak-dsl.schema.json
	.venv/bin/python scripts/export_schema.py --site > schemas/modak-site.schema.json
	.venv/bin/python scripts/export_doc_fragments.py --write
	.venv/bin/python scripts/export_tosca_types.py --write

# The CSAR of the TOSCA example (dist/modak.zip); see docs/tosca.md.
csar:
	scripts/opera-venv
	mkdir -p dist
	cd tosca && ../.venv-opera/bin/opera package -t service.yaml -o ../dist/modak .

clean:
	rm -rf out build tests/output
