"""One run reads its eval file once: the format's detection, its loader, the lint gate and
the oracle preflight all work from that one read (counted at core.inputs.read_regular, the
one function every input file's bytes come through)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import run_cli

from agentsproof.core import inputs


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    seen: list[Path] = []
    real = inputs.read_regular

    def counting(path: Path, **kw: Any) -> bytes:
        seen.append(Path(path).resolve())
        return real(path, **kw)

    monkeypatch.setattr(inputs, "read_regular", counting)
    return seen


def _eval(tmp: Path, name: str = "eval.yaml", *, oracle: bool = True) -> Path:
    d = tmp / "plug" / "skills" / "s"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text("Report totals with a thousands separator.\n")
    ev: dict[str, Any] = {"version": "2", "skill": "SKILL.md", "defaults": {"trials": 1, "timeout": 30},
                          "task": {"name": "total", "instruction": "What is the total revenue?",
                                   "graders": [{"type": "deterministic", "checks": ["3,500"]}]}}
    if oracle:
        ev["oracle"] = {"answer": "Total revenue: 3,500"}
    (d / name).write_text(yaml.safe_dump(ev, sort_keys=False))
    return d / name


@pytest.mark.parametrize("name", ["eval.yaml", "other.yaml"])  # other.yaml: told from an EVAL.yaml by its keys
def test_one_eval_reads_its_file_once(tmp_path: Path, byok_env: Any, reads: list[Path], name: str) -> None:
    path = _eval(tmp_path, name)
    code, out, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, out + err
    report = json.loads(next((tmp_path / "runs").rglob("*-eval.json")).read_text())
    assert report["items"][0]["oracle"]["score"] == 1.0  # the oracle ran, on the one read
    assert reads.count(path.resolve()) == 1, reads


def test_eval_all_reads_each_file_once(tmp_path: Path, byok_env: Any, reads: list[Path]) -> None:
    path = _eval(tmp_path)
    code, out, err = run_cli(["eval-all", tmp_path / "plug", "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, out + err
    assert reads.count(path.resolve()) == 1, reads


def test_the_lint_gate_still_refuses_from_the_one_read(tmp_path: Path, byok_env: Any, reads: list[Path]) -> None:
    path = _eval(tmp_path, oracle=False)
    ev = yaml.safe_load(path.read_text())
    ev["task"]["graders"] = [{"type": "deterministic", "checks": {"mustContain": ["v2"], "mustNotContain": ["v2"]}}]
    path.write_text(yaml.safe_dump(ev, sort_keys=False))
    code, out, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 30, out + err
    assert err.count("\n") == 1 and "task.graders[0].checks.mustNotContain[0]" in err, err
    assert byok_env.requests == []
    assert reads.count(path.resolve()) == 1, reads


def test_tc_eval_reads_its_evals_json_once(tmp_path: Path, byok_env: Any, reads: list[Path]) -> None:
    from conftest import write_tc_eval

    path = write_tc_eval(tmp_path / "cases", [{"id": 1, "prompt": "Say hi", "assertions": ["Says hi"]}])
    code, out, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "runs"])
    assert code in (0, 1), out + err  # graded (pass or fail), not refused
    assert reads.count(path.resolve()) == 1, reads
