"""``agentsproof ablate`` end to end on the scripted server, on a skill with planted
sections (the shipped evals/ablation-demo): the model writes the ticket line only when
"Ticket line" is in its prompt and the sign-off when either of two redundant sections is,
and nothing reads the "History" section. ablate must call the ticket line needed, the
history removable, each sign-off section removable alone, and catch that the two
redundant sections are not removable together."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import Rule, read_json, run_cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "evals" / "ablation-demo"


def _system(req: dict) -> str:
    return "".join(m.get("content") or "" for m in req["messages"] if m.get("role") == "system")


def planted(req: dict) -> str:
    """A model that does what the sections it was given say, and nothing else."""
    system = _system(req)
    lines = []
    if "`Ticket: REL-`" in system:
        lines.append("Ticket: REL-0")
    lines.append("Search now finds accented words.")
    if "Shipped by Acme" in system:
        lines.append("Shipped by Acme")
    return "\n".join(lines)


def test_ablate_picks_the_planted_sections_apart(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply=planted, judge=False))
    demo = tmp_path / "ablation-demo"
    shutil.copytree(DEMO, demo)
    out = tmp_path / "out"
    code, stdout, err = run_cli(
        ["ablate", demo / "skills" / "release-notes" / "eval.yaml", "--model", "m", "--output", out, "--trials", "20", "--margin", "0.25"]
    )
    assert code == 0, err
    folder = out / "ablation-demo"
    data = read_json(folder / "release-notes-ablation.json")
    verdicts = {p["title"]: p["verdict"] for p in data["parts"]}
    assert verdicts == {"Ticket line": "needed", "History of the channel": "removable", "Sign-off": "removable", "Closing line": "removable"}, data["parts"]
    ticket = next(p for p in data["parts"] if p["title"] == "Ticket line")
    assert ticket["effect"] < -0.4 and ticket["interval"][1] < 0
    assert all(p["tokens"] > 0 for p in data["parts"]) and data["whole"]["delta"] > 0.9
    small = data["smallest"]
    assert set(small["removed"]) == {"section-2-history-of-the-channel", "section-3-sign-off", "section-4-closing-line"}
    assert small["together_not_removable"] is True and small["vs_whole"]["non_inferior"] is False, small
    assert small["measured_in"] == "the same run, on the same cases and trials as the whole skill"
    skill_md = (Path(small["folder"]) / "SKILL.md").read_text()
    assert "## Ticket line" in skill_md and "## Sign-off" not in skill_md and "## History" not in skill_md and skill_md.startswith("---\nname: release-notes")
    # every arm ran on the same cases: the whole skill and no skill (2 arms), four single-part arms, the smallest skill
    assert len(srv.trial_requests()) == 20 * 2 * (2 + 4 + 1)
    md = (folder / "release-notes-ablation.md").read_text()
    html = (folder / "release-notes-ablation.html").read_text()
    assert "| Ticket line | section |" in md and "not all of them together" in md
    assert "<svg" in html and "removable" in html and "Removable:" in html
    assert "Ticket line" in stdout and "needed" in stdout
    assert data["manifest"]["trials"]["count"] == len(srv.trial_requests()) == data["calls"]["trials"] == data["calls"]["fixed_trials"]
    # the run's own report holds every arm and the ablation as a section of its own
    run = read_json(folder / data["run_report"])
    assert run["settings"]["ablation"]["parts"] == data["parts"] and len(run["items"]) == 6
    run_html = (folder / data["run_report"].replace(".json", ".html")).read_text()
    run_md = (folder / data["run_report"].replace(".json", ".md")).read_text()
    assert 'id="ablation"' in run_html and 'effect of removing each part"' in run_html and "not all of them together" in run_html and "Removable:" in run_html
    assert "## Ablation: release-notes" in run_md and "| Ticket line | section |" in run_md and "| needed |" in run_md


def test_ablate_plan_lists_the_parts_and_calls_nothing(byok_env, tmp_path):
    code, stdout, err = run_cli(["ablate", DEMO / "skills" / "release-notes" / "eval.yaml", "--model", "m", "--plan", "--output", tmp_path / "o"])
    assert code == 0, err
    assert "4 parts, 6 arms" in stdout and "section-1-ticket-line" in stdout and "tokens" in stdout
    # 12 trials an arm (2 tasks x 6); the part arms have no baseline call: 6 arms x 12, not 10 x 12
    assert "total: 72 LLM calls" in stdout, stdout
    assert byok_env.trial_requests() == []


def test_ablate_refuses_a_skill_with_nothing_to_cut(byok_env, tmp_path):
    skill = tmp_path / "p" / "skills" / "flat"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: flat\ndescription: one paragraph\n---\nAnswer briefly.\n")
    (skill / "eval.yaml").write_text(
        'version: "2"\nskill: SKILL.md\ntask:\n  name: t\n  instruction: hi\n  graders:\n    - type: deterministic\n      checks: {mustContain: ["x"]}\n'
    )
    code, _out, err = run_cli(["ablate", skill / "eval.yaml", "--model", "m", "--output", tmp_path / "o"])
    assert code == 30 and "nothing to ablate" in err and "Traceback" not in err, err
    assert err.strip().count("\n") == 0


def test_ablate_a_folder_and_eval_all_ablate_run_every_eval_that_has_parts(byok_env, tmp_path):
    byok_env.add(Rule(reply=planted, judge=False))
    plugin = tmp_path / "plug"
    shutil.copytree(DEMO / "skills", plugin / "skills")
    flat = plugin / "skills" / "flat"
    flat.mkdir()
    (flat / "SKILL.md").write_text("---\nname: flat\ndescription: one paragraph\n---\nAnswer briefly.\n")
    (flat / "eval.yaml").write_text(
        'version: "2"\nskill: SKILL.md\ntask:\n  name: t\n  instruction: hi\n  graders:\n    - type: deterministic\n      checks: {mustContain: ["x"]}\n'
    )
    for command in (["ablate", plugin, "--margin", "0.25"], ["eval-all", plugin, "--ablate"], ["eval-all", plugin, "--ablate", "--adaptive"]):
        out = tmp_path / f"out-{len(command)}"
        code, stdout, err = run_cli([*command, "--model", "m", "--output", out, "--trials", "4"])
        assert code == 0, err
        assert "ablate release-notes: 4 parts" in stdout and "Ticket line" in stdout
        assert "not ablated:" in err and "flat has no '## ' sections" in err
        data = read_json(next(out.rglob("release-notes-ablation.json")))
        assert data["adaptive"] is ("--adaptive" in command) and data["cap"] == 8


def _ablate(srv, tmp_path, name: str, *extra: str) -> tuple[dict, int]:
    demo = tmp_path / name / "ablation-demo"
    shutil.copytree(DEMO, demo)
    before = len(srv.trial_requests())
    out = tmp_path / name / "out"
    code, _stdout, err = run_cli(["ablate", demo / "skills" / "release-notes" / "eval.yaml", "--model", "m", "--output", out, "--margin", "0.25", *extra])
    assert code == 0, err
    return read_json(out / "ablation-demo" / "release-notes-ablation.json"), len(srv.trial_requests()) - before


def test_adaptive_ablation_calls_at_most_half_and_keeps_the_verdicts(byok_env, tmp_path):
    """The Goal of issue 49: at the same cap, --adaptive makes at most half the calls of fixed
    arms, and the verdicts stay right (the redundant pair still caught in the confirmation)."""
    byok_env.add(Rule(reply=planted, judge=False))
    adaptive, adaptive_calls = _ablate(byok_env, tmp_path, "adaptive", "--trials", "40", "--adaptive")
    verdicts = {p["title"]: p["verdict"] for p in adaptive["parts"]}
    assert verdicts == {"Ticket line": "needed", "History of the channel": "removable", "Sign-off": "removable", "Closing line": "removable"}, adaptive["parts"]
    assert adaptive["smallest"]["together_not_removable"] is True and adaptive["smallest"]["vs_whole"]["non_inferior"] is False
    # fixed arms at this cap (80 trials an arm: 2 cases x 40): the whole skill and no skill, 4 parts, the smallest skill;
    # the test above measures that count on the server (fixed_trials there == the requests made)
    fixed_calls = 80 * 7
    assert adaptive_calls == adaptive["calls"]["trials"] and 2 * adaptive_calls <= fixed_calls, (adaptive_calls, fixed_calls)
    # docs/ablation.md prints this run's figures
    page = " ".join((ROOT / "docs" / "ablation.md").read_text(encoding="utf-8").split())
    stops = {p["title"]: p["trials"] for p in adaptive["parts"]}
    assert f"{adaptive_calls} trials instead of {fixed_calls}" in page, "docs/ablation.md no longer states the demo's --adaptive figures"
    assert f"stops *needed* after {stops['Ticket line']} trials" in page and f"*removable* after {stops['History of the channel']}" in page
    ticket = next(p for p in adaptive["parts"] if p["title"] == "Ticket line")
    assert ticket["stop"] == "needed" and ticket["trials"] < adaptive["cap"] == 80
    assert adaptive["adaptive"] is True and adaptive["level"] > 0.95 and adaptive["calls"]["fixed_trials"] == fixed_calls


def test_adaptive_rounds_resume_from_the_journal_and_decide_the_same_stops(byok_env, tmp_path):
    """Every round journals its trials: run again with --resume, the rounds replay from the
    journal (no call) and stop each part's arm where the first run did."""
    byok_env.add(Rule(reply=planted, judge=False))
    demo = tmp_path / "ablation-demo"
    shutil.copytree(DEMO, demo)
    args = [
        "ablate",
        demo / "skills" / "release-notes" / "eval.yaml",
        "--model",
        "m",
        "--output",
        tmp_path / "out",
        "--margin",
        "0.25",
        "--trials",
        "10",
        "--adaptive",
    ]
    code, _o, err = run_cli(args)
    assert code == 0, err
    first = read_json(tmp_path / "out" / "ablation-demo" / "release-notes-ablation.json")
    calls = len(byok_env.trial_requests())
    assert calls == first["calls"]["trials"] < first["calls"]["fixed_trials"]
    code, _o, err = run_cli([*args, "--resume"])
    assert code == 0, err
    again = read_json(tmp_path / "out" / "ablation-demo" / "release-notes-ablation.json")
    assert len(byok_env.trial_requests()) == calls
    assert [(p["trials"], p["stop"], p["verdict"], p["effect"]) for p in again["parts"]] == [
        (p["trials"], p["stop"], p["verdict"], p["effect"]) for p in first["parts"]
    ]


