"""Tool schemas a client accepts and can afford (issue 24), read from the real server through
the official Python MCP client:

- every input and output schema of `tools/list` is valid JSON Schema 2020-12 (checked against
  the metaschema by python `jsonschema`) and carries no `format` outside the standard's own
  vocabulary; the same schemas compile in Ajv's strict mode (the validator of the TypeScript MCP
  SDK and of Claude Code, which logs `unknown format "uint32" ignored` for each such field);
- the `tools/list` answer, which clients send to the model on every turn, is at most 15 KB
  (its size is printed);
- results still validate against the published output schemas (the SDK checks every
  structured result against its tool's output schema; here also with `jsonschema` directly).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from lsm_fixtures import *  # noqa: E402,F401,F403
from lsm_mcp import REPO, RawStdio, headless_env  # noqa: E402

MAX_TOOLS_LIST_BYTES = 15 * 1024
NODE_MODULES = REPO / "tests" / "conformance" / "node_modules"
NODE = NODE_MODULES / ".bin" / "node"

# JSON Schema 2020-12 Validation, section 7.3: the formats the standard defines.
STANDARD_FORMATS = {
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
    "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template",
    "json-pointer", "relative-json-pointer", "regex",
}
# Keywords whose value is one schema, a list of schemas, or a map of name -> schema.
ONE_SCHEMA = {"items", "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "not",
              "if", "then", "else", "contains", "propertyNames"}
SCHEMA_LISTS = {"anyOf", "oneOf", "allOf", "prefixItems"}
SCHEMA_MAPS = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}

AJV_CHECK = """
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
const require = createRequire(process.env.LSM_NODE_MODULES + "/");
const Ajv2020 = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats").default;
const out = {};
for (const [where, schema] of Object.entries(JSON.parse(readFileSync(0, "utf8")))) {
  const problems = [];
  const logger = { log() {}, warn: (...a) => problems.push(a.join(" ")), error: (...a) => problems.push(a.join(" ")) };
  // strict: unknown keywords and formats are errors; union types ("string" or "null") are standard.
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true, logger });
  addFormats(ajv);
  try { ajv.compile(schema); } catch (e) { problems.push(String(e.message || e)); }
  out[where] = problems;
}
console.log(JSON.stringify(out));
"""


def formats_in(schema: dict, path: str = "#") -> list[tuple[str, str]]:
    """(path, format) of every `format` keyword, following only schema positions (a property
    that is *named* "format" is not the keyword)."""
    found = []
    if not isinstance(schema, dict):
        return found
    if isinstance(schema.get("format"), str):
        found.append((path, schema["format"]))
    for key, value in schema.items():
        if key in ONE_SCHEMA and isinstance(value, dict):
            found += formats_in(value, f"{path}/{key}")
        elif key in SCHEMA_LISTS and isinstance(value, list):
            for i, sub in enumerate(value):
                found += formats_in(sub, f"{path}/{key}/{i}")
        elif key in SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                found += formats_in(sub, f"{path}/{key}/{name}")
    return found


def all_schemas(tools) -> dict[str, dict]:
    out = {}
    for t in tools:
        out[f"{t.name}.inputSchema"] = t.input_schema
        assert t.output_schema, f"{t.name} has no output schema"
        out[f"{t.name}.outputSchema"] = t.output_schema
    return out


def test_the_walk_finds_formats_where_they_are_keywords():
    schema = {"properties": {"format": {"type": "string"}, "n": {"type": "integer", "format": "uint32"}},
              "$defs": {"D": {"anyOf": [{"format": "int64"}, {"type": "null"}]}}}
    assert sorted(formats_in(schema)) == [("#/$defs/D/anyOf/0", "int64"), ("#/properties/n", "uint32")]


def test_every_schema_is_strict_json_schema(lsm_stdio):
    schemas = all_schemas(lsm_stdio.list_tools())
    assert len(schemas) == 6, list(schemas)
    problems = []
    for where, schema in schemas.items():
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as e:
            problems.append(f"{where}: not valid against the 2020-12 metaschema: {e.message}")
        problems += [f"{where}: non-standard format {fmt!r} at {path}"
                     for path, fmt in formats_in(schema) if fmt not in STANDARD_FORMATS]
    assert not problems, "\n".join(problems)


def test_every_schema_compiles_in_ajv_strict_mode(lsm_stdio):
    if not NODE.exists() or not (NODE_MODULES / "ajv").exists():
        pytest.fail("Node 22 and ajv (tests/conformance/node_modules) are missing: run tests/setup.sh")
    schemas = all_schemas(lsm_stdio.list_tools())
    r = subprocess.run([str(NODE), "--input-type=module", "-e", AJV_CHECK], input=json.dumps(schemas),
                       capture_output=True, text=True, timeout=60,
                       env={"LSM_NODE_MODULES": str(NODE_MODULES), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    verdicts = json.loads(r.stdout)
    assert set(verdicts) == set(schemas)
    bad = {where: p for where, p in verdicts.items() if p}
    assert not bad, json.dumps(bad, indent=1)


def test_tools_list_fits_in_15_kb():
    with RawStdio(env=headless_env(), args=["--web", "off"]) as raw:
        raw.send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}))
        answer = raw.wait_id(7)
    assert "result" in answer, answer
    message = len(json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode())
    result = len(json.dumps(answer["result"], separators=(",", ":"), ensure_ascii=False).encode())
    per_tool = {t["name"]: len(json.dumps(t, separators=(",", ":"), ensure_ascii=False).encode())
                for t in answer["result"]["tools"]}
    print(f"\ntools/list: {message:,} bytes as sent ({result:,} the result; per tool {per_tool}); "
          f"at most {MAX_TOOLS_LIST_BYTES:,}")
    assert message <= MAX_TOOLS_LIST_BYTES, (message, per_tool)


def test_results_validate_against_the_published_output_schema(lsm_stdio):
    tools = {t.name: t for t in lsm_stdio.list_tools()}
    # gui_list answers with or without a desktop (machines are listed either way).
    listed = lsm_stdio.call("gui_list", {})
    assert not listed.is_error, listed
    validator = jsonschema.Draft202012Validator(tools["gui_list"].output_schema,
                                                format_checker=jsonschema.FormatChecker())
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(listed.structured_content)]
    assert not errors, errors
    windows = listed.structured_content["windows"]
    if not windows:
        return
    state = lsm_stdio.call("gui_state", {"window_id": windows[0]["window_id"], "screenshot": True})
    if state.is_error:
        return  # a window that went away: nothing more to check here
    validator = jsonschema.Draft202012Validator(tools["gui_state"].output_schema,
                                                format_checker=jsonschema.FormatChecker())
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(state.structured_content)]
    assert not errors, errors
