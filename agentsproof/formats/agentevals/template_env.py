"""``{{ env.NAME }}`` in an EVAL.yaml or promptfoo template: filled from the environment only
for a name the user allows in ``AGENTSPROOF_TEMPLATE_ENV`` (comma-separated), and never for
a name that looks like a secret (``…KEY``, ``…TOKEN``, ``…SECRET``, ``…PASSWORD`` …): a filled
value reaches the prompt, the checks and so the report. Anything else is one error line."""

from __future__ import annotations

import os
import re

from agentsproof.core.errors import InputError

ALLOW_SETTING = "AGENTSPROOF_TEMPLATE_ENV"
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)


def env_value(src: str, where: str, name: str) -> str:
    """The value of environment variable ``name`` for a template; InputError naming the field otherwise."""
    from agentsproof.core.envcfg import env_text

    allowed = {n.strip() for n in (env_text(ALLOW_SETTING) or "").split(",") if n.strip()}
    if _SECRET.search(name):
        raise InputError(
            src, where, f"uses {{{{ env.{name} }}}}, which looks like a secret: a secret is never filled into a prompt or a check (it would reach the report)"
        )
    if name not in allowed:
        raise InputError(
            src,
            where,
            f"uses {{{{ env.{name} }}}}: environment variables are filled only when named in {ALLOW_SETTING}; put the value in vars, or allow the name",
        )
    value = os.environ.get(name)
    if value is None:
        raise InputError(src, where, f"uses {{{{ env.{name} }}}}, but {name} is not set")
    return value
