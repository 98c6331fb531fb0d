"""promptfoo configs run as promptfoo runs them (issue 45): copies of constructs from promptfoo's own
examples, each run end to end on the scripted server, the server's request log read for what went out.

The configs below are small excerpts of files in https://github.com/promptfoo/promptfoo/tree/main/examples
(csv-metadata, external-defaulttest, structured-outputs-config, prompts-per-model, jsonl-test-cases,
json-output, gpt-4o-temperature-comparison, f-score), under promptfoo's licence:

    Copyright (c) Promptfoo 2025

    Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
    associated documentation files (the "Software"), to deal in the Software without restriction,
    including without limitation the rights to use, copy, modify, merge, publish, distribute,
    sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
    furnished to do so, subject to the following conditions: The above copyright notice and this
    permission notice shall be included in all copies or substantial portions of the Software.
    THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND (MIT License).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import Rule, read_json, run_cli

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="promptfoo's inline code is JavaScript, run with node")


def _config(tmp_path: Path, text: str, **files: str) -> Path:
    folder = tmp_path / "pf"
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (folder / name.replace("__", "/")).parent.mkdir(parents=True, exist_ok=True)
        (folder / name.replace("__", "/")).write_text(body)
    (folder / "promptfooconfig.yaml").write_text(text)
    return folder / "promptfooconfig.yaml"


def _run(path: Path, tmp_path: Path, *extra: str) -> tuple[int, str, dict]:
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache", *extra])
    found = list((tmp_path / "out").rglob("*-tc-eval.json"))
    return code, err, (read_json(found[0]) if found else {})


def _trials(report: dict) -> dict[str, list[dict]]:
    return {it["name"]: it["with_arm"]["trials"] for it in report["items"]}


def test_csv_config_columns_set_each_assertions_threshold(byok_env, tmp_path):
    """csv-metadata: ``__config:__expected:threshold`` (every assertion) and ``__config:__expected2:threshold``."""
    byok_env.add(Rule(reply="An algorithm learns from data.", judge=False), Rule(reply='{"score": 0.85, "reasoning": "ok"}', judge=True))
    csv = (
        "topic,__expected1,__expected2,__metadata:category,__config:__expected:threshold,__config:__expected2:threshold\n"
        '"machine learning","contains: algorithm","llm-rubric:Does this describe {{topic}} accurately?","technology",0.9,0.8\n'
    )
    path = _config(tmp_path, "prompts: ['Tell me about {{topic}}']\nproviders:\n  - id: openai:gpt-4\n    config:\n      temperature: 0.7\ntests: file://tests.csv\n", **{"tests.csv": csv})
    code, err, report = _run(path, tmp_path)
    assert report, err
    [trial] = next(iter(_trials(report).values()))
    assert trial["status"] == "scored", trial
    assert [r["temperature"] for r in byok_env.trial_requests()] == [0.7] and [r["model"] for r in byok_env.trial_requests()] == ["m"]  # one provider: the configured model
    from agentsproof.formats.promptfoo_tests import csv_tests

    [test] = csv_tests("x", "tests", path.parent / "tests.csv")
    assert test["assert"][0] == {"type": "contains", "value": "algorithm", "min_score": 0.9}
    assert test["assert"][1]["threshold"] == 0.8  # the column's own, after the every-assertion one


@needs_node
def test_external_default_test_with_transform_vars_and_cost(byok_env, tmp_path):
    """external-defaulttest: defaultTest from a file, options.transformVars (JavaScript), a cost bound, a judge provider."""
    byok_env.add(Rule(reply="Paris is the capital.", judge=False))
    default = (
        "vars: {max_tokens: 150}\n"
        "assert:\n  - type: not-equals\n    value: ''\n  - type: cost\n    threshold: 0.01\n"
        "options:\n  provider: openai:o4-mini\n"
        "  transformVars: 'Object.assign({}, vars, { shout: String(vars.question).toUpperCase() })'\n"
        "metadata: {suite: default-test-example}\n"
    )
    path = _config(
        tmp_path,
        "defaultTest: file://shared/defaultTest.yaml\nprompts: ['{{question}} / {{shout}}']\nproviders: [openai:gpt-4.1]\n"
        "tests:\n  - vars: {question: 'What is the capital of France?'}\n    assert: [{type: icontains, value: Paris}]\n",
        **{"shared__defaultTest.yaml": default},
    )
    code, err, report = _run(path, tmp_path)
    assert report, err
    [req] = byok_env.trial_requests()
    assert req["messages"][-1]["content"] == "What is the capital of France? / WHAT IS THE CAPITAL OF FRANCE?"
    [trial] = next(iter(_trials(report).values()))
    cost = [c for g in trial["graders"] for c in g["checks"] if "cost" in c["evidence"]]
    assert cost and not cost[0]["passed"] and "not recorded" in cost[0]["evidence"], trial["graders"]  # no price for the model: said


def test_a_prompts_structured_output_config_and_a_providers_prompts(byok_env, tmp_path):
    """structured-outputs-config (a prompt's response_format) and prompts-per-model (providers[].prompts)."""
    byok_env.add(Rule(reply='{"steps": [], "final_answer": "-3.625"}', judge=False))
    schema = "{type: json_schema, json_schema: {name: math_response, strict: true, schema: {type: object, properties: {final_answer: {type: string}}, required: [final_answer]}}}"
    text = (
        "prompts:\n"
        f"  - label: 'With step-by-step'\n    raw: 'You are a helpful math tutor. Solve {{{{problem}}}}'\n    config:\n      response_format: {schema}\n"
        "  - label: 'Plain'\n    raw: 'Solve {{problem}}'\n"
        "providers:\n  - id: openai:chat:gpt-4o-2024-11-20\n    prompts: ['With step-by-step']\n"
        "  - id: azure:chat:gpt-4o-2024-08-06\n    config: {apiHost: 'YOUR_ORG.openai.azure.com', deploymentName: 'YOUR_DEPLOYMENT_NAME'}\n"
        "defaultTest:\n  assert:\n    - type: is-json\n      value: {type: object, required: [final_answer]}\n"
        "tests:\n  - vars: {problem: '8x + 31 = 2'}\n    assert:\n      - type: contains-any\n        value: [-3.625, -29/8]\n"
    )
    code, err, report = _run(_config(tmp_path, text), tmp_path)
    assert code == 0, err
    sent = sorted((r["model"], r["messages"][-1]["content"], "response_format" in r) for r in byok_env.trial_requests())
    assert sent == [
        ("gpt-4o-2024-08-06", "Solve 8x + 31 = 2", False),
        ("gpt-4o-2024-08-06", "You are a helpful math tutor. Solve 8x + 31 = 2", True),
        ("gpt-4o-2024-11-20", "You are a helpful math tutor. Solve 8x + 31 = 2", True),
    ], sent
    assert "deploymentName: not sent" in err and "YOUR_ORG" not in json.dumps(byok_env.requests)
    assert all(t["score"] == 1.0 for trials in _trials(report).values() for t in trials)


def test_the_echo_provider_with_jsonl_tests(byok_env, tmp_path):
    """jsonl-test-cases: the echo provider returns the prompt; nothing reaches the model server."""
    line = {"vars": {"target_language": "French", "text": "Hello, world!"}, "assert": [{"type": "equals", "value": "Translate the following text to French: Hello, world!"}]}
    path = _config(
        tmp_path,
        "prompts: ['Translate the following text to {{target_language}}: {{text}}']\nproviders: [echo]\ntests: file://cases.jsonl\n",
        **{"cases.jsonl": json.dumps(line) + "\n"},
    )
    code, err, report = _run(path, tmp_path)
    assert code == 0, err
    [trial] = next(iter(_trials(report).values()))
    assert trial["score"] == 1.0 and trial["response"] == "Translate the following text to French: Hello, world!"
    assert byok_env.requests == []


@needs_node
def test_json_output_transform_schema_and_an_assertions_own_transform(byok_env, tmp_path):
    """json-output: response_format sent, options.transform JSON.parse, is-json with a schema, a contains-any with its own transform."""
    byok_env.add(Rule(reply='{"color": "purple", "countries": ["Brazil", "India"]}', judge=False))
    text = (
        "prompts: ['Output a JSON object that contains the keys `color` and `countries`, describing the following object: {{item}}']\n"
        "providers:\n  - id: openai:chat:gpt-4.1-mini\n    config:\n      response_format:\n        type: json_object\n"
        "tests:\n  - vars: {item: Passion fruit}\n    options:\n      transform: JSON.parse(output)\n    assert:\n"
        "      - type: is-json\n        value: {required: [color, countries], type: object, properties: {color: {type: string}, countries: {type: array, items: {type: string}}}}\n"
        "      - type: javascript\n        value: output.color === 'purple' && output.countries.includes('Brazil')\n"
        "      - type: contains-any\n        transform: output.countries\n        value: [Guatemala, Costa Rica, India, Indonesia]\n"
    )
    code, err, report = _run(_config(tmp_path, text), tmp_path)
    assert code == 0, err
    assert byok_env.trial_requests()[0]["response_format"] == {"type": "json_object"}
    [trial] = next(iter(_trials(report).values()))
    assert [g["score"] for g in trial["graders"]] == [1.0, 1.0, 1.0], trial["graders"]


def test_tests_without_assertions_run_side_by_side(byok_env, tmp_path):
    """gpt-4o-temperature-comparison: tests with vars only; two providers with their temperatures."""
    byok_env.add(Rule(reply="Once upon a time", judge=False))
    text = (
        "prompts: ['Respond to the following instruction: {{message}}']\n"
        "providers:\n  - id: openai:gpt-4o-mini\n    label: cold\n    config: {temperature: 0.2, max_tokens: 128}\n"
        "  - id: openai:gpt-4o-mini\n    label: hot\n    config: {temperature: 0.9, max_tokens: 128}\n"
        "tests:\n  - vars: {message: 'What is the capital of France'}\n  - vars: {message: Write a poem}\n"
    )
    code, err, report = _run(_config(tmp_path, text), tmp_path)
    assert code == 0, err
    assert sorted(r["temperature"] for r in byok_env.trial_requests()) == [0.2, 0.2, 0.9, 0.9]
    assert all(t["score"] == 1.0 and t["graders"] == [] for trials in _trials(report).values() for t in trials)
    code, out, _ = run_cli(["lint", tmp_path / "pf" / "promptfooconfig.yaml"])
    assert "nothing-to-check" in out, out


def test_scenarios_and_derived_metrics(byok_env, tmp_path):
    """promptfoo's scenarios (config × tests) expand; derivedMetrics are read and said, not refused."""
    byok_env.add(Rule(reply="Bonjour", judge=False))
    text = (
        "prompts: ['Translate {{input}} into {{language}}']\n"
        "scenarios:\n  - config:\n      - vars: {language: French}\n      - vars: {language: German}\n"
        "    tests:\n      - vars: {input: Hello}\n        assert: [{type: icontains, value: bonjour, metric: fr}]\n"
        "derivedMetrics:\n  - name: ratio\n    value: fr / 1\n"
    )
    code, err, report = _run(_config(tmp_path, text), tmp_path)
    assert report, err
    assert sorted(r["messages"][-1]["content"] for r in byok_env.trial_requests()) == ["Translate Hello into French", "Translate Hello into German"]
    assert "derivedMetrics: read, not used" in err


def test_a_nunjucks_chat_prompt_with_a_history_and_yaml_12_text(byok_env, tmp_path):
    """openai-chat-history: a JSON chat prompt built with Nunjucks ({% for %}, | dump) from a list of objects (one
    value, not one case each); named-metrics: ``body: Yes`` is the text Yes (promptfoo reads YAML 1.2)."""
    byok_env.add(Rule(reply="Arr, Oculus.", judge=False))
    prompt = (
        '[\n  {"role": "system", "content": {{ system_message | dump }}},\n'
        "  {% for message in previous_messages %}{% for role, content in message %}\n"
        '  {"role": "{{ role }}", "content": {{ content | dump }}},\n  {% endfor %}{% endfor %}\n'
        '  {"role": "user", "content": {{ question | dump }}}\n]\n'
    )
    text = (
        "prompts: [file://prompt.json, 'Say this as a pirate: {{body}}']\nproviders: [openai:gpt-4.1-mini]\n"
        "defaultTest:\n  vars:\n    system_message: Talk like a pirate.\n    body: Yes\n"
        "    previous_messages:\n      - user: Who founded Facebook?\n      - assistant: Mark Zuckerberg\n"
        "tests:\n  - vars: {question: 'Did he create any other companies?'}\n"
    )
    code, err, report = _run(_config(tmp_path, text, **{"prompt.json": prompt}), tmp_path)
    assert code == 0, err
    sent = [r["messages"][-1]["content"] for r in byok_env.trial_requests()]
    assert len(sent) == 2 and "Say this as a pirate: Yes" in sent, sent
    history = next(s for s in sent if "pirate:" not in s)
    assert "Who founded Facebook?" in history and "Mark Zuckerberg" in history and history.endswith("Did he create any other companies?"), history


def test_a_prompt_function_is_called_per_case_confined(byok_env, tmp_path):
    """huggingface-hle: ``file://prompt.py:create_hle_prompt`` called with {vars, provider}, its chat messages sent;
    a hosted dataset in tests is refused with its reason."""
    byok_env.add(Rule(reply="Answer: B", judge=False))
    prompt_py = (
        "import json\n\ndef create_hle_prompt(context):\n    q = context['vars']\n"
        "    return json.dumps([{'role': 'system', 'content': 'Answer with a letter.'}, {'role': 'user', 'content': q['question'] + ' ' + context['provider']['id']}])\n"
    )
    text = "prompts: [file://prompt.py:create_hle_prompt]\nproviders: [openai:o4-mini]\ntests:\n  - vars: {question: 'Which is it?'}\n    assert: [{type: contains, value: B}]\n"
    code, err, report = _run(_config(tmp_path, text, **{"prompt.py": prompt_py}), tmp_path)
    assert code == 0, err
    [req] = byok_env.trial_requests()
    assert "Which is it? openai:o4-mini" in req["messages"][-1]["content"], req
    path = _config(tmp_path, text.replace("tests:\n  - vars: {question: 'Which is it?'}\n    assert: [{type: contains, value: B}]\n", "tests:\n  - huggingface://datasets/cais/hle?split=test\n"))
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out2"])
    assert code == 30 and "tests[0]: 'huggingface://datasets/cais/hle?split=test' is a hosted dataset" in err, err


def test_a_prompts_file_with_several_prompts_and_the_load_filter(byok_env, tmp_path):
    """simple-csv: prompts.txt holds two prompts split by ---, each reading a CSV column of JSON with ``| load``."""
    byok_env.add(Rule(reply="Bonjour le monde", judge=False))
    prompts = "Tone: {{ (style_config | load).tone }}\nTranslate into {{language}}: {{body}}\n---\nSay in {{language}}: {{body}}\n"
    csv = 'language,body,style_config,__expected\nFrench,"Hello world","{""tone"":""formal""}","icontains:bonjour"\n'
    path = _config(tmp_path, "prompts: [file://prompts.txt]\nproviders: [openai:gpt-4.1-mini]\ntests: file://tests.csv\n", **{"prompts.txt": prompts, "tests.csv": csv})
    code, err, report = _run(path, tmp_path)
    assert code == 0, err
    sent = sorted(r["messages"][-1]["content"] for r in byok_env.trial_requests())
    assert sent == ["Say in French: Hello world", "Tone: formal\nTranslate into French: Hello world"], sent
