"""eval-generate writes activation suites: the real CLI and openai client on the scripted
server; the suite request names the skill's siblings; a good suite lands in eval.yaml
(near-duplicates once) and runs with `agentsproof activation`; a bad one goes back with
the problem and, still bad, is left out with a note while the eval is written."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from conftest import Rule
from generated_evals import eval_reply

from agentsproof.formats.activation import load_plugin_suites
from agentsproof.generator.activation import MARKER

REPO = Path(__file__).resolve().parents[2]


def first_user(req: dict[str, Any]) -> str:
    return next(m["content"] for m in req["messages"] if m["role"] == "user")


def good_suite(name: str) -> str:
    should = [{"prompt": f"Use {name} on the March export, please.", "type": "explicit"},
              {"prompt": f"Could {name} handle last quarter's numbers?", "type": "explicit"},
              {"prompt": "Last week's file again; same job as always, you know the drill.", "type": "contextual"},
              {"prompt": "The importer choked on this one; whatever you did last time, do it again.", "type": "contextual"}]
    should += [{"prompt": f"Variant {i}: {topic}", "type": "implicit"} for i, topic in enumerate(
        ["the sales sheet from Oslo", "our churn table", "the survey answers", "the stock levels", "the ticket backlog", "the payroll extract"])]
    should.append({"prompt": "Variant 0: the sales sheet from Oslo!", "type": "implicit"})  # a near-duplicate
    should_not = [{"prompt": f"Near miss {i}: {t}", "type": "near-miss"} for i, t in enumerate(
        ["draw a pie of it", "plot the trend", "make a bar graph", "chart it for slides", "label the axes", "pick a chart type"])]
    should_not += [{"prompt": t, "type": "negative"} for t in ["Write a limerick.", "Book me a flight.", "What is 2+2?", "Translate hello to Welsh."]]
    return yaml.safe_dump({"should": should, "should_not": should_not}, sort_keys=False)


def plugin_copy(tmp_path: Path) -> Path:
    root = tmp_path / "csv-plugin"
    for name in ("csv-summary", "chart-builder"):
        (root / "skills" / name).mkdir(parents=True)
        shutil.copyfile(REPO / "evals" / "csv-plugin" / "skills" / name / "SKILL.md", root / "skills" / name / "SKILL.md")
    return root


def scripted(activation: Any):
    def reply(req: dict[str, Any]) -> str:
        text = first_user(req)
        if text.startswith(MARKER):
            name = re.search(r"skill '([^']+)'", text).group(1)
            return activation(name, req) if callable(activation) else activation
        return eval_reply("skill: SKILL.md")

    return reply


def test_a_checked_suite_is_written_and_runs(cli, byok_env, tmp_path):
    byok_env.add(Rule(reply=scripted(lambda name, req: good_suite(name))))
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--plugin-dir", plugin_copy(tmp_path), "--out", out, "--model", "m", "--no-check"])
    assert code == 0, stderr
    asks = [first_user(r) for r in byok_env.requests if first_user(r).startswith(MARKER)]
    assert len(asks) == 2
    summary_ask = next(a for a in asks if "'csv-summary'" in a)
    assert "- chart-builder: Builds charts from tabular data" in summary_ask  # the sibling's territory
    assert "Summarises the contents of a CSV file" in summary_ask
    cfg = yaml.safe_load((out / "skills" / "csv-summary" / "eval.yaml").read_text())
    prompts = [e["prompt"] for e in cfg["activation"]["should"]]
    assert len(prompts) == 10 and "Variant 0: the sales sheet from Oslo!" not in prompts  # counted once
    assert len(cfg["activation"]["should_not"]) == 10
    assert "activation suite: 1 near-duplicate prompt(s) dropped" in stderr
    suites = load_plugin_suites(out)
    assert sorted(s.skill.name for s in suites.suites) == ["chart-builder", "csv-summary"]


def test_a_bad_suite_is_sent_back_then_left_out(cli, byok_env, tmp_path):
    copied = yaml.safe_dump({"should": [{"prompt": "Summarises the contents of a CSV file - column types, totals", "type": "implicit"}],
                             "should_not": [{"prompt": "Write a poem.", "type": "negative"}]})
    byok_env.add(Rule(reply=scripted(copied)))
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--plugin-dir", plugin_copy(tmp_path), "--out", out, "--model", "m", "--no-check",
                                "--check-retries", "1"])
    assert code == 0, stderr  # the evals are still written
    retries = [r for r in byok_env.requests if first_user(r).startswith(f"{MARKER}: write the activation suite of the skill 'csv-summary'")
               and len(r["messages"]) > 2]
    assert retries, "the problem went back to the model"
    problem = retries[0]["messages"][-1]["content"]
    assert "1 distinct should prompts (need 10" in problem and "no explicit or contextual should prompt" in problem
    assert "copy the description" in problem and "only 0 of 1 should_not prompts are near-misses" in problem
    assert "activation suite left out" in stderr
    cfg = yaml.safe_load((out / "skills" / "csv-summary" / "eval.yaml").read_text())
    assert "activation" not in cfg and cfg["tasks"]
