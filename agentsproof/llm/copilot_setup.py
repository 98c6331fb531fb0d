"""Whether the ``copilot`` provider can run here: the SDK, the Copilot CLI, a login or BYOK.

Fast: no network, no process started, the SDK is not imported (only looked up). Used by
``--provider auto``, by :class:`agentsproof.llm.copilot.CopilotClient` before it starts the
CLI, and by the copilot agent target; :mod:`agentsproof.llm.copilot` re-exports every name.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from pathlib import Path
from typing import Any

from agentsproof.llm.base import LLMError

ENV_CLI_PATH = "COPILOT_CLI_PATH"
ENV_BYOK_URL = "AGENTSPROOF_COPILOT_PROVIDER_URL"
ENV_BYOK_KEY = "AGENTSPROOF_COPILOT_PROVIDER_KEY"
ENV_BYOK_TYPE = "AGENTSPROOF_COPILOT_PROVIDER_TYPE"
TOKEN_ENVS = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
BYOK_TYPES = ("openai", "azure", "anthropic")

HINT_SDK = "install the Copilot SDK: pip install -e '.[copilot]' (in the agentsproof checkout)"
HINT_CLI = "install the Copilot CLI: npm install -g @github/copilot (or set COPILOT_CLI_PATH to the copilot binary)"
HINT_LOGIN = (
    "log in to GitHub Copilot: run `copilot` then `/login`, or set GH_TOKEN to a token with Copilot access "
    f"(or point Copilot at an OpenAI-compatible server with {ENV_BYOK_URL})"
)


def sdk_installed() -> bool:
    """True when the Copilot SDK package is installed (looked up, not imported)."""
    try:
        spec = importlib.util.find_spec("copilot")
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.submodule_search_locations:
        return False
    return any((Path(p) / "client.py").is_file() for p in spec.submodule_search_locations)


def _sdk_cached_runtime() -> str | None:
    """The runtime the SDK downloaded earlier (``python -m copilot download-runtime``), if complete."""
    spec = importlib.util.find_spec("copilot")
    if spec is None or not spec.submodule_search_locations:
        return None
    pkg = Path(list(spec.submodule_search_locations)[0])
    try:
        text = (pkg / "_cli_version.py").read_text(encoding="utf-8")
    except OSError:
        return None
    match = re.search(r'^CLI_VERSION[^=]*=\s*"([^"]+)"', text, re.M)
    if not match:
        return None
    version = re.sub(r"[^a-zA-Z0-9._\-]", "_", match.group(1))
    if os.environ.get("COPILOT_CLI_EXTRACT_DIR"):
        base = Path(os.environ["COPILOT_CLI_EXTRACT_DIR"])
    else:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        base = cache / "github-copilot-sdk" / "cli" / version
    for wrapper in sorted((base / "prebuilds").glob("*/copilot-runtime")):
        if wrapper.is_file() and (wrapper.parent / "runtime.node").is_file():
            return str(wrapper)
    return None


def find_cli() -> tuple[str | None, str]:
    """(path of the Copilot CLI, how it was found) or (None, what is wrong)."""
    explicit = os.environ.get(ENV_CLI_PATH)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            return None, f"COPILOT_CLI_PATH={explicit} does not exist; {HINT_CLI}"
        if not os.access(path, os.X_OK):
            return None, f"COPILOT_CLI_PATH={explicit} is not executable; {HINT_CLI}"
        return str(path), "COPILOT_CLI_PATH"
    on_path = shutil.which("copilot")
    if on_path:
        return on_path, "PATH"
    cached = _sdk_cached_runtime()
    if cached:
        return cached, "SDK runtime cache"
    beside = venv_cli()
    if beside:
        return beside, "agentsproof's environment (make copilot-cli)"
    return None, f"the Copilot CLI was not found; {HINT_CLI}"


def venv_cli() -> str | None:
    """The Copilot CLI ``make copilot-cli`` installs in agentsproof's own environment
    (``<venv>/copilot-cli/node_modules/.bin/copilot``), when it is there and executable."""
    from agentsproof.core.extras import venv_tool

    return venv_tool("copilot-cli", "copilot")


def byok_from_env() -> dict[str, Any] | None:
    """The CLI's BYOK ``provider`` config from the environment, or None."""
    url = os.environ.get(ENV_BYOK_URL, "").strip()
    if not url:
        return None
    kind = (os.environ.get(ENV_BYOK_TYPE) or "openai").strip().lower()
    if kind not in BYOK_TYPES:
        raise LLMError(f"{ENV_BYOK_TYPE}={kind!r} is not one of {', '.join(BYOK_TYPES)}")
    config: dict[str, Any] = {"type": kind, "base_url": url}
    key = os.environ.get(ENV_BYOK_KEY)
    if key:
        config["api_key"] = key
    return config


def login_source() -> str | None:
    """Where a GitHub login for Copilot would come from (never the token itself)."""
    for name in TOKEN_ENVS:
        if os.environ.get(name, "").strip():
            return name
    home = Path(os.environ.get("COPILOT_HOME") or Path.home() / ".copilot")
    config = home / "config.json"
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # The file starts with // comments; the keys alone tell whether a user is stored.
    if re.search(r'"(loggedInUsers|lastLoggedInUser|last_logged_in_user|logged_in_users)"\s*:\s*[\[{"]\s*[^\]}\s"]', text):
        return str(config)
    return None


def copilot_status() -> tuple[bool, str]:
    """(usable, what to install or set). Fast: nothing is started or downloaded."""
    if not sdk_installed():
        return False, f"the GitHub Copilot SDK is not installed; {HINT_SDK}"
    cli, problem = find_cli()
    if cli is None:
        return False, problem
    try:
        byok = byok_from_env()
    except LLMError as err:
        return False, str(err)
    if byok is None and login_source() is None and configured_byok() is None:
        return False, f"no GitHub login found for Copilot; {HINT_LOGIN}"
    return True, ""


def configured_byok() -> dict[str, Any] | None:
    """With no GitHub login and no ``AGENTSPROOF_COPILOT_PROVIDER_URL``: the run's configured
    provider (``AGENTSPROOF_PROVIDER_URL`` / ``_KEY`` / ``_TYPE``, when its type is one Copilot
    speaks) as Copilot's BYOK provider, so a Copilot target runs on the model the run names."""
    url = os.environ.get("AGENTSPROOF_PROVIDER_URL", "").strip()
    kind = (os.environ.get("AGENTSPROOF_PROVIDER_TYPE") or "openai").strip().lower()
    if not url or kind not in BYOK_TYPES or login_source() is not None:
        return None
    config: dict[str, Any] = {"type": kind, "base_url": url}
    key = os.environ.get("AGENTSPROOF_PROVIDER_KEY")
    if key:
        config["api_key"] = key
    return config


def copilot_usable() -> bool:
    """True when the copilot provider can run here (:func:`copilot_status` without the reason)."""
    return copilot_status()[0]
