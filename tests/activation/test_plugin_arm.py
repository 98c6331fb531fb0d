"""``--arms baseline,skill,plugin``: the skill alone vs within its plugin, end to end on the
scripted server (the chat target's simulated skill tool) and with the real Copilot CLI. A
planted skill whose description outbids csv-summary's on its task steals the load in the
plugin arm: the interference verdict and eval-all's colliding pairs must show it."""

from __future__ import annotations

from pathlib import Path

import yaml

from conftest import Rule, read_json
from openai_server import skill_loader
from plugins import write_plugin

TASK = "Give me a short report of the totals, averages, missing values and outliers of every column in this table."
MARK = "SUMMARYMARK"


def plugin_with_task(tmp_path: Path, planted: bool) -> Path:
    plugin = write_plugin(tmp_path, planted=planted)
    folder = plugin / "skills" / "csv-summary"
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + f"\nStart the answer with {MARK}.\n")
    cfg = yaml.safe_load((folder / "eval.yaml").read_text())
    cfg["task"] = {"name": "report", "instruction": TASK, "graders": [{"type": "deterministic", "checks": [MARK]}]}
    cfg["defaults"] = {"trials": 6, "timeout": 60, "threshold": 0.5}
    (folder / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return plugin


def answer(req) -> str:
    """The scripted model follows whatever skill text it was given."""
    return f"{MARK} totals ..." if MARK in str(req["messages"]) else "a plain answer"


def test_planted_collider_interferes_and_eval_all_ranks_the_pair(byok_env, cli, tmp_path):
    byok_env.add(Rule(reply=skill_loader(final=answer)))
    plugin = plugin_with_task(tmp_path, planted=True)
    out_dir = tmp_path / "runs"
    code, out, err = cli(["eval-all", plugin / "skills" / "csv-summary", "--model", "m", "--arms", "baseline,skill,plugin", "--output", out_dir])
    assert code == 0, err
    [item] = read_json(next((out_dir).rglob("eval-all-summary.json")))["items"]
    assert item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.0
    assert len(item["plugin_arm"]["trials"]) == 6 and item["plugin_arm"]["mean_score"] == 0.0
    inf = item["interference"]
    assert inf["verdict"] == "interferes" and inf["ci"][1] < 0 and inf["difference"] == -1.0
    assert inf["skill_loaded"] == [0, 6] and inf["siblings_loaded"] == {"table-digest": 6}
    # every plugin-arm trial offered all four skills and loaded the planted one
    assert all(t["skills_invoked"] == ["table-digest"] for t in item["plugin_arm"]["trials"])
    md = next(out_dir.rglob("eval-all-summary.md")).read_text()
    assert "## Colliding pairs (plugin arm)" in md and "| csv-summary | table-digest | 6/6 |" in md
    assert "**interferes**" in md
    html = next(out_dir.rglob("*-eval.html")).read_text()
    assert "plugin-collisions" in html and "interferes" in html


def test_without_the_collider_no_interference_is_shown(byok_env, cli, tmp_path):
    byok_env.add(Rule(reply=skill_loader(final=answer)))
    plugin = plugin_with_task(tmp_path, planted=False)
    out_dir = tmp_path / "runs"
    code, out, err = cli(["eval", plugin / "skills" / "csv-summary" / "eval.yaml", "--model", "m", "--arms", "baseline,skill,plugin", "--output", out_dir])
    assert code == 0, err
    item = read_json(next(out_dir.rglob("*-eval.json")))["items"][0]
    inf = item["interference"]
    assert inf["verdict"] == "none shown" and inf["ci"][0] <= 0 <= inf["ci"][1]
    assert inf["skill_loaded"] == [6, 6] and inf["siblings_loaded"] == {}


def test_default_is_two_arms_and_bad_arms_are_one_line(byok_env, cli, tmp_path):
    byok_env.add(Rule(reply=skill_loader(final=answer)))
    plugin = plugin_with_task(tmp_path, planted=False)
    eval_yaml = plugin / "skills" / "csv-summary" / "eval.yaml"
    code, out, err = cli(["eval", eval_yaml, "--model", "m", "--trials", "1", "--output", tmp_path / "runs"])
    item = read_json(next((tmp_path / "runs").rglob("*-eval.json")))["items"][0]
    assert code == 0 and item["plugin_arm"] is None and item["interference"] is None
    for arms, words in (("baseline,skil", "'skil' is not an arm"), ("skill,plugin", "give baseline,skill")):
        code, out, err = cli(["eval", eval_yaml, "--model", "m", "--arms", arms, "--output", tmp_path / "r2"])
        assert code == 30 and err.count("\n") == 1 and "--arms" in err and words in err, err
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "SKILL.md").write_text("Be brief.\n")
    (lone / "eval.yaml").write_text(yaml.safe_dump({"skill": "SKILL.md", "task": {"name": "t", "instruction": "hi", "graders": [{"type": "deterministic", "checks": ["x"]}]}}))
    code, out, err = cli(["eval", lone / "eval.yaml", "--model", "m", "--arms", "baseline,skill,plugin", "--output", tmp_path / "r3"])
    assert code == 30 and "is not a skill or agent of a plugin" in err and err.count("\n") == 1, err


