"""Print the DSL's JSON Schema, or with --site the site profile's (the source is plugins/module_utils/schema.py)."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "collections"))

from ansible_collections.sodalite.modak.plugins.module_utils.schema import SCHEMA, SITE_SCHEMA  # noqa: E402

sys.stdout.write(json.dumps(SITE_SCHEMA if sys.argv[1:] == ["--site"] else SCHEMA, indent=2, sort_keys=True,
                            ensure_ascii=True) + "\n")
