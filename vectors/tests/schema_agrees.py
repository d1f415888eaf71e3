#!/usr/bin/env python3
"""Cross-check of the JSON Schema file with the C++ loader's verdicts (optional: needs the
python `jsonschema` package). The committed corpus and the passing/failing test files must be
schema-valid; every file under malformed/schema/ must be rejected by the schema too; the files
under malformed/rules/ break only rules JSON Schema cannot state (the schema's $comment), so
the schema accepts those that are JSON at all.

usage: schema_agrees.py SCHEMA GOLDEN_DIR DATA_DIR"""
import glob
import json
import sys

import jsonschema

schema_path, golden, data = sys.argv[1:4]
schema = json.load(open(schema_path))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
bad = 0


def verdict(path):
    try:
        doc = json.load(open(path))
    except ValueError:
        return None
    return next(iter(validator.iter_errors(doc)), None)


for path in sorted(glob.glob(golden + "/*.json") + glob.glob(data + "/pass/*.json") +
                   glob.glob(data + "/fail/*.json") + glob.glob(data + "/lean-format/*.json") +
                   glob.glob(data + "/malformed/rules/*.json")):
    err = verdict(path)
    if err is not None:
        print("schema rejects", path, ":", err.message[:200])
        bad += 1
for path in sorted(glob.glob(data + "/malformed/schema/*.json")):
    if verdict(path) is None:
        print("schema accepts malformed", path)
        bad += 1
print("schema cross-check:", "ok" if not bad else "%d disagreements" % bad)
sys.exit(1 if bad else 0)
