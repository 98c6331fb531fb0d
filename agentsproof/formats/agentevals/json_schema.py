"""promptfoo's ``is-json`` with a ``value``: the answer must be JSON that follows that JSON Schema.

::

    - type: is-json
      value:                       # or file://schema.json
        type: object
        required: [color, countries]
        properties: {color: {type: string}, countries: {type: array, items: {type: string}}}

Checked by a script grader (standard library only) that implements the JSON Schema keywords
such schemas use: ``type``, ``enum``, ``const``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``minItems`` / ``maxItems``, ``uniqueItems``,
``minLength`` / ``maxLength``, ``pattern``, ``minimum`` / ``maximum`` (and the exclusive
ones), ``multipleOf``, ``allOf`` / ``anyOf`` / ``oneOf`` / ``not``, local ``$ref``
(``#/definitions/…``, ``#/$defs/…``). A keyword outside that list is refused by name when the
file loads, never ignored.
"""

from __future__ import annotations

import json
import sys
from typing import Any

KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "$ref",
        "definitions",
        "$defs",
        # annotations: they check nothing
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$id",
        "$comment",
        "format",
        "nullable",
        "strict",
        "name",
        "schema",
    }
)

CHECK = r"""
import json, re, sys
schema = json.loads(sys.argv[1])
negate = sys.argv[2] == "1"
text = sys.stdin.read()
try:
    doc = json.loads(text)
except ValueError as err:
    if negate:
        sys.exit(0)
    print(f"not valid JSON: {err}", file=sys.stderr)
    sys.exit(1)
if isinstance(schema, dict) and "schema" in schema and "type" not in schema and isinstance(schema["schema"], dict):
    schema = schema["schema"]  # an OpenAI response_format json_schema block
ROOT = schema
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}

def is_type(v, t):
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool) or isinstance(v, float) and v.is_integer()
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, TYPES.get(t, object))

def resolve(ref):
    node = ROOT
    for part in ref.lstrip("#/").split("/"):
        if part:
            node = node[part.replace("~1", "/").replace("~0", "~")]
    return node

def check(v, s, at):
    if s is True or s == {}:
        return None
    if s is False:
        return f"{at}: no value is allowed"
    if "$ref" in s:
        bad = check(v, resolve(s["$ref"]), at)
        if bad:
            return bad
    t = s.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(is_type(v, x) for x in types) and not (s.get("nullable") and v is None):
            return f"{at}: expected {' or '.join(types)}, got {type(v).__name__}"
    if "enum" in s and v not in s["enum"]:
        return f"{at}: {v!r} is not one of {s['enum']}"
    if "const" in s and v != s["const"]:
        return f"{at}: {v!r} is not {s['const']!r}"
    if isinstance(v, dict):
        for k in s.get("required", []):
            if k not in v:
                return f"{at}: missing required property {k!r}"
        props = s.get("properties", {})
        for k, sub in props.items():
            if k in v:
                bad = check(v[k], sub, f"{at}.{k}")
                if bad:
                    return bad
        extra = s.get("additionalProperties", True)
        for k in v:
            if k not in props:
                if extra is False:
                    return f"{at}: property {k!r} is not allowed"
                if isinstance(extra, dict):
                    bad = check(v[k], extra, f"{at}.{k}")
                    if bad:
                        return bad
    if isinstance(v, list):
        if "minItems" in s and len(v) < s["minItems"]:
            return f"{at}: {len(v)} items, fewer than {s['minItems']}"
        if "maxItems" in s and len(v) > s["maxItems"]:
            return f"{at}: {len(v)} items, more than {s['maxItems']}"
        if s.get("uniqueItems") and len({json.dumps(x, sort_keys=True) for x in v}) < len(v):
            return f"{at}: items are not unique"
        if isinstance(s.get("items"), dict):
            for i, x in enumerate(v):
                bad = check(x, s["items"], f"{at}[{i}]")
                if bad:
                    return bad
    if isinstance(v, str):
        if "minLength" in s and len(v) < s["minLength"]:
            return f"{at}: shorter than {s['minLength']}"
        if "maxLength" in s and len(v) > s["maxLength"]:
            return f"{at}: longer than {s['maxLength']}"
        if "pattern" in s and not re.search(s["pattern"], v):
            return f"{at}: {v!r} does not match {s['pattern']!r}"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if "minimum" in s and v < s["minimum"]:
            return f"{at}: {v} < {s['minimum']}"
        if "maximum" in s and v > s["maximum"]:
            return f"{at}: {v} > {s['maximum']}"
        if "exclusiveMinimum" in s and not isinstance(s["exclusiveMinimum"], bool) and v <= s["exclusiveMinimum"]:
            return f"{at}: {v} <= {s['exclusiveMinimum']}"
        if "exclusiveMaximum" in s and not isinstance(s["exclusiveMaximum"], bool) and v >= s["exclusiveMaximum"]:
            return f"{at}: {v} >= {s['exclusiveMaximum']}"
        if "multipleOf" in s and (v / s["multipleOf"]) % 1:
            return f"{at}: {v} is not a multiple of {s['multipleOf']}"
    for sub in s.get("allOf", []):
        bad = check(v, sub, at)
        if bad:
            return bad
    if "anyOf" in s and all(check(v, sub, at) for sub in s["anyOf"]):
        return f"{at}: matches none of anyOf"
    if "oneOf" in s and sum(check(v, sub, at) is None for sub in s["oneOf"]) != 1:
        return f"{at}: does not match exactly one of oneOf"
    if "not" in s and check(v, s["not"], at) is None:
        return f"{at}: matches the schema under not"
    return None

bad = check(doc, schema, "$")
if negate:
    if bad:
        sys.exit(0)
    print("the answer is JSON that follows the schema (the assertion is negated)", file=sys.stderr)
    sys.exit(1)
if bad:
    print(f"JSON does not follow the schema: {bad}", file=sys.stderr)
    sys.exit(1)
print("valid JSON following the schema")
"""


