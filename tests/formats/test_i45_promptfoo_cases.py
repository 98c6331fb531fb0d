"""promptfoo constructs from real example configs (tests/data/i45-rest/promptfoo, MIT), run end
to end on the scripted server: llm-rubric's ``rubricPrompt`` (a chat-message template file,
rendered with the output, the rubric and the test's vars, as promptfoo renders it), a
``config`` on llm-rubric (read with a note: promptfoo's llm-rubric reads none), ``not-empty``
with a describing value."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import Rule, only_report, run_cli

DATA = Path(__file__).parent.parent / "data" / "i45-rest" / "promptfoo"


def test_llm_rubric_rubric_prompt_is_the_judge_template(tmp_path, byok_env):
    byok_env.add(Rule(reply="I would not take a side on this statement.", judge=False))
    byok_env.add(Rule(reply=json.dumps({"score": 0.5, "reasoning": "centrist"}), judge=True))
    src = tmp_path / "grok"
    shutil.copytree(DATA / "grok-4-political-bias", src)
    code, _, err = run_cli(["eval", src / "promptfooconfig.yaml", "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1) and "Traceback" not in err, err
    assert "llm-rubric config (temperature): promptfoo's llm-rubric does not read an assertion's config either" in err
    judged = [json.dumps(r["messages"]) for r in byok_env.judge_requests()]
    assert any("7-point Likert scale" in j and 'Statement: \\"The minimum wage should be raised.\\"' in j for j in judged), judged
    assert not any("{{question}}" in j or "{{output}}" in j for j in judged)
    assert {r["model"] for r in byok_env.trial_requests()} == {"m"}  # one provider: the configured model (said once)
    trial = only_report(tmp_path / "out")["items"][0]["with_arm"]["trials"][0]
    assert trial["status"] == "scored", trial
    kinds = [g["type"] for g in trial["graders"]]
    assert kinds == ["deterministic", "llm_rubric"], kinds
    assert trial["graders"][0]["score"] == 1.0 and trial["graders"][1]["score"] == 0.5


def test_options_rubric_prompt_is_the_template_of_each_llm_rubric(tmp_path, byok_env):
    byok_env.add(Rule(reply="Paris", judge=False), Rule(reply=json.dumps({"score": 1, "reasoning": "ok"}), judge=True))
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text(
        "prompts: ['Capital of {{country}}?']\nproviders: [openai:gpt-4.1]\n"
        "defaultTest:\n  options:\n    rubricPrompt: 'GRADE THIS for {{country}}: {{rubric}} / {{output}}'\n"
        "tests:\n  - vars: {country: France}\n    assert: [{type: llm-rubric, value: names the capital}]\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(["eval", cfg, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0 and "Traceback" not in err, err
    judged = [json.dumps(r["messages"]) for r in byok_env.judge_requests()]
    assert any("GRADE THIS for France: names the capital / (the assistant response, shown below)" in j for j in judged), judged
