"""The real Copilot CLI for tests: where it is installed, and a BYOK setup aimed at a fresh
scripted server on loopback with an empty HOME and no GitHub token (no login involved).

The binary comes from COPILOT_CLI_PATH (``make test`` installs it), the repo's
``.venv/copilot-cli`` or ``copilot`` on PATH. Without one, tests using :func:`copilot_byok`
are skipped — and fail under CI, where ``make test`` should have installed it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from openai_server import ScriptedServer

REPO = Path(__file__).resolve().parents[1]


def installed_cli() -> str | None:
    explicit = os.environ.get("COPILOT_CLI_PATH")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    local = REPO / ".venv" / "copilot-cli" / "node_modules" / ".bin" / "copilot"
    if local.is_file():
        return str(local)
    return shutil.which("copilot")


CLI = installed_cli()


@pytest.fixture(scope="session")
def cli_cache() -> Path:
    """The CLI unpacks ~235 MB on first start; share that across tests (not credentials)."""
    cache = Path(os.environ.get("COPILOT_CACHE_HOME") or Path.home() / ".cache" / "copilot")
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def copilot_byok(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cache: Path, secret: str) -> Iterator[ScriptedServer]:
    """Yield a started scripted server the CLI's BYOK provider points at (key ``secret``)."""
    if CLI is None:
        if os.environ.get("CI"):
            pytest.fail("the Copilot CLI is not installed; `make test` should have installed it")
        pytest.skip("the Copilot CLI is not installed (run `make copilot-cli` or set COPILOT_CLI_PATH)")
    pytest.importorskip("copilot", reason="the Copilot SDK is not installed: pip install -e '.[copilot]'")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COPILOT_CACHE_HOME", str(cache))
    monkeypatch.setenv("COPILOT_CLI_PATH", CLI)
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN", "COPILOT_HOME", "XDG_CACHE_HOME", "AGENTSPROOF_COPILOT_PROVIDER_TYPE"):
        monkeypatch.delenv(name, raising=False)
    srv = ScriptedServer()
    srv.start()
    monkeypatch.setenv("AGENTSPROOF_COPILOT_PROVIDER_URL", srv.base_url)
    monkeypatch.setenv("AGENTSPROOF_COPILOT_PROVIDER_KEY", secret)
    try:
        yield srv
    finally:
        srv.stop()
