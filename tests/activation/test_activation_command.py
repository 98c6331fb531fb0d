"""``agentsproof activation --target NAME`` with a command agent: every skill installed at
``skill_path``; the agent (a script) reads their descriptions, picks by the scripted
model's rule and reports each load as a ``{"skill": name}`` trace line."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from conftest import read_json
from plugins import write_plugin

TESTS = Path(__file__).resolve().parents[1]
AGENT = f'''
import json, os, re, sys
sys.path.insert(0, {str(TESTS)!r})
from openai_server import trigger_words
prompt = sys.argv[1]
words = set(re.findall(r"[a-z]+", prompt.lower()))
root = os.path.join(os.environ["AGENTSPROOF_WORKSPACE"], ".agents", "skills")
trace = os.environ.get("AGENTSPROOF_TRACE_FILE") if os.environ.get("WRITE_TRACE", "1") == "1" else None
loaded = []
for name in sorted(os.listdir(root)):
    text = open(os.path.join(root, name, "SKILL.md")).read()
    desc = re.search(r"description: (.*)", text).group(1)
    if len(trigger_words(desc) & words) >= 2 or name in prompt:
        loaded.append(name)
if trace:
    with open(trace, "w") as fh:
        fh.write(json.dumps({{"tool": "view", "arguments": "x"}}) + "\\n")
        for name in loaded:
            fh.write(json.dumps({{"skill": name}}) + "\\n")
        fh.write(json.dumps({{"skill": "not-installed"}}) + "\\n")
print("answered")
'''


def targets_file(tmp_path: Path, trace: bool = True) -> Path:
    script = tmp_path / "agent.py"
    script.write_text(AGENT, encoding="utf-8")
    path = tmp_path / "targets.yaml"
    # TESTS is named so that the sandbox shows it (read-only) when the checkout is under /tmp
    spec = {"type": "command", "command": [sys.executable, str(script), "{prompt}", str(TESTS)], "env": {"WRITE_TRACE": "1" if trace else "0"}}
    path.write_text(yaml.safe_dump({"picker": spec}), encoding="utf-8")
    return path


def test_command_agent_reports_loads_through_its_trace(cli, tmp_path):
    plugin = write_plugin(tmp_path, planted=True)
    code, out, err = cli(["activation", plugin, "--target", "picker", "--targets", targets_file(tmp_path), "--output", tmp_path / "runs"])
    assert code == 0, err  # no --ci: floors are reported, not enforced
    report = read_json(tmp_path / "runs" / "tables-plugin" / "tables-plugin-activation.json")
    assert report["errored"] == 0
    fired = {(t["skill"], t["prompt"]["text"]): t["fired"] for t in report["trial_log"]}
    # the agent loads both skills on this prompt, in the folder order; "not-installed" is dropped
    assert fired[("csv-summary", "What are the totals and averages of each column in this CSV?")] == ["csv-summary", "table-digest"]
    by = {s["skill"]: s for s in report["skills"]}
    assert (by["csv-summary"]["tp"], by["csv-summary"]["fn"]) == (2, 1)
    assert report["matrix"]["csv-summary"]["table-digest"] == 2
    assert "fail: recall 0.67 < 0.80" in out


def test_a_command_agent_without_a_trace_errors_every_trial(cli, tmp_path):
    plugin = write_plugin(tmp_path)
    code, out, err = cli(["activation", plugin, "--target", "picker", "--targets", targets_file(tmp_path, trace=False),
                          "--output", tmp_path / "runs", "--ci"])
    report = read_json(tmp_path / "runs" / "tables-plugin" / "tables-plugin-activation.json")
    assert report["errored"] == report["trials"] == 10
    assert "cannot tell which skills" in report["trial_log"][0]["error"]
    assert all(s["recall"] is None for s in report["skills"])
    assert code == 30 and "every activation trial errored" in err  # nothing measured is never a pass
