"""``/api/docs``: the OpenAPI document rendered on the server as one HTML page.

No script and nothing from a CDN (the page works offline and under the pages' CSP): every
route with its parameters, body and answers, then every schema with its fields, types,
constraints and descriptions. The machine-readable document stays at ``/api/openapi.json``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

router = APIRouter(include_in_schema=False)
METHODS = ("get", "post", "put", "patch", "delete")
CONSTRAINTS = ("minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "pattern", "default")


def type_of(schema: Any) -> str:
    """A schema's type in words: ``string``, ``array of Golden``, ``integer | null``."""
    if not isinstance(schema, dict) or not schema:
        return "any"
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return " | ".join(dict.fromkeys(type_of(s) for s in schema[key]))
    if "enum" in schema:
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {type_of(schema.get('items'))}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {type_of(schema['additionalProperties'])}"
    return str(kind)


def _constraints(schema: dict[str, Any]) -> dict[str, Any]:
    """A field's constraints, those of an optional field's alternatives (``anyOf``) included."""
    found = {c: schema[c] for c in CONSTRAINTS if c in schema}
    for alt in schema.get("anyOf") or schema.get("oneOf") or []:
        if isinstance(alt, dict):
            found.update({c: alt[c] for c in CONSTRAINTS if c in alt and c not in found})
    return found


def _body(op: dict[str, Any]) -> str:
    content = (op.get("requestBody") or {}).get("content") or {}
    return "; ".join(f"{type_of(v.get('schema'))} ({mime})" for mime, v in content.items())


def _responses(op: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    for status, resp in (op.get("responses") or {}).items():
        content = (resp.get("content") or {}).get("application/json") or {}
        text = resp.get("description") or ""
        if content.get("schema"):
            text = f"{text}: {type_of(content['schema'])}" if text else type_of(content["schema"])
        out.append({"status": str(status), "text": text})
    return out


def context(doc: dict[str, Any]) -> dict[str, Any]:
    """What the page shows, from an OpenAPI document."""
    ops = []
    for path, item in (doc.get("paths") or {}).items():
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            params = [
                {"name": p.get("name"), "where": p.get("in"), "type": type_of(p.get("schema")), "required": bool(p.get("required"))}
                for p in op.get("parameters") or []
            ]
            ops.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "anchor": op.get("operationId") or f"{method}-{path}",
                    "summary": op.get("summary") or "",
                    "description": (op.get("description") or "").strip(),
                    "params": params,
                    "body": _body(op),
                    "responses": _responses(op),
                }
            )
    schemas = []
    for name, schema in sorted(((doc.get("components") or {}).get("schemas") or {}).items()):
        required = set(schema.get("required") or [])
        fields = []
        for fname, f in (schema.get("properties") or {}).items():
            cons = ", ".join(f"{c} {v!r}" for c, v in _constraints(f).items())
            fields.append({"name": fname, "type": type_of(f), "required": fname in required, "constraints": cons})
        schemas.append({"name": name, "description": (schema.get("description") or "").strip(), "fields": fields})
    info = doc.get("info") or {}
    return {"title": info.get("title") or "API", "version": info.get("version") or "", "ops": ops, "schemas": schemas}


@router.get("/api/docs", response_class=HTMLResponse)
def api_docs(request: Request) -> HTMLResponse:
    """``GET /api/docs``: the server's OpenAPI document as an HTML page."""
    from agentsproof.server.pages import render

    return render("api_docs.html", **context(request.app.openapi()))
