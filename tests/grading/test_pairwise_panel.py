"""A judge panel (eval.yaml ``judge_models``) on the pairwise pass: every model asked both
orders, the pair's verdict the models' majority, their split rate and each model's position
consistency in the report; one failing model errors the pair."""

from __future__ import annotations

import json

from conftest import Rule, make_plugin, read_json, run_cli

PAIR = "You compare two AI assistant answers"
MARK = "PAIRSKILL"
WITH, WITHOUT = "hello friend", "good day"


def _plugin(tmp_path, trials=2, tasks=3, extra=()):  # trials per case
    graders = [{"type": "deterministic", "checks": ["hello"]}, *extra, {"type": "pairwise"}]
    ev = {"version": "2", "judge_models": ["j1", "j2", "j3"], "defaults": {"trials": trials},
          "tasks": [{"name": f"t{k}", "instruction": f"TASK-{k} greet me", "graders": graders} for k in range(tasks)]}
    make_plugin(tmp_path, skills={"greeter": {"prompt": f"{MARK}: greet with hello.\n", "eval": ev}})
    return tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"


def _first(req: dict) -> str:
    return req["messages"][1]["content"].split("<<<A\n", 1)[1].split("\nA>>>", 1)[0]


def _pick(req: dict, arm: str) -> str:
    """'A' or 'B': the position of ``arm``'s answer in this request."""
    return "A" if (_first(req) == WITH) == (arm == "with") else "B"


# What each panel model prefers, per task: an arm (read from the answers, so both orders
# agree) or "first" (always answer A: position-inconsistent, a tie).
PREFERS = {
    "j1": {"TASK-0": "with", "TASK-1": "with", "TASK-2": "with"},
    "j2": {"TASK-0": "with", "TASK-1": "without", "TASK-2": "without"},
    "j3": {"TASK-0": "with", "TASK-1": "first", "TASK-2": "without"},
}


def _panel_judge(req: dict) -> str:
    user = req["messages"][1]["content"]
    task = next(t for t in ("TASK-0", "TASK-1", "TASK-2") if t in user)
    want = PREFERS[req["model"]][task]
    better = "A" if want == "first" else _pick(req, want)
    return json.dumps({"reasoning": f"{req['model']} on {task}", "better": better})


def _arms(srv) -> None:
    srv.add(Rule(reply=WITHOUT, judge=False))
    srv.add(Rule(reply=WITH, system_contains=MARK, judge=False))


def _pair_requests(srv) -> list[dict]:
    return [r for r in srv.requests if PAIR in r["messages"][0]["content"]]


def test_the_panel_majority_its_split_rate_and_a_position_inconsistent_member(byok_env, tmp_path):
    srv = byok_env
    _arms(srv)
    srv.add(Rule(reply=_panel_judge, system_contains=PAIR))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", _plugin(tmp_path), "--model", "m", "--output", out])
    assert code == 0, err
    stats = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]["stats"]
    assert "judge_panel" not in stats  # no verdict scored per trial: the panel's record is the pairwise one
    pw = stats["pairwise"]
    # TASK-0: all three prefer the with-arm; TASK-1: with / without / tie -> no majority, a
    # tie; TASK-2: j2 and j3 outvote j1 -> without. Two pairs per task.
    assert (pw["pairs"], pw["with_preferred"], pw["ties"], pw["without_preferred"]) == (6, 2, 2, 2)
    assert pw["rate"] == 0.5 and pw["errored"] == 0
    assert pw["disagreements"] == 2  # both ties come from disagreement, not from judges answering tie
    panel = pw["panel"]
    assert panel["models"] == ["j1", "j2", "j3"] and panel["combine"] == "majority"
    assert panel["pairs"] == 6 and panel["disagreements"] == 4 and abs(panel["disagreement_rate"] - 4 / 6) < 1e-9
    members = {m["model"]: m for m in panel["members"]}
    assert members["j1"]["position_consistency"] == 1.0 and members["j1"]["with_preferred"] == 6
    assert members["j2"]["position_consistency"] == 1.0 and members["j2"]["without_preferred"] == 4
    assert members["j3"]["position_consistent"] == 4 and abs(members["j3"]["position_consistency"] - 4 / 6) < 1e-9
    assert members["j3"]["ties"] == 2 and all(m["usage"]["total_tokens"] > 0 for m in members.values())
    by_trial = {row["trial"]: row for row in panel["verdicts"]}
    assert sorted(by_trial) == list(range(6))
    assert by_trial[1] == {"trial": 1, "verdict": "tie", "models": ["with", "without", "tie"], "position_consistent": [True, True, False]}
    assert by_trial[2]["verdict"] == "without" and by_trial[2]["models"] == ["with", "without", "without"]
    # every model was asked both orders of every pair; the run's single judge model was not asked
    calls = _pair_requests(srv)
    assert pw["calls"] == len(calls) == 36
    assert sorted({r["model"] for r in calls}) == ["j1", "j2", "j3"]
    for model in ("j1", "j2", "j3"):
        firsts = [_first(r) for r in calls if r["model"] == model]
        assert firsts.count(WITH) == firsts.count(WITHOUT) == 6
    md = (out / "demo-plugin" / "greeter-eval.md").read_text(encoding="utf-8")
    html = (out / "demo-plugin" / "greeter-eval.html").read_text(encoding="utf-8")
    assert "judge panel j1, j2, j3 (majority): the models split on 4 of 6 pairs (67%)" in md
    assert "position consistency j1 100% · j2 100% · j3 67%" in md
    assert "the models split on 4 of 6 pairs (67%)" in html and "j3 67%" in html


