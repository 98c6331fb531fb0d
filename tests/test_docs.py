"""Every command has --help with an example, and appears in the README."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentsproof.cli import main
from conftest import run_cli

README = Path(__file__).resolve().parent.parent / "README.md"
COMMANDS = sorted(main.commands)


def test_the_spec_commands_exist():
    assert {"eval", "eval-all", "tc-eval", "eval-generate"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_an_example(command):
    code, out, err = run_cli([command, "--help"])
    assert code == 0, err
    assert "Example" in out, f"`agentsproof {command} --help` shows no example"
    assert f"agentsproof {command}" in out


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_documents_command(command):
    text = README.read_text(encoding="utf-8")
    assert f"agentsproof {command}" in text, f"README.md never shows `agentsproof {command}`"


def test_top_level_help_lists_every_command():
    code, out, _ = run_cli(["--help"])
    assert code == 0
    for command in COMMANDS:
        assert command in out
