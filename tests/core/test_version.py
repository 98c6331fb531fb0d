"""core/version: the one version of the harness, the one pyproject.toml installs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from agentsproof.core.version import __version__

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_version_is_the_projects() -> None:
    assert tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"] == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:[-.+][0-9A-Za-z.]+)?", __version__)
