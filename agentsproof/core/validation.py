"""Validation messages: a pydantic error or a YAML parse error as (field, message) for the
one line a user sees (``FILE: FIELD: message``, exit 30)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from agentsproof.core.errors import InputError


class FieldError(ValueError):
    """A validator error about a named field (relative to the model that raises it)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def format_validation_error(exc: ValidationError, union_tags: Sequence[str] = ()) -> tuple[str, str]:
    """The first error of a pydantic ValidationError as (dotted field path, message).

    ``union_tags`` are the ``type`` names of a tagged union in the model (the grader types of
    an eval file): pydantic puts the tag into an error's location after ``graders.<n>``, and
    an unknown or missing ``type`` is answered with the list of them."""
    types = ", ".join(repr(t) for t in union_tags)
    errors = exc.errors()
    # An unknown key explains the other errors it causes (a misspelt required field is
    # also "missing"), so report it first.
    err = next((e for e in errors if e.get("type") == "extra_forbidden"), errors[0])
    raw = [str(p) for p in err.get("loc", ())]
    loc = [p for i, p in enumerate(raw) if not _is_union_tag(raw, i, union_tags)]
    field = ".".join(_join_loc(loc)) or "(top level)"
    kind = err.get("type", "")
    cause = (err.get("ctx") or {}).get("error")
    msg = err.get("msg", "invalid value")
    if kind == "extra_forbidden":
        msg = "unknown key"
    elif kind == "missing":
        msg = "required field is missing"
    elif kind == "union_tag_invalid":
        field += ".type"
        tag = (err.get("ctx") or {}).get("tag")
        msg = f"unknown grader type {tag!r}; use one of " + types
    elif kind == "union_tag_not_found":
        field += ".type"
        msg = "required field is missing; use one of " + types
    elif isinstance(cause, FieldError):
        field = (field + "." + cause.field if field != "(top level)" else cause.field).replace(".[", "[")
        msg = str(cause)
    elif msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    return field, msg


def _is_union_tag(loc: list[str], i: int, union_tags: Sequence[str]) -> bool:
    """True for the grader-type tag pydantic puts after ``graders.<n>`` in an error location."""
    return loc[i] in union_tags and i >= 2 and loc[i - 1].isdigit() and loc[i - 2] == "graders"


def _join_loc(loc: list[str]) -> list[str]:
    out: list[str] = []
    for part in loc:
        if part.isdigit() and out:
            out[-1] = f"{out[-1]}[{part}]"
        else:
            out.append(part)
    return out


def read_yaml(path: Path) -> Any:
    """An eval file parsed strictly (regular file, size cap, no duplicate keys, bounded)."""
    from agentsproof.core.inputs import display, read_yaml_file

    if not path.exists() and not path.is_symlink():
        raise InputError(display(path), None, "file not found")
    if path.is_dir():
        raise InputError(display(path), None, "is a directory, expected an eval.yaml file")
    return read_yaml_file(path)


def yaml_problem(exc: yaml.YAMLError) -> tuple[str, str]:
    """(where, what) of a YAML parse error, e.g. ("line 3", "mapping values are not allowed here")."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}" if mark is not None else "YAML"
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return where, problem
