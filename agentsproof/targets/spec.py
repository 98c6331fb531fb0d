"""What every target's targets.yaml entry shares: the file's name, ``${VAR}`` references,
paths inside the workspace, and a defined target (:class:`TargetDef`)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.model.graders import workspace_glob

TARGETS_FILE = "targets.yaml"
MAX_TARGET_TIMEOUT = 86_400.0
"""One day: the longest timeout a target may set."""
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""``${NAME}``: an environment variable, expanded when the run starts."""


def relative(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return workspace_glob(value)
    except ValueError as exc:
        raise ValueError(str(exc)) from None


@dataclass(frozen=True)
class TargetDef:
    name: str
    spec: Any
    """The spec as written (``${VAR}`` references unexpanded): safe to show."""
    source: str
    """The file it came from (or 'built-in')."""
    folder: Path | None = None
    """The folder of that file (``{here}``); None for the built-in targets."""

    def expanded(self) -> Any:
        """The spec with ``${VAR}`` and ``{here}`` replaced; InputError naming a missing variable."""
        data = _expand(self.spec.model_dump(by_alias=True), self.source, self.name, self.folder)
        return type(self.spec).model_validate(data)


def _expand(value: Any, source: str, field: str, here: Path | None) -> Any:
    if isinstance(value, str):
        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in os.environ:
                raise InputError(source, field, f"environment variable {name} is not set")
            return os.environ[name]

        text = ENV_REF.sub(sub, value)
        return text.replace("{here}", str(here)) if here is not None else text
    if isinstance(value, dict):
        return {k: _expand(v, source, f"{field}.{k}", here) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, source, f"{field}[{i}]", here) for i, v in enumerate(value)]
    return value


