"""Clean-up of a run's containers on the real engine: a run stopped by SIGINT or SIGTERM
removes every container it started; one killed by SIGKILL cannot, so the next run removes
the dead run's leftovers (and only a dead run's) and says so in one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import run_cli
from docker_engine import run_containers

REPO = Path(__file__).resolve().parents[2]


def slow_eval(root: Path, image: str, seconds: int) -> Path:
    """An eval whose agent sleeps ``seconds`` in its container."""
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: slow\ndescription: slow\n---\nSlow.\n")
    (root / "targets.yaml").write_text(yaml.safe_dump({"slow": {"type": "command", "command": ["sh", "-c", f"sleep {seconds}; echo done"]}}))
    cfg = {
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "slow"},
        "environment": {"image": image},
        "defaults": {"trials": 1, "timeout": 600},
        "task": {"name": "slow", "instruction": "go", "graders": [{"type": "deterministic", "checks": {"mustContain": ["done"]}}]},
    }
    (root / "eval.yaml").write_text(yaml.safe_dump(cfg))
    return root / "eval.yaml"


def start(ev: Path, out: Path) -> subprocess.Popen[str]:
    """The real CLI in its own process, both arms at once."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CI", None)
    return subprocess.Popen(
        [sys.executable, "-m", "agentsproof", "eval", str(ev), "--parallel", "2", "--output", str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def wait_for_containers(proc: subprocess.Popen[str], owner_pid: int, count: int) -> list[str]:
    """The run's containers once ``count`` of them exist (a hang guard of 120 s)."""
    deadline = time.monotonic() + 120
    while True:
        found = [c for c in run_containers("org.agentsproof.owner") if owner_pid_of(c) == owner_pid]
        if len(found) >= count:
            return found
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never started its containers"
        time.sleep(0.2)


def owner_pid_of(container: str) -> int:
    """The pid in a container's owner label (host/pid/start)."""
    got = subprocess.run(
        ["docker", "inspect", "-f", '{{index .Config.Labels "org.agentsproof.owner"}}', container], capture_output=True, text=True, check=False
    )
    parts = got.stdout.strip().split("/")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else -1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_removes_its_containers(tmp_path: Path, docker_base_image: str, sig: signal.Signals) -> None:
    proc = start(slow_eval(tmp_path / "ev", docker_base_image, 300), tmp_path / "runs")
    try:
        mine = wait_for_containers(proc, proc.pid, 2)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)  # a hang guard
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 30, err
    assert "Traceback" not in err
    left = set(run_containers("org.agentsproof.owner"))
    assert not left & set(mine), left


def test_after_a_sigkill_the_next_run_removes_the_dead_runs_containers(tmp_path: Path, docker_base_image: str) -> None:
    # a live run's containers are never touched: one still running beside the killed one
    alive = start(slow_eval(tmp_path / "alive", docker_base_image, 300), tmp_path / "runs-alive")
    victim = start(slow_eval(tmp_path / "ev", docker_base_image, 300), tmp_path / "runs")
    try:
        theirs = wait_for_containers(alive, alive.pid, 2)
        dead = wait_for_containers(victim, victim.pid, 2)
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        assert set(dead) <= set(run_containers("org.agentsproof.owner")), "a SIGKILLed run cannot clean up"
        code, stdout, stderr = run_cli(["eval", slow_eval(tmp_path / "next", docker_base_image, 0), "--output", tmp_path / "runs-next"])
        assert code == 0, stderr + stdout
        said = [ln for ln in stderr.splitlines() if "left by an earlier run" in ln]
        assert len(said) == 1, stderr
        removed = int(said[0].split("removed ", 1)[1].split(" ", 1)[0])
        assert removed >= 2, said  # the killed run's two (and any other dead run's on this host)
        left = set(run_containers("org.agentsproof.owner"))
        assert not left & set(dead), left
        assert set(theirs) <= left, "a live run's containers were removed"
    finally:
        for proc in (alive, victim):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    assert not set(run_containers("org.agentsproof.owner")) & set(theirs)
