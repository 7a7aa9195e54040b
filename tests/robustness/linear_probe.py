"""Child process of test_linear_time: validates documents with very long strings in every string field and prints
one JSON line per field with the slowest validation seen (a regex that backtracks cannot be interrupted in-process).

    python linear_probe.py LENGTH [max]     LENGTH characters per value; 'max': each field's own maxLength instead
"""

from __future__ import annotations

import json
import sys
import time

from test_injection import base_doc, owns, put, string_fields

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, schema

# repeated units that make a backtracking pattern work hardest (each followed by a character no pattern accepts)
UNITS = (" ", "1", "a", "1.", "1,", "a.", ",1", "-", "/", "a@", "1:", "_", "=", ">= 1 ", "v1 ", "a,", "1-1")


def sub_schema(field, kind):
    sub = schema.SCHEMA
    for key in field.split(".")[:-1] if kind == "env_value" else field.split("."):
        sub = sub["properties"][key]
    if kind == "env_value":
        return sub["additionalProperties"]
    if kind == "env_name":
        return sub["propertyNames"]
    return sub.get("items", sub) if kind == "array" else sub


def main(argv):
    length, at_bound = int(argv[1]), len(argv) > 2 and argv[2] == "max"
    for field, kind in string_fields():
        sub = sub_schema(field, kind)
        checked = "pattern" in sub     # the original's output fields (job_script...) are free text, ignored
        size = sub.get("maxLength", length) if at_bound else length
        slowest, misattributed = 0.0, 0
        base = base_doc(field, "slurm", "./app")
        for unit in UNITS:
            value = (unit * (size // len(unit) + 1))[:size - 1] + "!"
            doc = put(base, field, kind, value)
            start = time.perf_counter()
            found = dsl.problems(doc)
            slowest = max(slowest, time.perf_counter() - start)
            if checked and not at_bound and not any(owns(p.path, field, kind) for p in found):
                misattributed += 1
        print(json.dumps({"field": field, "kind": kind, "inputs": len(UNITS), "length": size, "seconds": slowest,
                          "checked": checked, "misattributed": misattributed}), flush=True)


if __name__ == "__main__":
    main(sys.argv)
