"""Limits of a trial's container on the real engine: a fork bomb, a memory hog and a disk
filler each end as an errored trial whose reason names the limit, and the run goes on (the
other arm's trials are scored), with every container removed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import read_json, run_cli
from docker_engine import own_containers

HOGS = {
    "pids": (":(){ :|:& };:; sleep 60", "pids: the trial's processes reached the cap of 64"),
    "memory": ("x=a; while true; do x=$x$x; done", "memory: the trial went over its 128 MB memory cap"),
    "disk": ("dd if=/dev/zero of=big bs=1M count=600 2>/dev/null; sleep 60", "disk: the trial wrote over 100 MB in its container"),
}
AGENT = 'if [ "$AGENTSPROOF_ARM" = with ]; then {hog}; fi; echo fine'


@pytest.mark.parametrize("limit", sorted(HOGS))
def test_a_trial_past_a_limit_is_errored_with_the_limit_named(tmp_path: Path, docker_base_image: str, limit: str) -> None:
    """The with-arm's agent runs the hog, the baseline's just answers."""
    hog, reason = HOGS[limit]
    root = tmp_path / "ev"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: hog\ndescription: hogs\n---\nHog.\n")
    target = {"type": "command", "command": ["bash", "-c", AGENT.format(hog=hog)], "timeout": 90}
    (root / "targets.yaml").write_text(yaml.safe_dump({"hog": target}))
    cfg = {
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "hog"},
        "environment": {"image": docker_base_image, "memory_mb": 128, "pids": 64, "disk_mb": 100},
        "defaults": {"trials": 1, "timeout": 90},
        "task": {"name": "hog", "instruction": "go", "graders": [{"type": "deterministic", "checks": {"mustContain": ["fine"]}}]},
    }
    (root / "eval.yaml").write_text(yaml.safe_dump(cfg))
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", root / "eval.yaml", "--output", out])
    assert "Traceback" not in stderr, stderr
    item = read_json(next(out.rglob("*.json")))["items"][0]
    (trial,) = item["with_arm"]["trials"]
    assert trial["status"] == "errored" and reason in trial["error"], trial["error"]
    (base,) = item["without_arm"]["trials"]
    assert base["status"] == "scored" and base["score"] == 1.0, base
    assert own_containers() == []
    assert code != 0, "an item with only errored with-arm trials is not a pass"
