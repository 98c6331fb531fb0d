"""A command target's env keys and values, and its argv, are checked when targets.yaml is
loaded: a key that no process environment can hold (``A=B``, empty, NUL) or a NUL in a
value is one line naming the file and the field, exit 30, before any trial runs (it used
to fail every trial)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import assert_refused, make_plugin, simple_eval


def _eval(tmp_path: Path, **target: Any) -> Path:
    root = make_plugin(tmp_path, skills={"greeter": {"eval": simple_eval(execution={"mode": "agent", "target": "agent"})}})
    folder = root / "skills" / "greeter"
    spec = {"type": "command", "command": [sys.executable, "-c", "print('hello')"], "sandbox": False, **target}
    (folder / "targets.yaml").write_text(yaml.safe_dump({"agent": spec}))
    return folder


@pytest.mark.parametrize(("env", "field"), [
    ({"A=B": "x"}, "agent.env.A=B"),
    ({"": "x"}, "agent.env.(empty)"),
    ({"A\x00B": "x"}, "agent.env.A\\0B"),
    ({"GOOD": "va\x00lue"}, "agent.env.GOOD"),
])
def test_a_bad_env_key_or_value_is_one_line_at_load(tmp_path: Path, env: dict[str, str], field: str) -> None:
    folder = _eval(tmp_path, env=env)
    line = assert_refused(["eval", folder, "--output", tmp_path / "runs"], ["targets.yaml", field])
    assert "va\x00lue" not in line and "va\\x00lue" not in line, "the value is never shown"
    assert not (tmp_path / "runs").exists(), "nothing ran"


def test_a_nul_in_the_command_is_one_line_at_load(tmp_path: Path) -> None:
    folder = _eval(tmp_path, command=["python3", "-c", "print(1)\x00"])
    assert_refused(["eval", folder, "--output", tmp_path / "runs"], ["targets.yaml", "agent.command[2]", "NUL"])


def test_a_good_env_still_reaches_the_agent(tmp_path: Path) -> None:
    from conftest import read_json, run_cli

    folder = _eval(tmp_path, env={"GREETING": "hello"}, command=[sys.executable, "-c", "import os; print(os.environ['GREETING'])"])
    code, _, err = run_cli(["eval", folder, "--output", tmp_path / "runs"])
    assert code == 0, err
    trial = read_json(next((tmp_path / "runs").rglob("greeter-eval.json")))["items"][0]["with_arm"]["trials"][0]
    assert trial["status"] == "scored" and trial["response"] == "hello"
