"""Storage operations shared by the CLI commands and the app: projects, keys, goldens."""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentsproof.core.errors import InputError
from agentsproof.server.models import ApiKey, Golden, Project, utcnow

KEY_PREFIX = "ap_"
SLUG_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def new_id(nbytes: int = 12) -> str:
    """An unguessable id (hex, 8*nbytes bits of randomness)."""
    return secrets.token_hex(nbytes)


def hash_key(key: str) -> str:
    """The SHA-256 hex digest under which an API key is stored (the key itself never is)."""
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


def check_slug(slug: str, what: str = "--project") -> str:
    """``slug`` when it is a valid project or suite slug; InputError naming ``what`` otherwise."""
    if not slug or len(slug) > 100 or not set(slug) <= SLUG_CHARS or slug[0] in ".-_":
        raise InputError("command line", what, f"invalid slug {slug!r}: use letters, digits, '.', '_' and '-'")
    return slug


def get_or_create_project(s: Session, slug: str) -> Project:
    """The project ``slug``, added to the session if it does not exist yet."""
    p = s.scalar(select(Project).where(Project.slug == slug))
    if p is None:
        p = Project(slug=slug)
        s.add(p)
        s.flush()
    return p


def create_key(s: Session, slug: str) -> str:
    """A new API key for ``slug`` (project created if new). Only its hash is stored."""
    project = get_or_create_project(s, check_slug(slug))
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    s.add(ApiKey(project_id=project.id, prefix=key[:10], key_hash=hash_key(key)))
    s.commit()
    return key


def list_keys(s: Session) -> list[dict[str, Any]]:
    """Every API key (id, project, prefix, created_at, revoked), never the key itself."""
    rows = s.execute(select(ApiKey, Project.slug).join(Project, Project.id == ApiKey.project_id).order_by(ApiKey.id)).all()
    return [{"id": k.id, "project": slug, "prefix": k.prefix, "created_at": k.created_at, "revoked": k.revoked_at is not None} for k, slug in rows]


def revoke_key(s: Session, key_id: str) -> bool:
    """Revoke by numeric id, by prefix or by the key itself."""
    q = select(ApiKey)
    if key_id.isdigit():
        q = q.where(ApiKey.id == int(key_id))
    elif key_id.startswith(KEY_PREFIX) and len(key_id) > 20:
        q = q.where(ApiKey.key_hash == hash_key(key_id))
    else:
        q = q.where(ApiKey.prefix == key_id)
    keys = s.scalars(q).all()
    if len(keys) != 1:
        return False
    if keys[0].revoked_at is None:
        keys[0].revoked_at = utcnow()
    s.commit()
    return True


def project_for_key(s: Session, key: str | None) -> Project | None:
    """The project of an API key that exists and is not revoked; None for any other key."""
    if not key or len(key) > 200:
        return None
    k = s.scalar(select(ApiKey).where(ApiKey.key_hash == hash_key(key), ApiKey.revoked_at.is_(None)))
    return s.get(Project, k.project_id) if k else None


# ---- goldens -------------------------------------------------------------------------

_LIST_FIELDS = ("success_criteria", "trace_assertions", "failure_modes", "custom_grader_ids")
_TEXT_FIELDS = ("name", "goal", "expected_behavior")
_CAMEL = {
    "expectedOutput": "expected_output",
    "expectedBehavior": "expected_behavior",
    "successCriteria": "success_criteria",
    "traceAssertions": "trace_assertions",
    "failureModes": "failure_modes",
    "customGraderIds": "custom_grader_ids",
}
GOLDEN_KEYS = {"id", "input", "expected_output", *_LIST_FIELDS, *_TEXT_FIELDS}


def normalise_golden(obj: Any, source: str) -> dict[str, Any]:
    """Validate one golden object (snake_case or camelCase keys) into snake_case fields."""
    from agentsproof.server.protocol import bad_text

    if not isinstance(obj, dict):
        raise InputError(source, "golden", "expected a JSON object")
    found = bad_text(obj)
    if found:
        field, _, why = found.partition(": ")
        raise InputError(source, field, why)
    out: dict[str, Any] = {}
    for k, v in obj.items():
        k = _CAMEL.get(k, k)
        if k not in GOLDEN_KEYS:
            raise InputError(source, k, f"unknown golden field; expected one of {', '.join(sorted(GOLDEN_KEYS))}")
        out[k] = v
    for k in _TEXT_FIELDS:
        if out.get(k) is not None and not isinstance(out[k], str):
            raise InputError(source, k, "expected a string")
    for k in _LIST_FIELDS:
        v = out.get(k)
        if v is not None and (not isinstance(v, list) or not all(isinstance(x, str) for x in v)):
            raise InputError(source, k, "expected a list of strings")
    if out.get("id") is not None and (not isinstance(out["id"], str) or not out["id"] or len(out["id"]) > 40):
        raise InputError(source, "id", "expected a non-empty string of at most 40 characters")
    if "input" not in out and not out.get("goal"):
        raise InputError(source, "input", "a golden needs an input or a goal")
    out.setdefault("name", (out.get("goal") or str(out.get("input")))[:80])
    return out


def read_goldens_jsonl(path: Path) -> list[dict[str, Any]]:
    """The normalised goldens of a JSONL file, one object per line; InputError for a bad line or none at all."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), "file", f"cannot read: {err}") from None
    goldens = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"{path}", f"line {n}", f"invalid JSON: {err.msg}") from None
        goldens.append(normalise_golden(obj, f"{path}:{n}"))
    if not goldens:
        raise InputError(str(path), "file", "no golden found (one JSON object per line)")
    return goldens


def golden_of(s: Session, project_id: int, gid: str | None) -> Golden | None:
    """The project's golden with id ``gid``; ids are per project, so another project's
    golden of that id is no answer at all (exactly as for an id that does not exist)."""
    if not gid or len(gid) > 40:
        return None
    return s.scalar(select(Golden).where(Golden.project_id == project_id, Golden.id == gid))


def upsert_golden(s: Session, project: Project, suite: str | None, fields: dict[str, Any], approve: bool | None = None) -> Golden:
    """Create the golden ``fields["id"]`` (a new id when absent) or update it, setting its suite and approval when given."""
    gid = fields.get("id")
    g = golden_of(s, project.id, gid)
    if g is None:
        g = Golden(id=gid or new_id(8), project_id=project.id, approved=False, name="")
        s.add(g)
    for k, v in fields.items():
        if k != "id":
            setattr(g, k, v)
    if suite is not None:
        g.suite_slug = suite
    if approve is not None:
        g.approved = approve
    g.updated_at = utcnow()
    s.flush()
    return g


def golden_dict(g: Golden) -> dict[str, Any]:
    """A golden as the API and the pages show it: every field, lists never None."""
    return {
        "id": g.id,
        "name": g.name,
        "suite": g.suite_slug,
        "approved": g.approved,
        "input": g.input,
        "goal": g.goal,
        "expected_output": g.expected_output,
        "expected_behavior": g.expected_behavior,
        **{k: list(getattr(g, k) or []) for k in _LIST_FIELDS},
    }


def fmt_time(t: datetime | str | None) -> str:
    """A stored time as ``YYYY-MM-DD HH:MM:SS`` (an old row's text as it is, None as empty)."""
    if t is None:
        return ""
    if isinstance(t, str):
        return t
    return t.strftime("%Y-%m-%d %H:%M:%S")