BEST_AGENT = '''
import json, os, re, sys
sys.path.insert(0, {tests!r})
from openai_server import trigger_words
prompt = sys.stdin.read()
words = set(re.findall(r"[a-z]+", prompt.lower()))
root = os.path.join(os.environ["AGENTSPROOF_WORKSPACE"], ".agents", "skills")
best = None
for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
    text = open(os.path.join(root, name, "SKILL.md")).read()
    hits = len(trigger_words(re.search(r"description: (.*)", text).group(1)) & words)
    if hits >= 2 and (best is None or hits > best[0]):
        best = (hits, name, text)
with open(os.environ["AGENTSPROOF_TRACE_FILE"], "w") as fh:
    if best:
        fh.write(json.dumps({{"skill": best[1]}}) + "\\n")
print(best[2] if best else "no skill")
'''


def test_command_agent_plugin_arm_installs_every_skill(cli, tmp_path):
    import sys

    plugin = plugin_with_task(tmp_path, planted=True)
    script = tmp_path / "agent.py"
    tests = str(Path(__file__).resolve().parents[1])
    script.write_text(BEST_AGENT.format(tests=tests))
    targets = tmp_path / "targets.yaml"
    # the tests folder is named so that the sandbox shows it (read-only) when the checkout is under /tmp
    targets.write_text(yaml.safe_dump({"picker": {"type": "command", "command": [sys.executable, str(script), tests]}}))
    out_dir = tmp_path / "runs"
    code, out, err = cli(["eval", plugin / "skills" / "csv-summary" / "eval.yaml", "--target", "picker", "--targets", targets,
                          "--arms", "baseline,skill,plugin", "--output", out_dir, "--parallel", "3"])
    assert code == 0, err
    item = read_json(next(out_dir.rglob("*-eval.json")))["items"][0]
    assert item["with_arm"]["mean_score"] == 1.0 and item["plugin_arm"]["mean_score"] == 0.0
    assert all(t["skills_invoked"] == ["table-digest"] for t in item["plugin_arm"]["trials"])
    # six trials per arm (the eval's default): enough for the interval to leave 0
    assert item["interference"]["verdict"] == "interferes" and item["interference"]["siblings_loaded"] == {"table-digest": 6}


def test_a_target_that_cannot_offer_skills_errors_the_plugin_arm_and_activation(byok_env, cli, tmp_path):
    plugin = plugin_with_task(tmp_path, planted=False)
    targets = tmp_path / "targets.yaml"  # an http agent takes one skill text, never a choice among several
    targets.write_text(yaml.safe_dump({"web": {"type": "http", "url": "http://127.0.0.1:9/ask", "skill_field": "skill"}}))
    out_dir = tmp_path / "runs"
    code, out, err = cli(["eval", plugin / "skills" / "csv-summary" / "eval.yaml", "--target", "web", "--targets", targets,
                          "--trials", "2", "--arms", "baseline,skill,plugin", "--output", out_dir, "--junit", tmp_path / "junit.xml"])
    item = read_json(next(out_dir.rglob("*-eval.json")))["items"][0]
    reason = "the http target cannot offer the plugin's skills to its agent, so it cannot run the plugin arm"
    assert item["plugin_arm"]["trials"] and all(t["status"] == "errored" for t in item["plugin_arm"]["trials"])
    assert all(t["error"] == reason for t in item["plugin_arm"]["trials"])
    assert item["interference"]["verdict"] == "unknown"
    assert reason in (tmp_path / "junit.xml").read_text()
    code, out, err = cli(["activation", plugin, "--target", "web", "--targets", targets, "--output", out_dir])
    report = read_json(out_dir / "tables-plugin" / "tables-plugin-activation.json")
    assert report["errored"] == report["trials"] > 0
    assert all("the http target cannot offer several skills" in t["error"] for t in report["trial_log"])
    assert code == 30 and "every activation trial errored" in err
