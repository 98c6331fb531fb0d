"""The command target and the files/script graders in a fresh container per trial, on the
real engine: the eval's ``environment:`` image, the workspace seed copied in, the agent's
files copied back into the report and the flight recorder, every container removed."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path

import yaml
from conftest import read_json, run_cli
from docker_engine import own_containers

AGENT = r"""
set -e
test -f /.dockerenv || { echo "not in a container" >&2; exit 3; }
cat data.txt > /dev/null
if [ -n "$AGENTSPROOF_SKILL_FILE" ] && [ -f "$AGENTSPROOF_SKILL_FILE" ]; then
  printf 'total: %s\n' "$(cat data.txt)" > result.txt
  printf '{"skill": "%s"}\n' "$AGENTSPROOF_SKILL_NAME" >> "$AGENTSPROOF_TRACE_FILE"
fi
echo "in $(pwd) as $(id -u)"
"""

CHECK = """#!/bin/sh
test -f /.dockerenv || exit 5
grep -q 'total: 42' "$AGENTSPROOF_WORKSPACE/result.txt"
"""


def write_eval(root: Path, image: str, **env: object) -> Path:
    (root / "seed").mkdir(parents=True)
    (root / "seed" / "data.txt").write_text("42")
    (root / "SKILL.md").write_text("---\nname: counting\ndescription: counts\n---\nWrite result.txt.\n")
    (root / "check.sh").write_text(CHECK)
    (root / "targets.yaml").write_text(yaml.safe_dump({"boxed": {"type": "command", "command": ["sh", "-c", AGENT], "timeout": 60}}))
    cfg = {
        "version": "2",
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "boxed"},
        "workspace": "seed",
        "environment": {"image": image, "memory_mb": 512, "pids": 128, **env},
        "defaults": {"trials": 2, "timeout": 60},
        "task": {
            "name": "count",
            "instruction": "Count the data.",
            "graders": [
                {"type": "files", "exists": ["result.txt"], "mustContain": {"result.txt": ["total: 42"]}},
                {"type": "script", "script": "check.sh"},
            ],
        },
    }
    path = root / "eval.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_each_trial_runs_in_its_own_container_and_its_files_come_back(tmp_path: Path, docker_base_image: str) -> None:
    ev = write_eval(tmp_path / "ev", docker_base_image)
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", ev, "--output", out])
    assert code == 0, stderr + stdout
    report = read_json(next(out.rglob("*.json")))
    item = report["items"][0]
    for t in item["with_arm"]["trials"]:
        assert t["status"] == "scored" and t["score"] == 1.0, t
        assert [(f["path"], f["status"]) for f in t["files"]] == [("result.txt", "created")], t["files"]
        assert "total: 42" in t["files"][0]["preview"]
        assert "in /workspace as 0" in t["response"]
        assert t["skill_used"] is True
    for t in item["without_arm"]["trials"]:
        assert t["status"] == "scored" and t["files"] == [] and t["score"] == 0.0, t
        script = next(g for g in t["graders"] if g["type"] == "script")
        assert script["checks"][0]["passed"] is False and "/workspace/result.txt" in script["checks"][0]["evidence"], script
    # the flight recorder kept the with-arm's produced file
    kept = [p for p in out.rglob("*") if p.is_file() and p.read_bytes() == b"total: 42\n"]
    assert kept, sorted(str(p) for p in out.rglob("*"))
    assert own_containers() == []


def test_an_image_the_engine_cannot_get_is_one_line_naming_the_field(tmp_path: Path, docker_base_image: str) -> None:
    ev = write_eval(tmp_path / "ev", "agentsproof-test/no-such-image:never")
    code, stdout, stderr = run_cli(["eval", ev, "--output", tmp_path / "runs"])
    assert code == 30, stderr + stdout
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "eval.yaml" in lines[0] and "environment.image" in lines[0], stderr
    assert "Traceback" not in stderr


def test_unknown_environment_keys_are_refused_by_name(tmp_path: Path) -> None:
    ev = write_eval(tmp_path / "ev", "x", gpus=1)
    code, _stdout, stderr = run_cli(["eval", ev, "--output", tmp_path / "runs"])
    assert code == 30 and "environment.gpus" in stderr, stderr
    data = yaml.safe_load(ev.read_text())
    data["environment"] = {"image": "x", "dockerfile": "Dockerfile"}
    ev.write_text(yaml.safe_dump(data))
    code, _stdout, stderr = run_cli(["eval", ev, "--output", tmp_path / "runs"])
    assert code == 30 and "environment" in stderr and "exactly one" in stderr, stderr


def test_a_failed_build_names_the_dockerfile_and_step_and_keeps_the_log(tmp_path: Path, docker_base_image: str) -> None:
    ev = write_eval(tmp_path / "ev", "x")
    (tmp_path / "ev" / "env").mkdir()
    step = f"broken-step-{uuid.uuid4().hex[:8]}"  # this run's own: the engine may hold other runs' containers
    (tmp_path / "ev" / "env" / "Dockerfile").write_text(f"FROM {docker_base_image}\nRUN echo building\nRUN sh -c 'echo {step} >&2; exit 7'\n")
    data = yaml.safe_load(ev.read_text())
    data["environment"] = {"dockerfile": "env/Dockerfile"}
    ev.write_text(yaml.safe_dump(data))
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", ev, "--output", out])
    assert code == 30, stderr + stdout
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    # the Dockerfile, its failing step and why first; then the log and the field that named it
    # (the engine counts the label agentsproof adds as one more step)
    assert re.search(rf"env/Dockerfile: step 3/\d RUN sh -c 'echo {step} >&2; exit 7': exit 7 \(build log: ", lines[0]), lines[0]
    assert "eval.yaml environment.dockerfile)" in lines[0], lines[0]
    logs = list(out.rglob("build-*.log"))
    assert logs and step in logs[0].read_text(), sorted(out.rglob("*"))
    # the failed step's container is removed with the build (docker build --force-rm), never left behind
    left = subprocess.run(["docker", "ps", "-a", "--no-trunc", "--format", "{{.Command}}"], capture_output=True, text=True, timeout=60)
    assert left.returncode == 0 and step not in left.stdout, left.stdout[-500:]
    assert json.dumps(lines)  # one line, no traceback
    assert "Traceback" not in stderr
    # a COPY of a file the context lacks: the engine's own message is the reason
    (tmp_path / "ev" / "env" / "Dockerfile").write_text(f"FROM {docker_base_image}\nCOPY nope.txt /nope.txt\n")
    code, stdout, stderr = run_cli(["eval", ev, "--output", out])
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert code == 30 and len(lines) == 1, stderr + stdout
    assert re.search(r"env/Dockerfile: step 2/\d COPY nope.txt /nope.txt: COPY failed: ", lines[0]), lines[0]


def test_a_dockerfile_image_is_built_once_and_its_workdir_files_are_not_the_agents(tmp_path: Path, docker_base_image: str) -> None:
    """The image's own WORKDIR files (a Harbor-style /app with fixtures) are there for the
    agent but not counted as its files; a second run with nothing changed builds nothing."""
    ev = write_eval(tmp_path / "ev", "x")
    env_dir = tmp_path / "ev" / "env"
    env_dir.mkdir()
    (env_dir / "fixture.txt").write_text("from the image\n")
    (env_dir / "nonce.txt").write_text(uuid.uuid4().hex)  # a context this test run has never built
    (env_dir / "Dockerfile").write_text(f"FROM {docker_base_image}\nWORKDIR /app\nCOPY fixture.txt /app/fixture.txt\n")
    data = yaml.safe_load(ev.read_text())
    data["environment"] = {"dockerfile": "env/Dockerfile"}
    data["workspace"] = "seed"
    data["task"]["graders"] = [{"type": "files", "mustContain": {"fixture.txt": ["from the image"], "data.txt": ["42"], "result.txt": ["total: 42"]}}]
    ev.write_text(yaml.safe_dump(data))
    (tmp_path / "ev" / "targets.yaml").write_text(
        yaml.safe_dump({"boxed": {"type": "command", "command": ["sh", "-c", AGENT.replace("/workspace", "/app")], "timeout": 60}})
    )
    runs = []
    for n in range(2):
        out = tmp_path / f"runs{n}"
        code, stdout, stderr = run_cli(["eval", ev, "--output", out, "--trials", "1"])
        assert code in (0, 1), stderr + stdout
        runs.append(out)
        item = read_json(next(out.rglob("*.json")))["items"][0]
        (t,) = item["with_arm"]["trials"]
        assert t["status"] == "scored" and t["score"] == 1.0, t
        assert "in /app as 0" in t["response"]
        assert [f["path"] for f in t["files"]] == ["result.txt"], t["files"]
    assert list(runs[0].rglob("build-*.log")), "the first run built the image (its log is kept)"
    assert not list(runs[1].rglob("build-*.log")), "nothing changed: the second run built nothing"


def test_a_targets_environment_is_the_default_for_evals_that_give_none(tmp_path: Path, docker_base_image: str) -> None:
    """targets.yaml ``environment:``: the trials of an eval without one run in its image; an
    eval's own ``environment:`` wins; a bad key is one line naming targets.yaml and the field."""
    ev = write_eval(tmp_path / "ev", docker_base_image)
    data = yaml.safe_load(ev.read_text())
    del data["environment"]
    data["defaults"]["trials"] = 1
    ev.write_text(yaml.safe_dump(data))
    targets = tmp_path / "ev" / "targets.yaml"
    entry = yaml.safe_load(targets.read_text())["boxed"]
    targets.write_text(yaml.safe_dump({"boxed": {**entry, "environment": {"image": docker_base_image, "workdir": "/srv/work", "memory_mb": 256}}}))
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", ev, "--output", out])
    assert code == 0, stderr + stdout
    item = read_json(next(out.rglob("*.json")))["items"][0]
    (t,) = item["with_arm"]["trials"]
    assert t["status"] == "scored" and t["score"] == 1.0 and "in /srv/work as 0" in t["response"], t
    assert own_containers() == []

    data["environment"] = {"image": "agentsproof-test/no-such-image:never"}  # the eval's own wins
    ev.write_text(yaml.safe_dump(data))
    code, stdout, stderr = run_cli(["eval", ev, "--output", tmp_path / "runs2"])
    assert code == 30 and "eval.yaml" in stderr and "environment.image" in stderr, stderr + stdout

    del data["environment"]
    ev.write_text(yaml.safe_dump(data))
    targets.write_text(yaml.safe_dump({"boxed": {**entry, "environment": {"image": docker_base_image, "gpus": 1}}}))
    code, stdout, stderr = run_cli(["eval", ev, "--output", tmp_path / "runs3"])
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert code == 30 and len(lines) == 1 and "targets.yaml" in lines[0] and "boxed.environment.gpus" in lines[0], stderr
    targets.write_text(yaml.safe_dump({"boxed": {**entry, "environment": {"dockerfile": "../elsewhere/Dockerfile"}}}))
    code, stdout, stderr = run_cli(["eval", ev, "--output", tmp_path / "runs4"])
    assert code == 30 and "boxed.environment.dockerfile" in stderr and "Traceback" not in stderr, stderr


def test_an_http_target_has_no_environment() -> None:
    """An http target does not run in a container (``runs_in_environment``): its ``environment:`` is refused by name."""
    import pytest

    from agentsproof.core.errors import InputError
    from agentsproof.targets.config import parse_targets

    with pytest.raises(InputError) as err:
        parse_targets({"web": {"type": "http", "url": "http://127.0.0.1:9/chat", "skill_field": "skill", "environment": {"image": "x"}}}, "targets.yaml")
    assert str(err.value).startswith("targets.yaml: web.environment: a http target does not run in a container"), err.value
