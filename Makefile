# The two commands of the README: `make run` and `make test`.
.PHONY: run test venv schema clean

venv:
	@scripts/bootstrap

run: venv
	.venv/bin/ansible-playbook playbooks/optimise.yml $(ARGS)

test: venv
	scripts/test

schema: venv
	.venv/bin/python scripts/export_schema.py > schemas/modak-dsl.schema.json

clean:
	rm -rf out build tests/output
