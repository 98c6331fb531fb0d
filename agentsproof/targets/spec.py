"""What every target's targets.yaml entry shares: the file's name, ``${VAR}`` references,
paths inside the workspace, and a defined target (:class:`TargetDef`)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator

from agentsproof.core.errors import InputError
from agentsproof.core.scrub import register_var
from agentsproof.model.graders import workspace_glob

if TYPE_CHECKING:
    from agentsproof.model.environment import Environment

TARGETS_FILE = "targets.yaml"
MAX_TARGET_TIMEOUT = 86_400.0
"""One day: the longest timeout a target may set."""
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""``${NAME}``: an environment variable, expanded when the run starts."""


def relative(value: str | None) -> str | None:
    """``value`` checked as a path or glob inside the workspace (ValueError when it leaves it); None stays None."""
    if value is None:
        return None
    try:
        return workspace_glob(value)
    except ValueError as exc:
        raise ValueError(str(exc)) from None


def http_url(value: str) -> str:
    """``value`` when it is an http(s) URL a client can connect to; ValueError saying what
    is wrong (without quoting it: once ``${VAR}`` is expanded it may hold a secret).
    A value still holding a ``${VAR}`` reference is checked once it is expanded."""
    from urllib.parse import urlsplit

    if ENV_REF.search(value):
        return value
    if any(ch.isspace() or not ch.isprintable() for ch in value):
        raise ValueError("is not a URL: it holds a space or a control character")
    try:
        parts = urlsplit(value)
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError as exc:
        what = str(exc)
        if "range" in what:
            raise ValueError(f"has a port outside 1..65535 ({what})") from None
        raise ValueError(f"is not a valid URL ({what})") from None
    if scheme not in ("http", "https"):
        raise ValueError("is not an http:// or https:// URL")
    if not host:
        raise ValueError("has no host (expected http://HOST[:PORT]/...)")
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"has port {port}, outside 1..65535")
    return value


def env_mapping(env: dict[str, str]) -> dict[str, str]:
    """A target's ``env``, checked at load: every key a name a process environment can hold
    (not empty, no ``=``, no NUL) and no value with a NUL (which no process can be given).
    A FieldError names the key, never the value."""
    from agentsproof.model.graders import FieldError

    for key, value in env.items():
        if not key or "=" in key or "\x00" in key:
            shown = key.replace("\x00", "\\0") if key else "(empty)"
            raise FieldError(shown, "is not an environment variable name (it is empty or holds '=' or a NUL)")
        if "\x00" in value:
            raise FieldError(key, "holds a NUL character, which no environment variable can")
    return env


EnvMapping = Annotated[dict[str, str], AfterValidator(env_mapping)]
"""A target's ``env`` field, checked by :func:`env_mapping`."""


@dataclass(frozen=True)
class TargetDef:
    """A target as defined in targets.yaml (or built in), its spec not yet expanded."""

    name: str
    spec: Any
    """The spec as written (``${VAR}`` references unexpanded): safe to show."""
    source: str
    """The file it came from (or 'built-in')."""
    folder: Path | None = None
    """The folder of that file (``{here}``); None for the built-in targets."""
    environment: Environment | None = None
    """Its ``environment:`` (the Docker image its trials run in when the eval gives none), resolved."""

    def expanded(self) -> Any:
        """The spec with ``${VAR}`` and ``{here}`` replaced; InputError naming a missing
        variable, or a field that is invalid once expanded (naming the variables, never
        their values). Every expanded value is registered with the scrubber."""
        from pydantic import ValidationError

        from agentsproof.core.validation import format_validation_error

        written = self.spec.model_dump(by_alias=True)
        data = _expand(written, self.source, self.name, self.folder)
        try:
            # ``expanded``: the checks that need the run's environment (a key's variable set)
            return type(self.spec).model_validate(data, context={"expanded": True})
        except ValidationError as exc:
            field, msg = format_validation_error(exc)
            raise InputError(self.source, f"{self.name}.{field}", _expanded_reason(written, field, msg)) from None


def _expanded_reason(written: dict[str, Any], field: str, msg: str) -> str:
    """Why a field is invalid after expansion, with no expanded value in it."""
    from agentsproof.core.scrub import scrub

    value: Any = written
    for part in field.replace("[", ".").replace("]", "").split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            value = None
    names = sorted(set(ENV_REF.findall(str(value if value is not None else written))))
    values = [os.environ.get(n, "") for n in names]
    reason = " ".join(scrub(msg, values).split())
    for v in values:  # short values too, where the message quotes them: this line shows none of them
        if v and v.strip():
            for shown in (repr(v), repr(v.strip()), f'"{v.strip()}"'):
                reason = reason.replace(shown, "***")
    refs = ", ".join("${" + n + "}" for n in names)
    return f"is not valid once {refs} is expanded: {reason}" if refs else reason


def _expand(value: Any, source: str, field: str, here: Path | None) -> Any:
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in os.environ:
                raise InputError(source, field, f"environment variable {name} is not set")
            register_var(name, os.environ[name])
            return os.environ[name]

        text = ENV_REF.sub(sub, value)
        return text.replace("{here}", str(here)) if here is not None else text
    if isinstance(value, dict):
        return {k: _expand(v, source, f"{field}.{k}", here) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, source, f"{field}[{i}]", here) for i, v in enumerate(value)]
    return value
