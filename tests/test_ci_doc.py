"""docs/ci.md's workflow works as written (issue 46.9): its YAML is read, the install step
is checked to install from the repository (never PyPI's namesake), and every `agentsproof`
run line is executed in a shell against the scripted model server, with the workflow's
own environment (the secret and the URL pointed at the server): the plan prints, the gate
passes a skill that helps and fails (exit 1) one that does not, the JUnit file is valid,
the step summary is written and the artifact's path holds the reports."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import SECRET_KEY, Rule, make_plugin, simple_eval

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ci.md"


def _workflow() -> dict:
    block = re.search(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert block, "docs/ci.md holds one yaml block"
    return yaml.safe_load(block.group(1))


def _job() -> dict:
    jobs = _workflow()["jobs"]
    assert list(jobs) == ["evals"]
    return jobs["evals"]


def test_the_workflow_installs_from_the_repository_and_keeps_the_key_secret():
    job = _job()
    env = job["env"]
    install = [s for s in job["steps"] if "pip install" in s.get("run", "")]
    assert len(install) == 1 and install[0]["run"] == 'python -m pip install "$AGENTSPROOF_SOURCE"'
    assert "git+https://" in DOC.read_text() and not re.search(r"pip install agentsproof\b(?!\s*@)", install[0]["run"])
    assert env["AGENTSPROOF_PROVIDER_KEY"] == "${{ secrets.AGENTSPROOF_PROVIDER_KEY }}"
    uses = [s.get("uses", "").split("@")[0] for s in job["steps"]]
    assert {"actions/checkout", "actions/setup-python", "actions/cache", "actions/upload-artifact"} <= set(uses)
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "runs/"
    gate = next(s["run"] for s in job["steps"] if "--ci" in s.get("run", ""))
    assert "--parallel" in gate and "--junit runs/" in gate and "--output runs" in gate


def _run_lines(tmp_path: Path, server_url: str) -> list[tuple[str, subprocess.CompletedProcess]]:
    job = _job()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "agentsproof"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agentsproof "$@"\n')
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTSPROOF_", "GITHUB_"))}
    env.update({k: str(v) for k, v in job["env"].items() if "${{" not in str(v)})
    env.update(
        {
            "AGENTSPROOF_PROVIDER_URL": server_url,  # the repository variable and secret, here the scripted server's
            "AGENTSPROOF_PROVIDER_KEY": SECRET_KEY,
            "AGENTSPROOF_SOURCE": str(ROOT),
            "AGENTSPROOF_CACHE_DIR": str(tmp_path / ".agentsproof-cache"),
            "AGENTSPROOF_RETRY_BASE_DELAY": "0",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
            "PYTHONPATH": str(ROOT),
        }
    )
    done = []
    for step in job["steps"]:
        line = step.get("run")
        if not line or "pip install" in line:  # the install itself is not repeated here: this checkout is what runs
            continue
        assert line.startswith("agentsproof "), line
        done.append((line, subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)))
    return done


def _plugin(tmp_path: Path) -> None:
    make_plugin(
        tmp_path / "evals",
        plugin="my-plugin",
        skills={"greeter": {"prompt": "GREET: say hello\n", "eval": simple_eval([{"type": "deterministic", "checks": ["hello"]}])}},
    )


def test_the_run_lines_gate_on_the_scripted_server(scripted_server, tmp_path):
    pytest.importorskip("xmlschema")
    import xmlschema

    _plugin(tmp_path)
    scripted_server.add(Rule(reply="hello!", system_contains="GREET"), Rule(reply="good day"))
    (plan, p), (gate, g) = _run_lines(tmp_path, scripted_server.base_url)
    assert "--plan" in plan and p.returncode == 0, p.stderr
    assert "wall time:" in p.stdout
    assert "--ci" in gate and g.returncode == 0, g.stdout + g.stderr
    assert "progress: " in g.stderr  # the CI log shows progress
    runs = tmp_path / "runs"
    xmlschema.XMLSchema(ROOT / "tests" / "data" / "junit.xsd").validate(str(runs / "junit.xml"))
    assert (runs / "trials.jsonl").stat().st_size > 0
    assert "greeter" in (tmp_path / "summary.md").read_text()
    assert (runs / "my-plugin" / "my-plugin-eval.html").is_file() and (runs / "my-plugin" / "latest").is_symlink()
    assert SECRET_KEY not in (runs / "my-plugin" / "eval-all-summary.json").read_text()


def test_the_gate_goes_red_when_the_skill_does_not_help(scripted_server, tmp_path):
    _plugin(tmp_path)
    scripted_server.add(Rule(reply="good day"))  # with or without the skill: never says hello
    (_, _p), (_, g) = _run_lines(tmp_path, scripted_server.base_url)
    assert g.returncode == 1, g.stdout + g.stderr
