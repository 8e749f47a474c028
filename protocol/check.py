#!/usr/bin/env python3
"""Checks the published protocol with an independent validator (the `jsonschema` package):
every schema is a valid draft 2020-12 schema, every golden example is valid against the schema
of its `type`, the same example with a field of a later release added to every object is still
valid (receivers ignore unknown fields), and an example without its version or with another
`type` is not. Exits non-zero and names the file on any failure."""

import copy
import json
import pathlib
import sys

from jsonschema import Draft202012Validator

HERE = pathlib.Path(__file__).resolve().parent
FREE_FORM = {"parameters", "headers", "default", "min", "max"}


def with_unknown_fields(value):
    if isinstance(value, dict):
        for key, child in value.items():
            if key not in FREE_FORM:
                with_unknown_fields(child)
        value["x_later_release"] = {"nested": {"deeper": [1, 2]}}
    elif isinstance(value, list):
        for item in value:
            with_unknown_fields(item)


def main():
    schemas = {}
    for path in sorted((HERE / "schemas").glob("*.json")):
        schema = json.loads(path.read_text())
        Draft202012Validator.check_schema(schema)
        schemas[path.stem] = Draft202012Validator(schema)
    failures = []
    examples = sorted((HERE / "examples").glob("*.json"))
    seen = set()
    for path in examples:
        message = json.loads(path.read_text())
        kind = message.get("type")
        validator = schemas.get(kind)
        if validator is None:
            failures.append(f"{path.name}: no schema for type {kind!r}")
            continue
        seen.add(kind)
        for error in validator.iter_errors(message):
            failures.append(f"{path.name}: {error.json_path}: {error.message}")
        later = copy.deepcopy(message)
        with_unknown_fields(later)
        later["v"] = 99
        for error in validator.iter_errors(later):
            failures.append(f"{path.name} with fields of a later release: {error.json_path}: {error.message}")
        missing = {k: v for k, v in message.items() if k != "v"}
        if validator.is_valid(missing):
            failures.append(f"{path.name}: valid without its version `v`")
        wrong = dict(message, type=kind + "-of-no-release")
        if validator.is_valid(wrong):
            failures.append(f"{path.name}: valid with another `type`")
    for kind in schemas:
        if kind not in seen:
            failures.append(f"schemas/{kind}.json has no example")
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"protocol: {len(schemas)} schemas, {len(examples)} examples checked; "
          f"{len(examples) * 2 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
