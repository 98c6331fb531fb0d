"""``agentsproof lint`` on Harbor task folders: what a run would refuse is an error, what would
make its result mean less a warning (no engine, no model)."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "harbor"


def test_a_complete_task_has_no_problem() -> None:
    """hello-file: an oracle, a reward file named, the network said: nothing to report."""
    code, out, err = run_cli(["lint", DATA / "hello-file"])
    assert code == 0 and "no problems found" in out + err, out + err


def test_a_task_without_oracle_or_reward_or_network_is_warned(tmp_path: Path) -> None:
    """No solve.sh, a test.sh that names no reward file, no network_mode: three warnings by rule."""
    task = tmp_path / "t"
    shutil.copytree(DATA / "hello-file", task)
    (task / "solution" / "solve.sh").unlink()
    (task / "tests" / "test.sh").write_text("#!/bin/bash\nexit 0\n")
    (task / "task.toml").write_text("[agent]\ntimeout_sec = 30\n[environment]\nshiny = 1\n")
    code, out, err = run_cli(["lint", task])
    text = out + err
    for rule in ("harbor-no-oracle", "harbor-no-reward", "harbor-internet", "unknown-key"):
        assert f"[{rule}]" in text, text
    assert "error(s)" in text and "0 error(s)" in text


def test_a_refused_key_is_an_error_with_its_fix(tmp_path: Path) -> None:
    """A key a run refuses (here compose services) is lint's error, naming the file and key."""
    task = tmp_path / "t"
    shutil.copytree(DATA / "hello-file", task)
    (task / "environment" / "docker-compose.yaml").write_text("services: {}\n")
    code, out, err = run_cli(["lint", task])
    assert code == 1, out + err
    assert "environment/docker-compose.yaml: error:" in out + err and "[harbor-refused]" in out + err