def test_one_failing_panel_model_errors_the_pair_with_its_reason(byok_env, tmp_path):
    srv = byok_env
    _arms(srv)
    srv.add(Rule(reply=_panel_judge, system_contains=PAIR))
    srv.add(Rule(status=400, message="model j2 is not allowed", system_contains=PAIR, model="j2", user_contains="TASK-1"))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", _plugin(tmp_path), "--model", "m", "--output", out])
    assert code == 0, err
    pw = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]["stats"]["pairwise"]
    # the TASK-1 pairs are errored, not ties: excluded from the figures and counted
    assert pw["errored"] == 2 and pw["pairs"] == 4
    assert (pw["with_preferred"], pw["ties"], pw["without_preferred"]) == (2, 0, 2)
    assert pw["first_error"].startswith("judge model j2: judge call failed") and "not allowed" in pw["first_error"]
    panel = pw["panel"]
    assert panel["pairs"] == 4 and panel["disagreements"] == 2  # TASK-2 split; TASK-0 unanimous
    members = {m["model"]: m for m in panel["members"]}
    assert members["j2"]["errored"] == 2 and members["j1"]["errored"] == members["j3"]["errored"] == 0
    assert members["j3"]["position_consistency"] == 1.0  # its inconsistent pairs were the errored ones
    errored = [row for row in panel["verdicts"] if row["verdict"] is None]
    assert [row["trial"] for row in errored] == [1, 4]
    assert all(row["models"][1] is None and row["position_consistent"][1] is None and "j2" in row["error"] for row in errored)
    md = (out / "demo-plugin" / "greeter-eval.md").read_text(encoding="utf-8")
    assert "2 errored" in md and "the models split on 2 of 4 pairs (50%)" in md


def test_the_plan_counts_every_panel_model(byok_env, tmp_path):
    path = _plugin(tmp_path, extra=[{"type": "assertions", "assertions": ["greets"]}])
    code, out, err = run_cli(["eval", path, "--model", "gpt-4o", "--plan"])
    assert code == 0, err
    assert byok_env.requests == []
    lines = {ln.split()[0]: ln.split() for ln in out.splitlines() if ln.startswith("  ")}
    assert lines["pairwise"][3] == "36"  # 6 pairs x 2 orders x 3 models, as the run above makes
    assert lines["judges"][2] == "36"  # 12 trials x 1 assertion x 3 models


def test_regrade_asks_the_panel_again(byok_env, tmp_path, monkeypatch):
    srv = byok_env
    _arms(srv)
    srv.add(Rule(reply=_panel_judge, system_contains=PAIR))
    out = tmp_path / "out"
    assert run_cli(["eval", _plugin(tmp_path), "--model", "m", "--output", out])[0] == 0
    run_json = out / "demo-plugin" / "greeter-eval.json"
    monkeypatch.setitem(PREFERS, "j3", {"TASK-0": "with", "TASK-1": "with", "TASK-2": "without"})  # j3 now reads both orders
    def trials() -> int:
        return sum(r["model"] == "m" for r in srv.requests)

    ran, asked = trials(), len(_pair_requests(srv))
    code, _, err = run_cli(["regrade", run_json, "--model", "m"])
    assert code == 0, err
    assert trials() == ran and len(_pair_requests(srv)) == asked + 36  # no trial ran; every model asked both orders again
    pw = read_json(run_json.with_name("greeter-eval-regraded.json"))["items"][0]["stats"]["pairwise"]
    # TASK-1 is now with (j1, j3) over without (j2)
    assert (pw["with_preferred"], pw["ties"], pw["without_preferred"]) == (4, 0, 2)
    assert {m["model"]: m["position_consistency"] for m in pw["panel"]["members"]} == {"j1": 1.0, "j2": 1.0, "j3": 1.0}
