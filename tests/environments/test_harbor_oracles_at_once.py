"""eval-all's container oracle preflights share one engine session (leftovers reaped once,
images looked up once, containers removed in the background and swept at the end): three
Harbor tasks at --parallel 2, one whose solve.sh fails its tests: the two others pass their
oracle and run, the failing one is refused by name, and no container of the run is left."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from conftest import read_json, run_cli
from docker_engine import run_containers

DATA = Path(__file__).resolve().parents[1] / "data" / "harbor"


def test_container_oracles_at_once_refuse_only_the_failing_task(tmp_path: Path, docker_base_image: str) -> None:
    """The two good tasks pass their oracle and run; the third is refused naming solve.sh; nothing left on the engine."""
    from agentsproof.isolation.environments import LABEL_OWNER, owner_label

    root = tmp_path / "tasks"
    for name in ("hello-a", "hello-b", "hello-c"):
        shutil.copytree(DATA / "hello-file", root / name)
        dockerfile = root / name / "environment" / "Dockerfile"
        lines = dockerfile.read_text().splitlines()
        dockerfile.write_text("\n".join(f"FROM {docker_base_image}" if ln.startswith("FROM ") else ln for ln in lines) + "\n")
    (root / "hello-b" / "solution" / "solve.sh").write_text("#!/bin/bash\necho 'Hello' > /app/hello.txt\n")
    targets = root / "targets.yaml"
    targets.write_text(yaml.safe_dump({"nothing": {"type": "command", "command": ["sh", "-c", "true"], "timeout": 60}}))
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval-all", root, "--target", "nothing", "--targets", targets, "--parallel", "2", "--output", out])
    assert code in (0, 1), stderr + stdout
    report = read_json(next(out.glob("*/eval-all-summary.json")))
    ran = {item["name"]: item for item in report["items"]}
    assert set(ran) == {"hello-a", "hello-c"}, list(ran)
    for item in ran.values():
        assert item["oracle"]["score"] == 1.0 and item["oracle"]["tasks"][0]["passed"] is True, item["oracle"]
        assert [t["status"] for t in item["with_arm"]["trials"]] == ["scored"], item["with_arm"]["trials"]
    refused = " ".join(str(r) for r in report["settings"]["refused"])
    assert "hello-b" in refused and "solution/solve.sh" in refused, refused
    assert set(run_containers(f"{LABEL_OWNER}={owner_label()}")) == set()  # every preflight's and trial's container removed