def unknown_keyword(schema: Any, at: str = "value") -> tuple[str, str] | None:
    """The first keyword of ``schema`` the check does not implement, and where it is (None: all known)."""
    if isinstance(schema, bool):
        return None
    if not isinstance(schema, dict):
        return (at, "a schema is a mapping")
    for key, value in schema.items():
        where = f"{at}.{key}"
        if key not in KEYWORDS:
            return (where, f"JSON Schema keyword {key!r} is not checked")
        if key in ("properties", "definitions", "$defs") and isinstance(value, dict):
            for name, sub in value.items():
                found = unknown_keyword(sub, f"{where}.{name}")
                if found:
                    return found
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            found = unknown_keyword(value, where)
            if found:
                return found
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            for i, sub in enumerate(value):
                found = unknown_keyword(sub, f"{where}[{i}]")
                if found:
                    return found
        elif key == "schema" and isinstance(value, dict) and "type" not in schema:
            found = unknown_keyword(value, where)
            if found:
                return found
    return None


BOUND_TYPES: dict[str, set[str]] = {"cost": {"threshold"}, "latency": {"threshold"}}
JSON_TYPES: dict[str, set[str]] = {"is-json": {"value"}, "is-sql": {"value"}}
"""Checks of the answer's syntax, each a confined script: is-json (a JSON Schema value), is-sql (is_sql_check.py)."""
SQL_DIALECTS = {
    # node-sql-parser's databaseType (promptfoo's is-sql) → sqlglot's dialect
    "mysql": "mysql",
    "mariadb": "mysql",
    "postgresql": "postgres",
    "postgres": "postgres",
    "bigquery": "bigquery",
    "db2": "",
    "hive": "hive",
    "flinksql": "spark",
    "snowflake": "snowflake",
    "redshift": "redshift",
    "sqlite": "sqlite",
    "transactsql": "tsql",
    "tsql": "tsql",
    "athena": "athena",
    "trino": "trino",
    "noql": "",
}


