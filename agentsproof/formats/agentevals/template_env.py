"""``{{ env.NAME }}`` in an EVAL.yaml or promptfoo template: filled from the environment, as
agentv and promptfoo fill it.

A value that is a secret — its name looks like one (``…KEY``, ``…TOKEN``, ``…SECRET``,
``…PASSWORD`` …) or it is a value already registered as one (a provider key, a target's
``${VAR}``) — is filled where the file asks for it and registered with the scrubber
(:mod:`agentsproof.core.scrub`), so it is masked as ``***`` in every report, log, journal
and page, as every other secret is. A name that is not set is filled with nothing, said
once (agentv and promptfoo render it empty too).
"""

from __future__ import annotations

import os
import re
from typing import Any

ALLOW_SETTING = "AGENTSPROOF_TEMPLATE_ENV"
"""Formerly the names allowed in templates; no longer needed (every name is filled)."""
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)


def env_value(src: str, where: str, name: str) -> str:
    """The value of environment variable ``name`` for a template (a secret's registered to be masked everywhere)."""
    from agentsproof.core.notice import note_once
    from agentsproof.core.scrub import register, registered

    value = os.environ.get(name)
    if value is None:
        note_once(f"{src}: {where}: {{{{ env.{name} }}}} is not set; it is filled with nothing", key=("template-env", src, name))
        return ""
    if _SECRET.search(name) or value in registered():
        register(value)  # masked as *** in every report, log and page
        note_once(
            f"{src}: {where}: {{{{ env.{name} }}}} is a secret: it is sent where the file puts it and masked everywhere agentsproof writes",
            key=("template-env-secret", src, name),
        )
    return value


MISSING = object()


def var_value(variables: dict[str, Any], name: str) -> Any:
    """``name`` (``x``, ``vars.x``, ``x.y.z`` into nested mappings) in the test's vars, or ``MISSING``."""
    if name in variables:
        return variables[name]
    path = name[5:] if name.startswith("vars.") else name
    if path in variables:
        return variables[path]
    value: Any = variables
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value
