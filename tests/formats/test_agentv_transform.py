"""agentv's output transform (``default_test.options.transform``), end to end on the scripted
server: a TypeScript module's default export run with bun on every answer before grading, as
agentv runs it (``output-transform.ts``); one that throws errors its trial with agentv's reason.
The files are copies of agentv's examples/features/file-transforms (tests/data/agentv-bun:
EntityProcess/agentv, MIT, see the LICENSE there)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import Rule, only_report, run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "agentv-bun" / "file-transforms"


def _run(tmp_path: Path, suite: str, codes: tuple[int, ...] = (0, 1)) -> dict:
    root = tmp_path / "file-transforms"
    shutil.copytree(DATA, root)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / suite, "--model", "m", "--output", out, "--no-cache"])
    assert code in codes, err
    return {i["name"]: i["with_arm"]["trials"][0] for i in only_report(out)["items"]}


def test_the_transform_runs_on_the_answer_before_grading(bun, byok_env, tmp_path):
    byok_env.add(Rule(reply="hello there", user_contains="Say hi", judge=False))
    byok_env.add(Rule(reply="  goodbye \n", user_contains="Say bye", judge=False))
    trials = _run(tmp_path, "upper.yaml")
    own = trials["own-inline"]  # a test's own options.transform, inline JavaScript, wins over default_test's
    assert own["status"] == "scored" and own["response"] == "Say bye -> goodbye!" and own["passed"], own
    trial = trials["shout"]
    assert trial["status"] == "scored", trial
    assert trial["graders"][0]["score"] == 1.0  # the contains check saw the transformed text, with context.vars
    assert trial["response"] == "TRANSFORMED[Say hi]: HELLO THERE"
    assert "the answer before its transform: hello there" in [e["text"] for e in trial["log"]]


def test_a_transform_that_throws_errors_the_trial(bun, byok_env, tmp_path):
    byok_env.add(Rule(reply="Here is the report as text.", user_contains="spreadsheet", judge=False))
    (trial,) = _run(tmp_path, "suite.yaml", (30,)).values()  # every item errored: exit 30; agentv's xlsx-to-csv.ts wants a .xlsx ContentFile, not text
    assert trial["status"] == "errored", trial
    assert "Transform failed ([file transform]): expected a .xlsx ContentFile output" in trial["error"]
    assert "the output transform failed" in trial["error"]  # an errored trial, never a failed one


def test_without_bun_javascript_runs_with_node_and_typescript_errors_its_test(byok_env, tmp_path, monkeypatch):
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    monkeypatch.setenv("AGENTSPROOF_BUN", str(tmp_path / "no-bun"))  # no bun to be found
    byok_env.add(Rule(reply="hello there", user_contains="Say hi", judge=False))
    byok_env.add(Rule(reply="  goodbye \n", user_contains="Say bye", judge=False))
    trials = _run(tmp_path, "upper.yaml", (30,))  # an item errored: exit 30
    own = trials["own-inline"]  # inline JavaScript: node runs it
    assert own["status"] == "scored" and own["response"] == "Say bye -> goodbye!", own
    shout = trials["shout"]  # upper.ts needs bun: that test's trials error with the reason, the other test runs
    assert shout["status"] == "errored" and "default_test.options.transform" in shout["error"] and "bun" in shout["error"], shout