def test_an_interrupted_adaptive_ablation_is_reported_incomplete_verifies_and_resumes(byok_env, tmp_path):
    """--max-calls stops round one: exit 30, the report says incomplete and verifies, no
    smallest-skill arm is started; --resume runs only the trials still missing."""
    byok_env.add(Rule(reply=planted, judge=False))
    demo = tmp_path / "ablation-demo"
    shutil.copytree(DEMO, demo)
    folder = tmp_path / "out" / "ablation-demo"
    args = [
        "ablate",
        demo / "skills" / "release-notes" / "eval.yaml",
        "--model",
        "m",
        "--output",
        tmp_path / "out",
        "--margin",
        "0.25",
        "--trials",
        "10",
        "--adaptive",
    ]
    code, _o, err = run_cli([*args, "--max-calls", "20"])
    assert code == 30 and "Traceback" not in err, err
    assert len(byok_env.trial_requests()) == 20
    data = read_json(folder / "release-notes-ablation.json")
    run = read_json(folder / data["run_report"])
    assert run["incomplete"] is True and run["verdict"] == "INCOMPLETE" and "--max-calls 20" in run["incomplete_reason"]
    assert data["smallest"] is None and data["calls"]["trials"] == 20 and "interrupted" in {p["stop"] for p in data["parts"]}
    code, out, err = run_cli(["verify", folder / data["run_report"]])
    assert code == 0, out + err
    code, _o, err = run_cli([*args, "--resume"])
    assert code == 0, err
    again = read_json(folder / "release-notes-ablation.json")
    assert len(byok_env.trial_requests()) == again["calls"]["trials"] == 30  # round one finished (6 arms x 5), nothing run twice
    assert {p["stop"] for p in again["parts"]} <= {"needed", "removable", "unclear", "cap"}


