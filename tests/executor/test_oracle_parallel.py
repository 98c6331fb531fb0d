"""eval-all runs the oracle preflights of its files at once, --parallel at a time, as it
runs trials (they ran one after another before): four evals whose oracles are judged by a
rubric, the judge answering after a pause, on the scripted server."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import yaml
from conftest import run_cli
from openai_server import Rule, default_reply


def _plugin(tmp: Path, n: int) -> Path:
    root = tmp / "plug"
    for i in range(n):
        d = root / "skills" / f"s{i}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(f"---\nname: s{i}\ndescription: totals {i}\n---\nReport totals with a thousands separator.\n")
        ev = {"version": "2", "skill": "SKILL.md", "defaults": {"trials": 1, "timeout": 60}, "oracle": {"answer": "Total revenue: 3,500"},
              "task": {"name": f"total-{i}", "instruction": "What is the total revenue?",
                       "graders": [{"type": "llm_rubric", "rubric": "States the total as '3,500'."}]}}
        (d / "eval.yaml").write_text(yaml.safe_dump(ev, sort_keys=False))
    return root


def _run(tmp: Path, srv: Any, parallel: int) -> dict[str, Any]:
    out = tmp / f"runs-{parallel}"
    code, stdout, err = run_cli(["eval-all", _plugin(tmp / f"p{parallel}", 4), "--model", "m", "--output", out, "--parallel", str(parallel), "--no-cache"])
    assert code in (0, 1), stdout + err
    return json.loads(next(out.rglob("eval-all-summary.json")).read_text())


class OracleJudge:
    """The judge, answering the oracle's judgements (the answer "Total revenue: 3,500") after a
    second, and counting how many of those were being answered at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = 0

    def __call__(self, req: dict[str, Any]) -> Any:
        if "Total revenue: 3,500" not in json.dumps(req):
            return default_reply(req)
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(1.0)
        with self.lock:
            self.now -= 1
        return default_reply(req)


def test_oracle_preflights_run_at_once_up_to_parallel(tmp_path: Path, byok_env: Any) -> None:
    judge = OracleJudge()
    byok_env.add(Rule(reply=judge, judge=True))
    report = _run(tmp_path, byok_env, 4)
    oracles = [it["oracle"] for it in report["items"]]
    assert len(oracles) == 4 and all(o is not None and o["score"] == 1.0 for o in oracles), oracles
    assert judge.most >= 2  # the four oracle judgements overlapped (each waits a second)
    judge.most = 0
    report = _run(tmp_path, byok_env, 1)
    assert all(it["oracle"]["score"] == 1.0 for it in report["items"])
    assert judge.most == 1  # --parallel 1: one at a time


def test_a_failing_oracle_refuses_its_file_only(tmp_path: Path, byok_env: Any) -> None:
    root = _plugin(tmp_path, 3)
    bad = root / "skills" / "s1" / "eval.yaml"
    ev = yaml.safe_load(bad.read_text())
    ev["task"]["graders"] = [{"type": "deterministic", "checks": ["Total revenue: 3500"]}]
    bad.write_text(yaml.safe_dump(ev, sort_keys=False))
    out = tmp_path / "runs"
    code, stdout, err = run_cli(["eval-all", root, "--model", "m", "--output", out, "--parallel", "3"])
    assert "s1/eval.yaml: oracle: the oracle of task 'total-1' fails 1 check(s)" in err, err
    report = json.loads(next(out.rglob("eval-all-summary.json")).read_text())
    assert sorted(it["name"] for it in report["items"]) == ["s0", "s2"]
    assert any("s1" in r["file"] for r in report["settings"]["refused"])
