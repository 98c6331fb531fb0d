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