def test_max_calls_holds_for_the_whole_adaptive_ablation_not_each_round(byok_env, tmp_path):
    """One --max-calls for all the rounds: round one makes 30 calls, round two gets the 10 left."""
    byok_env.add(Rule(reply=planted, judge=False))
    demo = tmp_path / "ablation-demo"
    shutil.copytree(DEMO, demo)
    args = ["ablate", demo / "skills" / "release-notes" / "eval.yaml", "--model", "m", "--output", tmp_path / "out", "--margin", "0.25"]
    code, _o, err = run_cli([*args, "--trials", "40", "--adaptive", "--max-calls", "40"])
    assert code == 30 and "Traceback" not in err, err
    assert len(byok_env.trial_requests()) == 40
    data = read_json(tmp_path / "out" / "ablation-demo" / "release-notes-ablation.json")
    run = read_json(tmp_path / "out" / "ablation-demo" / data["run_report"])
    assert run["incomplete"] is True and "--max-calls 40" in run["incomplete_reason"] and data["calls"]["trials"] == 40


AGENT = """import os
skill = os.environ.get("AGENTSPROOF_SKILL_FILE")
text = open(skill).read() if skill else ""
lines = ["Ticket: REL-0"] if "`Ticket: REL-`" in text else []
lines.append("Search now finds accented words.")
if "Shipped by Acme" in text:
    lines.append("Shipped by Acme")
print("\\n".join(lines))
"""


def test_adaptive_ablation_on_an_agent_target_installs_each_variant_and_verifies(tmp_path):
    """A command agent (a real process) that follows the installed SKILL.md: each round runs
    the variants as installed skill folders; the report verifies."""
    demo = tmp_path / "ablation-demo"
    shutil.copytree(DEMO, demo)
    (tmp_path / "agent.py").write_text(AGENT)
    targets = tmp_path / "targets.yaml"
    targets.write_text(f'agent:\n  type: command\n  command: ["python3", "{tmp_path / "agent.py"}", "{{prompt}}"]\n  sandbox: false\n')
    out = tmp_path / "out"
    args = [
        "ablate",
        demo / "skills" / "release-notes" / "eval.yaml",
        "--target",
        "agent",
        "--targets",
        targets,
        "--output",
        out,
        "--trials",
        "10",
        "--adaptive",
    ]
    code, _o, err = run_cli([*args, "--margin", "0.25"])
    assert code == 0, err
    data = read_json(out / "ablation-demo" / "release-notes-ablation.json")
    ticket = next(p for p in data["parts"] if p["title"] == "Ticket line")
    assert ticket["verdict"] == "needed" and ticket["stop"] == "needed" and ticket["effect"] == -0.5
    run = read_json(out / "ablation-demo" / data["run_report"])
    assert {it["target"] for it in run["items"]} == {"agent"}
    code, text, err = run_cli(["verify", out / "ablation-demo" / "release-notes-ablation.json"])
    assert code == 0, text + err
