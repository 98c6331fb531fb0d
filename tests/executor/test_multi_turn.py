"""Multi-turn trials (a task's ``turns:``): follow-up user messages sent one after another
in one conversation, the last reply graded. An ask-first skill (it asks a clarifying
question before answering) scores below the baseline on one turn and beats it when the
conversation has a second turn — run for real through the CLI on the scripted server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import Rule, ScriptedServer, make_plugin, read_json, run_cli, simple_eval

ASK_FIRST = "Before you answer, always ask which output format the user wants (ASKMARK)."


def ask_first(req: dict[str, Any]) -> str:
    users = [m["content"] for m in req["messages"] if m["role"] == "user"]
    if len(users) == 1:
        return "Which format would you like: a table or a list?"
    return "REGIONTABLE: north 1200, south 800"


def plugin(tmp_path: Path, turns: list[str]) -> Path:
    ev = simple_eval([{"type": "deterministic", "checks": ["north 1200", "REGIONTABLE"]}], trials=3, instruction="Summarise the revenue by region.")
    if turns:
        ev["task"]["turns"] = turns
    return make_plugin(tmp_path, skills={"ask-first": {"prompt": ASK_FIRST, "eval": ev}}) / "skills" / "ask-first"


def run(tmp_path: Path, srv: ScriptedServer, turns: list[str]) -> dict[str, Any]:
    srv.add(Rule(reply=ask_first, system_contains="ASKMARK"), Rule(reply="north 1200, south 800 (a list)"))
    out = tmp_path / "runs"
    code, _, stderr = run_cli(["eval", plugin(tmp_path, turns), "--output", out, "--model", "test-model"])
    assert code == 0, stderr
    return read_json(next(out.rglob("*.json")))["items"][0]


def test_one_turn_an_ask_first_skill_loses_to_the_baseline(tmp_path: Path, byok_env: ScriptedServer) -> None:
    item = run(tmp_path, byok_env, [])
    assert item["with_arm"]["mean_score"] == 0.0 and item["without_arm"]["mean_score"] == 0.5 and item["grade"] == "F"
    assert all("Which format" in t["response"] for t in item["with_arm"]["trials"])


def test_with_a_second_turn_the_ask_first_skill_beats_the_baseline(tmp_path: Path, byok_env: ScriptedServer) -> None:
    item = run(tmp_path, byok_env, ["A table, please."])
    assert item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.5 and item["grade"] == "A"
    trial = item["with_arm"]["trials"][0]
    conversation = [(e["role"], e["text"]) for e in trial["log"] if e["role"] in ("user", "assistant")]
    assert conversation == [("user", "Summarise the revenue by region."), ("assistant", "Which format would you like: a table or a list?"),
                            ("user", "A table, please."), ("assistant", trial["response"])]
    second = [r for r in byok_env.requests if "ASKMARK" in str(r["messages"]) and len(r["messages"]) == 4]
    assert len(second) == 3 and second[0]["messages"][2] == {"role": "assistant", "content": "Which format would you like: a table or a list?"}


def test_a_simulated_user_answers_the_question_and_meets_both_arms_alike(tmp_path: Path, byok_env: ScriptedServer) -> None:
    from agentsproof.executor.simulator import MARKER

    asked: list[str] = []

    def simulated(req: dict[str, Any]) -> str:
        transcript = req["messages"][-1]["content"]
        asked.append(transcript)
        return "A table, please." if "Which format" in transcript and "REGIONTABLE" not in transcript else "DONE"

    byok_env.add(Rule(reply=simulated, system_contains=MARKER))
    ev_dir = plugin(tmp_path, [])
    import yaml

    ev = yaml.safe_load((ev_dir / "eval.yaml").read_text())
    ev["task"]["user"] = {"persona": "A sales manager in a hurry.", "goal": "The revenue by region as a table.", "max_turns": 2}
    (ev_dir / "eval.yaml").write_text(yaml.safe_dump(ev))
    byok_env.add(Rule(reply=ask_first, system_contains="ASKMARK"), Rule(reply="north 1200, south 800 (a list)", judge=None, system_contains="helpful"))
    out = tmp_path / "runs"
    code, _, stderr = run_cli(["eval", ev_dir, "--output", out, "--model", "test-model"])
    assert code == 0, stderr
    item = read_json(next(out.rglob("*.json")))["items"][0]
    assert item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.5 and item["grade"] == "A"
    with_log = [(e["role"], e["text"]) for e in item["with_arm"]["trials"][0]["log"] if e["role"] in ("user", "assistant")]
    assert with_log[2] == ("user", "A table, please.")  # the simulated user's answer, sent in the conversation
    # the simulator was asked once per distinct state: with-arm after the question (then DONE after the table),
    # baseline after its list; the three trials of an arm met the same user without asking again
    assert len(asked) == 3, asked


def scoped(tmp_path: Path, graders: list[dict[str, Any]], turns: list[str], **task: Any) -> Path:
    ev = simple_eval(graders, trials=2, instruction="Summarise the revenue by region.")
    ev["task"].update(turns=turns, **task) if turns else ev["task"].update(task)
    return make_plugin(tmp_path, skills={"ask-first": {"prompt": ASK_FIRST, "eval": ev}}) / "skills" / "ask-first"


def test_graders_scoped_to_a_turn_grade_that_turns_reply(tmp_path: Path, byok_env: ScriptedServer) -> None:
    """``turn: 1`` grades the question (the table check fails), ``turn: 2`` the table (it
    passes), ``turn: all`` every reply joined; an unscoped grader the last reply."""
    byok_env.add(Rule(reply=ask_first, system_contains="ASKMARK"), Rule(reply="north 1200, south 800 (a list)"))
    graders = [
        {"type": "deterministic", "checks": ["REGIONTABLE"], "turn": 1},
        {"type": "deterministic", "checks": ["REGIONTABLE"], "turn": 2},
        {"type": "deterministic", "checks": ["Which format", "REGIONTABLE"], "turn": "all"},
        {"type": "deterministic", "checks": {"mustNotContain": ["Which format"]}},
    ]
    out = tmp_path / "runs"
    code, _, stderr = run_cli(["eval", scoped(tmp_path, graders, ["A table, please."]), "--output", out, "--model", "test-model"])
    assert code == 0, stderr
    item = read_json(next(out.rglob("*.json")))["items"][0]
    for t in item["with_arm"]["trials"]:
        assert [g["score"] for g in t["graders"]] == [0.0, 1.0, 1.0, 1.0], t["graders"]
        assert t["replies"] == ["Which format would you like: a table or a list?", "REGIONTABLE: north 1200, south 800"]
        assert t["response"] == t["replies"][-1]
    for t in item["without_arm"]["trials"]:  # the baseline answered the same both times: no table in any turn
        assert [g["score"] for g in t["graders"]] == [0.0, 0.0, 0.0, 1.0] and len(t["replies"]) == 2
    # regrade reads the recorded replies: the first grader moved to turn 2 passes, with no new call
    import yaml

    path = next(tmp_path.rglob("eval.yaml"))
    ev = yaml.safe_load(path.read_text())
    ev["task"]["graders"][0]["turn"] = 2
    path.write_text(yaml.safe_dump(ev))
    calls = len(byok_env.requests)
    code, _, stderr = run_cli(["regrade", next(out.rglob("*.json"))])
    assert code == 0, stderr
    again = read_json(next(out.rglob("*-regraded.json")))["items"][0]
    assert [g["score"] for g in again["with_arm"]["trials"][0]["graders"]] == [1.0, 1.0, 1.0, 1.0]
    assert len(byok_env.requests) == calls


def test_a_turn_the_conversation_never_reached_scores_zero_with_the_reason(tmp_path: Path, byok_env: ScriptedServer) -> None:
    from agentsproof.executor.simulator import MARKER

    byok_env.add(Rule(reply="DONE", system_contains=MARKER), Rule(reply="REGIONTABLE north 1200"))
    user = {"persona": "A manager.", "goal": "The revenue.", "max_turns": 2}
    graders = [{"type": "deterministic", "checks": ["REGIONTABLE"], "turn": 2}, {"type": "deterministic", "checks": ["REGIONTABLE"]}]
    out = tmp_path / "runs"
    code, _, stderr = run_cli(["eval", scoped(tmp_path, graders, [], user=user), "--output", out, "--model", "test-model"])
    assert code == 0, stderr
    trial = read_json(next(out.rglob("*.json")))["items"][0]["with_arm"]["trials"][0]
    assert trial["status"] == "scored" and trial["replies"] is None  # the user was done after the first reply
    first, last = trial["graders"]
    assert first["score"] == 0.0 and "the conversation ended after 1 turn, before turn 2" in first["reasoning"]
    assert last["score"] == 1.0


def test_turns_a_task_cannot_have_or_graders_that_cannot_take_one_are_refused(tmp_path: Path, byok_env: ScriptedServer) -> None:
    from conftest import assert_refused

    det = {"type": "deterministic", "checks": ["x"]}
    cases = [
        ([{**det, "turn": 2}], [], {}, ["task.graders[0].turn", "turn 2, but the task has one user message"]),
        ([det, {**det, "turn": 4}], ["more"], {}, ["task.graders[1].turn", "at most 2 user messages"]),
        ([{**det, "turn": 0}], ["more"], {}, ["task.graders[0].turn", "not a turn"]),
        ([{**det, "turn": True}], ["more"], {}, ["task.graders[0].turn", "not a turn"]),
        ([{"type": "files", "exists": ["a.txt"], "turn": 1}], ["more"], {}, ["task.graders[0].turn", "'files' grader grades the whole trial"]),
        ([{"type": "script", "script": "check.py", "turn": "all"}], ["more"], {}, ["task.graders[0].turn", "'script' grader"]),
    ]
    for n, (graders, turns, task, needles) in enumerate(cases):
        d = scoped(tmp_path / str(n), graders, turns, **task)
        assert_refused(["eval", d, "--output", tmp_path / "runs", "--model", "test-model"], [str(d / "eval.yaml"), *needles], srv=byok_env)
    # a simulated user can reach further turns: 1 + turns + max_turns is allowed
    d = scoped(tmp_path / "ok", [{**det, "turn": 4}], ["more"], user={"persona": "p", "goal": "g", "max_turns": 2})
    code, out, err = run_cli(["eval", d, "--plan", "--model", "test-model"])
    assert code == 0, err
