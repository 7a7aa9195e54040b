"""The schema file in schemas/ is the export of the schema the validator uses."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jsonschema
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils.schema import SCHEMA


def test_schema_file_is_current():
    exported = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "export_schema.py")],
                              capture_output=True, text=True, check=True).stdout
    with open(os.path.join(ROOT, "schemas", "modak-dsl.schema.json")) as handle:
        assert handle.read() == exported, "run `make schema` after changing plugins/module_utils/schema.py"


def test_schema_is_valid_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    with open(os.path.join(ROOT, "schemas", "modak-dsl.schema.json")) as handle:
        assert json.load(handle)["$schema"] == "https://json-schema.org/draft/2020-12/schema"
