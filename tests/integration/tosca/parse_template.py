"""Check a service template with tosca-parser, data values included. Run with the opera venv's Python.

    parse_template.py SERVICE_TEMPLATE INPUTS_FILE

tosca-parser does not check a value that comes through get_input against its property's data type, and opera
checks no data values at all. So every {get_input: name} is first replaced by the input's value (from the
inputs file, else the input's default), imports are made absolute, and the resolved template is parsed.
Prints "ok" and exits 0, or prints tosca-parser's messages (or the exception it raised) and exits 1.
"""

from __future__ import annotations

import os
import sys
import tempfile

import yaml
from toscaparser.common.exception import ExceptionCollector, ValidationError
from toscaparser.tosca_template import ToscaTemplate


def resolve(node, values):
    if isinstance(node, dict):
        if list(node) == ["get_input"]:
            name = node["get_input"]
            if name not in values:
                raise SystemExit("input %r has no value and no default" % name)
            return values[name]
        return {key: resolve(value, values) for key, value in node.items()}
    if isinstance(node, list):
        return [resolve(value, values) for value in node]
    return node


def main(template_path, inputs_path):
    template_path = os.path.abspath(template_path)
    with open(template_path, encoding="utf-8") as handle:
        template = yaml.safe_load(handle)
    with open(inputs_path, encoding="utf-8") as handle:
        given = yaml.safe_load(handle) or {}
    topology = template.get("topology_template", {})
    declared = topology.get("inputs", {}) or {}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        print("inputs not declared by the template: %s" % ", ".join(unknown))
        return 1
    values = {name: given.get(name, spec.get("default")) for name, spec in declared.items()
              if name in given or "default" in spec}
    topology = dict(topology)
    topology.pop("inputs", None)
    topology = resolve(topology, values)
    base = os.path.dirname(template_path)
    resolved = dict(template, topology_template=topology,
                    imports=[os.path.join(base, entry) for entry in template.get("imports", [])])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, os.path.basename(template_path))
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump(resolved, handle)
        try:
            ToscaTemplate(path)
        except ValidationError:
            print("\n".join(ExceptionCollector.getExceptionsReport(full=False)))
            return 1
        except Exception as exc:  # tosca-parser crashes on some bad values instead of reporting them
            print("tosca-parser failed: %s: %s" % (type(exc).__name__, exc))
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