def sql_check(builder: Any, where: str, entry: dict[str, Any], negate: bool) -> list[str]:
    """The script an ``is-sql`` assertion runs (promptfoo's value: ``databaseType``, default MySQL,
    ``allowedTables``, ``allowedColumns``); InputError (through the builder) naming a bad field."""
    from pathlib import Path

    value = entry.get("value") or {}
    if not isinstance(value, dict):
        raise builder.err(f"{where}.value", "must be a mapping (databaseType, allowedTables, allowedColumns), as promptfoo's is-sql takes")
    extra = sorted(set(value) - {"databaseType", "allowedTables", "allowedColumns"})
    if extra:
        raise builder.err(f"{where}.value.{extra[0]}", "unknown key; expected one of allowedColumns, allowedTables, databaseType")
    db = value.get("databaseType", "MySQL")
    if not isinstance(db, str) or db.lower() not in SQL_DIALECTS:
        raise builder.err(f"{where}.value.databaseType", f"{db!r}: expected one of {', '.join(sorted(SQL_DIALECTS))} (node-sql-parser's names)")
    lists = []
    for key in ("allowedTables", "allowedColumns"):
        got = value.get(key)
        if got is not None and (not isinstance(got, list) or not all(isinstance(x, str) for x in got)):
            raise builder.err(f"{where}.value.{key}", "must be a list of strings ({type}::{db or table}::{name}, as node-sql-parser names them)")
        lists.append(json.dumps(got))
    program = Path(__file__).with_name("is_sql_check.py").read_text(encoding="utf-8")
    return [sys.executable, "-c", program, SQL_DIALECTS[db.lower()], *lists, "1" if negate else "0"]


"""promptfoo's ``cost`` (USD) and ``latency`` (ms): upper bounds on what the trial recorded."""


def json_check(builder: Any, where: str, entry: dict[str, Any], negate: bool) -> list[str]:
    """The script an ``is-json`` assertion runs: the answer parses as JSON (and, with a ``value``, follows that
    JSON Schema, inline or ``file://schema.json|yaml``); InputError (through the builder) naming a keyword it does not check."""
    from agentsproof.formats.agentevals.negation import IS_JSON, IS_NOT_JSON

    value = entry.get("value")
    if value is None:
        return [sys.executable, "-c", IS_NOT_JSON if negate else IS_JSON]
    if isinstance(value, str) and value.strip().startswith("file://"):
        from agentsproof.core.validation import read_yaml
        from agentsproof.formats.agentevals.parse import attached

        value = read_yaml(attached(builder.src, f"{where}.value", value.strip().removeprefix("file://"), builder.path))
    found = unknown_keyword(value, "value")
    if found is not None:
        raise builder.err(f"{where}.{found[0]}", f"{found[1]}: give the schema's other keywords, or check it with a python assertion")
    return [sys.executable, "-c", CHECK, json.dumps(value), "1" if negate else "0"]


def bound_grader(builder: Any, where: str, entry: dict[str, Any], kind: str, weight: float, negate: bool) -> Any:
    """promptfoo's ``cost`` / ``latency`` as the execution_metrics grader's ``max_cost_usd`` / ``max_duration_ms``
    (a cost or duration that was not recorded fails its check, saying so)."""
    from agentsproof.grading.execution_metrics import ExecutionMetricsGrader

    if negate:
        raise builder.err(f"{where}.type", f"negating {kind!r} is not supported: it is an upper bound")
    limit = entry.get("threshold")
    if isinstance(limit, bool) or not isinstance(limit, int | float) or limit < 0:
        raise builder.err(f"{where}.threshold", "must be a number of at least 0 (" + ("USD" if kind == "cost" else "milliseconds") + ")")
    field = "max_cost_usd" if kind == "cost" else "max_duration_ms"
    return ExecutionMetricsGrader.model_validate({"type": "execution_metrics", field: float(limit), "weight": weight})


def syntax_check(builder: Any, where: str, entry: dict[str, Any], kind: str, negate: bool) -> list[str]:
    """The script of an ``is-json`` or ``is-sql`` assertion."""
    return (json_check if kind == "is-json" else sql_check)(builder, where, entry, negate)
