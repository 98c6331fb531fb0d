"""core/extras: an optional dependency's one install line points at this checkout (the PyPI
name ``agentsproof`` is someone else's)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from agentsproof.core.extras import EXTRA_MODULES, install_line, missing_extra_message

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_install_line_is_the_checkout_not_pypi() -> None:
    assert install_line("server") == "pip install -e '.[server]' (in the agentsproof checkout)"


@pytest.mark.parametrize("module, extra", [("uvicorn", "server"), ("sqlalchemy.orm", "server"), ("llama_cpp", "local"), ("copilot.session", "copilot")])
def test_a_missing_optional_module_names_its_extra(module: str, extra: str) -> None:
    top = module.split(".")[0]
    assert missing_extra_message(module) == f"this command needs the '{extra}' extra ({top} is not installed): {install_line(extra)}"


@pytest.mark.parametrize("module", [None, "", "numpy", "serverless", "agentsproof.server"])
def test_other_modules_are_not_ours_to_explain(module: str | None) -> None:
    assert missing_extra_message(module) is None


def test_every_extra_named_exists_in_pyproject() -> None:
    extras = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert set(EXTRA_MODULES.values()) <= set(extras)


def test_venv_tool_finds_only_an_executable_in_the_venvs_tool_folder(tmp_path, monkeypatch) -> None:
    import sys

    from agentsproof.core.extras import venv_tool

    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    assert venv_tool("bun-cli", "bun") is None
    program = tmp_path / "bun-cli" / "node_modules" / ".bin" / "bun"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    assert venv_tool("bun-cli", "bun") is None  # there, not executable
    program.chmod(0o755)
    assert venv_tool("bun-cli", "bun") == str(program)
    assert venv_tool("copilot-cli", "copilot") is None

