"""``agentsproof tune-description`` on the scripted server, deterministic: the scripted
model loads a skill when the prompt names two of its description's trigger words, and
proposes the descriptions each test scripts. A reworded description (same trigger words)
must not show a held-out gain; one that adds the users' words must, and only --write
changes SKILL.md."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from conftest import Rule
from openai_server import skill_loader

from agentsproof.commands.tune import MARKER, replace_description, split
from agentsproof.model.activation import ActivationPrompt

REPO = Path(__file__).resolve().parents[2]
ORIGINAL = "Builds charts from tabular data."
SKILL = f"---\nname: chart-maker\ndescription: {ORIGINAL}\n---\n# Chart maker\nCHARTBODY: pick a chart, label the axes.\n"
SHOULD = [
    "Draw a scatter graph of sales per region.", "Visualise these numbers as a diagram.", "A scatter diagram of price and rating.",
    "Make a graph to visualise the growth.", "Visualise revenue with a scatter plot.", "Give me a diagram and a graph of visits.",
    "Scatter graph of height against weight.", "Visualise the queue as a diagram, please.", "A graph, maybe a scatter one, of signups.",
    "Diagram or graph, whichever shows churn.", "Visualise churn: a scatter view.", "Turn this into a graph diagram.",
]
SHOULD_NOT = [
    "What are the totals and averages of each column in this CSV?", "Give me a short report of the missing values and outliers.",
    "Which column types does this file have?", "Summarises the contents of this CSV for me.", "Write a haiku about autumn.",
    "Review this SQL query.", "Translate this paragraph into French.", "What is the capital of Australia?",
]


def plugin(tmp_path: Path) -> Path:
    root = tmp_path / "tune-plugin"
    (root / "skills" / "chart-maker").mkdir(parents=True)
    (root / "skills" / "chart-maker" / "SKILL.md").write_text(SKILL)
    (root / "skills" / "csv-summary").mkdir(parents=True)
    shutil.copyfile(REPO / "evals" / "csv-plugin" / "skills" / "csv-summary" / "SKILL.md", root / "skills" / "csv-summary" / "SKILL.md")
    cfg = {"skill": "SKILL.md", "task": {"name": "t", "instruction": "Chart it.", "graders": [{"type": "deterministic", "checks": ["x"]}]},
           "activation": {"should": SHOULD, "should_not": [{"prompt": p, "type": "near-miss"} for p in SHOULD_NOT]}}
    (root / "skills" / "chart-maker" / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return root / "skills" / "chart-maker"


def serve(srv, proposals: list[str]) -> None:
    srv.add(Rule(reply=json.dumps({"descriptions": proposals}), user_contains=MARKER), Rule(reply=skill_loader()))


def test_a_reworded_description_shows_no_held_out_gain(byok_env, cli, tmp_path):
    serve(byok_env, ["From tabular data, builds charts.", "Charts, built from tabular data."])
    skill = plugin(tmp_path)
    before = (skill / "SKILL.md").read_text()
    code, out, err = cli(["tune-description", skill, "--model", "m", "--write"])
    assert code == 0, err
    assert "**Verdict: no held-out gain**" in out and "+0.00 [" in out
    lo, hi = [float(x) for x in out.split("original: +0.00 [", 1)[1].split("]", 1)[0].split(",")]
    assert lo < 0 < hi  # zero differences still get an honest interval, not [0, 0]
    assert "the held-out score stopped improving" in out
    assert (skill / "SKILL.md").read_text() == before  # --write needs a gain


def test_a_description_in_the_users_words_gains_and_write_changes_only_that_line(byok_env, cli, tmp_path):
    better = "Builds charts: any graph, scatter or diagram to visualise tabular data."
    serve(byok_env, ["From tabular data, builds charts.", better])
    skill = plugin(tmp_path)
    code, out, err = cli(["tune-description", skill, "--model", "m", "--rounds", "2"])
    assert code == 0, err
    assert "**Verdict: held-out gain**" in out and better in out and "pass --write" in out
    assert ORIGINAL in (skill / "SKILL.md").read_text()  # no --write: untouched
    # the model never saw a held-out prompt
    train, held = split([ActivationPrompt(p, True, "implicit") for p in SHOULD] + [ActivationPrompt(p, False, "near-miss") for p in SHOULD_NOT], 0.4, 0)
    asks = [m["content"] for r in byok_env.requests for m in r["messages"] if m["role"] == "user" and MARKER in m["content"]]
    assert asks and not any(p.text in a for p in held for a in asks)
    assert any(p.text in asks[0] for p in train if p.expect)  # it saw the train prompts it missed
    (skill / "SKILL.md").chmod(0o644)
    code, out, err = cli(["tune-description", skill, "--model", "m", "--rounds", "2", "--write"])
    assert code == 0 and "Wrote the new description" in out, err
    assert (skill / "SKILL.md").stat().st_mode & 0o777 == 0o644  # the file keeps its mode (not mkstemp's 0600)
    text = (skill / "SKILL.md").read_text()
    assert text == replace_description(SKILL, better) and "CHARTBODY" in text
    assert yaml.safe_load(text.split("---")[1])["description"] == better


def test_replace_description_keeps_everything_else():
    folded = "---\nname: x\ndescription: >\n  one\n  two\nlicense: MIT\n---\nBody\n"
    assert replace_description(folded, 'new "quoted"') == '---\nname: x\ndescription: "new \\"quoted\\""\nlicense: MIT\n---\nBody\n'
    assert replace_description("Body only\n", "d") == '---\ndescription: "d"\n---\nBody only\n'


def test_a_skill_without_a_suite_is_one_line(cli, tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nx\n")
    code, out, err = cli(["tune-description", tmp_path / "s", "--model", "m"])
    assert code == 30 and "has no activation suite" in err and err.count("\n") == 1, err
