"""agentv's ``environment: {type: docker}`` recipe (the shape of agentv's docker-workspace
example, MIT: tests/data/agentv-real) on the real engine: every agent trial runs in a fresh
container of its image, in its ``workdir``, capped by its ``resources``."""

from __future__ import annotations

from pathlib import Path

import yaml
from conftest import read_json, run_cli

SUITE = """\
name: docker-workspace-example
description: Example eval using a Docker environment
environment:
  type: docker
  image: {image}
  workdir: /workspace
  resources:
    memory: 512m
    cpus: 1
providers:
  - boxed
prompts:
  - "{{{{ input }}}}"
tests:
  - id: hello-world
    assert:
      - type: contains
        value: IN-CONTAINER /workspace
    vars:
      input: Say where you run
"""


def test_an_agentv_docker_recipe_runs_every_agent_trial_in_its_container(tmp_path: Path, docker_base_image: str) -> None:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / "evals").mkdir()
    agent = 'test -f /.dockerenv && echo "IN-CONTAINER $(pwd)"'
    (tmp_path / "targets.yaml").write_text(yaml.safe_dump({"boxed": {"type": "command", "command": ["sh", "-c", agent], "timeout": 60}}))
    suite = tmp_path / "evals" / "docker.eval.yaml"
    suite.write_text(SUITE.format(image=docker_base_image))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--output", out, "--no-cache", "--targets", str(tmp_path / "targets.yaml")])
    assert code == 0, err
    trial = read_json(next(out.rglob("*-tc-eval.json")))["items"][0]["with_arm"]["trials"][0]
    assert trial["status"] == "scored" and all(c["passed"] for g in trial["graders"] for c in g["checks"]), trial
