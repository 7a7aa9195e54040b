"""The schema file in schemas/ is the export of the schema the validator uses."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jsonschema
import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils.schema import SCHEMA, SITE_SCHEMA

FILES = [([], "modak-dsl.schema.json", SCHEMA), (["--site"], "modak-site.schema.json", SITE_SCHEMA)]


@pytest.mark.parametrize("args, name, schema", FILES)
def test_schema_file_is_current(args, name, schema):
    del schema
    exported = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "export_schema.py")] + args,
                              capture_output=True, text=True, check=True).stdout
    with open(os.path.join(ROOT, "schemas", name)) as handle:
        assert handle.read() == exported, "run `make schema` after changing plugins/module_utils/schema.py"


@pytest.mark.parametrize("args, name, schema", FILES)
def test_schema_is_valid_draft_2020_12(args, name, schema):
    del args
    jsonschema.Draft202012Validator.check_schema(schema)
    with open(os.path.join(ROOT, "schemas", name)) as handle:
        assert json.load(handle)["$schema"] == "https://json-schema.org/draft/2020-12/schema"
