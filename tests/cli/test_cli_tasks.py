"""Several tasks per eval.yaml: every task is a case of the same item (v2 ``tasks:``; v1 with --all-tasks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Rule, make_plugin, read_json, run_cli

MARK = "SKILLMARK"


def _task(k: int, check: str = "hello") -> dict:
    return {"name": f"case-{k}", "instruction": f"TASK-{k}: greet the visitor.", "graders": [{"type": "deterministic", "checks": [check]}]}


def _reply(baseline_ok: set[int]):
    def reply(req: dict) -> str:
        system = req["messages"][0]["content"]
        user = req["messages"][-1]["content"]
        k = int(user.split("TASK-", 1)[1].split(":", 1)[0])
        if MARK in system or k in baseline_ok:
            return f"hello from task {k}"
        return f"nope {k}"

    return reply


def _plugin(tmp_path: Path, ev: dict) -> Path:
    make_plugin(tmp_path, skills={"greeter": {"prompt": f"{MARK}: greet with hello.\n", "eval": ev}})
    return tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"


def _item(out: Path) -> dict:
    return read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]


def test_v2_tasks_are_cases_of_one_item(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply=_reply({4, 5}), judge=False))
    path = _plugin(tmp_path, {"version": "2", "defaults": {"trials": 2}, "tasks": [_task(k) for k in range(1, 6)]})
    out = tmp_path / "out"
    code, stdout, err = run_cli(["eval", path, "--model", "m", "--output", out])
    assert code == 0, err
    # 2 trials per case and arm, each case's own prompt, the arms' trial i on the same case
    users = [r["messages"][-1]["content"] for r in srv.trial_requests()]
    assert len(users) == 5 * 2 * 2
    assert {u.split(":")[0] for u in users} == {f"TASK-{k}" for k in range(1, 6)}
    item = _item(out)
    assert item["trials_requested"] == 10
    for arm in ("with_arm", "without_arm"):
        trials = item[arm]["trials"]
        assert [t["case"] for t in trials] == [f"case-{(i % 5) + 1}" for i in range(10)]
    s = item["stats"]
    cases = s["cases"]
    assert cases["count"] == 5 and (cases["wins"], cases["ties"], cases["losses"]) == (3, 2, 0)
    assert [r["delta"] for r in cases["rows"]] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert cases["sign_test_p"] == pytest.approx(1 / 8)
    assert item["delta"] == pytest.approx(0.6) and item["grade"] == "A"
    assert s["question"] == "tasks" and "tasks like these" in s["delta_ci_method"] and "sign-flip" in s["p_value_method"]
    assert "stratified" in s["questions"]["cases"]["p_value_method"]
    assert s["verdict"] in ("settled", "underpowered")
    assert f"verdict: {s['verdict']}" in stdout or s["verdict"] in stdout
    html = (out / "demo-plugin" / "greeter-eval.html").read_text()
    md = (out / "demo-plugin" / "greeter-eval.md").read_text()
    for report in (html, md):
        assert "case-5" in report and "3 won" in report
        assert "tasks like these (b)" in report and "on these cases (a): [" in report  # the question the grade answers, and the other one


def test_item_delta_is_the_mean_of_case_deltas(byok_env, tmp_path):
    """Case 2 loses two of its three baseline trials to errors: it still weighs half (pooled trials would say 0.75)."""
    srv = byok_env
    srv.add(Rule(reply=_reply({2}), judge=False))
    srv.add(Rule(status=400, message="bad case", system_contains="helpful assistant", user_contains="TASK-2", judge=False, times=2))
    path = _plugin(tmp_path, {"version": "2", "defaults": {"trials": 3}, "tasks": [_task(1), _task(2)]})
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--abort-after", "0"])
    item = _item(out)
    rows = item["stats"]["cases"]["rows"]
    assert rows[0]["delta"] == 1.0 and rows[1]["delta"] == 0.0 and rows[1]["errored"] == 2 and rows[1]["n_without"] == 1
    assert item["without_arm"]["mean_score"] == pytest.approx(0.25)
    assert item["delta"] == pytest.approx(0.5) and item["stats"]["delta"] == pytest.approx(0.5)


def test_v1_tasks_first_only_unless_all_tasks(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply=_reply(set()), judge=False))
    path = _plugin(tmp_path, {"version": "1", "defaults": {"trials": 1}, "tasks": [_task(1), _task(2), _task(3)]})
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "a"])
    assert code == 0, err
    assert {r["messages"][-1]["content"][:6] for r in srv.trial_requests()} == {"TASK-1"}
    item = _item(tmp_path / "a")
    assert item["task_name"] == "case-1" and item["stats"]["cases"]["count"] == 1
    assert item["with_arm"]["trials"][0]["case"] is None

    srv.requests.clear()
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "b", "--all-tasks"])
    assert code == 0, err
    assert {r["messages"][-1]["content"][:6] for r in srv.trial_requests()} == {"TASK-1", "TASK-2", "TASK-3"}
    data = read_json(tmp_path / "b" / "demo-plugin" / "greeter-eval.json")
    assert data["settings"]["all_tasks"] is True and data["items"][0]["stats"]["cases"]["count"] == 3


def test_resume_keeps_the_cases_and_a_changed_task_is_refused(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply=_reply(set()), judge=False))
    ev = {"version": "2", "defaults": {"trials": 1}, "tasks": [_task(1), _task(2)]}
    path = _plugin(tmp_path, ev)
    out = tmp_path / "out"
    assert run_cli(["eval", path, "--model", "m", "--output", out])[0] == 0
    srv.requests.clear()
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--resume"])
    assert code == 0, err
    assert srv.trial_requests() == []  # every trial came from the journal
    assert [t["case"] for t in _item(out)["with_arm"]["trials"]] == ["case-1", "case-2"]
    ev["tasks"][1]["instruction"] = "TASK-2: something else."
    _plugin(tmp_path, ev)
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--resume"])
    assert code == 30 and "the tasks changed" in err and len(err.strip().splitlines()) == 1


def test_task_workspace_needs_an_agent_trial(byok_env, tmp_path):
    t = dict(_task(1), workspace="seed")
    path = _plugin(tmp_path, {"version": "2", "tasks": [t, _task(2)]})
    (path.parent / "seed").mkdir()
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "tasks[0].workspace" in err and "agent" in err
    assert "Traceback" not in err


def test_fail_on_underpowered_turns_the_verdict_into_a_ci_failure(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply=_reply(set()), judge=False))
    path = _plugin(tmp_path, {"version": "2", "defaults": {"trials": 3}, "task": _task(1)})
    args = ["eval", path, "--model", "m", "--output", tmp_path / "out", "--ci"]
    code, out, err = run_cli(args)
    assert code == 0, err
    assert "[underpowered]" in out and "underpowered: 1 of 1 item" in out
    code, out, err = run_cli(args + ["--fail-on-underpowered"])
    assert code == 1, err
    # cases whose interval (tasks like these: it assumes nothing about unseen tasks, so
    # six agreeing cases are not enough; fifteen are) sits in one band: settled, so the flag passes
    path = _plugin(tmp_path, {"version": "2", "defaults": {"trials": 2}, "tasks": [_task(k) for k in range(1, 16)]})
    code, out, err = run_cli(args + ["--fail-on-underpowered"])
    item = _item(tmp_path / "out")
    assert item["stats"]["verdict"] == "settled", item["stats"]["verdict_reasons"]
    assert code == 0, out + err
