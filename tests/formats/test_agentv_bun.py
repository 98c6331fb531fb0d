"""agentv's TypeScript programs run with bun and our own ``agentv`` SDK module, end to end on
the scripted server: a custom assertion (``defineAssertion`` from ``@agentv/sdk``), a script
grader calling the judge through agentv's provider proxy (``createProviderClient``,
``provider: {max_calls}``), a ``cli`` agent run as ``bun run ./mock-metrics-agent.ts`` with a
script reading the trace. The files are copies of agentv's examples (tests/data/agentv-bun:
EntityProcess/agentv, MIT, see the LICENSE there). bun is the one ``make bun`` installs into
the venv (``make test`` does); without it these tests skip, and fail under CI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import Rule, only_report, run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "agentv-bun"


def _copy(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(DATA / name, root)
    return root


def _trials(report: dict) -> dict[str, dict]:
    return {i["name"]: i["with_arm"]["trials"][0] for i in report["items"]}


def test_licence_notice_is_kept_beside_the_copies():
    text = (DATA / "LICENSE").read_text()
    assert "MIT License" in text and "EntityProcess" in text


def test_custom_assertion_runs_with_bun_and_our_sdk(bun, byok_env, tmp_path):
    root = _copy(tmp_path, "sdk-custom-assertion")
    byok_env.add(Rule(reply="Hello! I am an assistant here to help.", user_contains="Say hello", judge=False))
    byok_env.add(Rule(reply="4", user_contains="2+2", judge=False))
    byok_env.add(Rule(reply='{"name": "Al"}', user_contains="JSON object", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "suite.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    trials = _trials(only_report(out))
    words = {name: [g for g in t["graders"] if g["type"] == "script"][-1] for name, t in trials.items()}  # is-json is a script too
    assert all(not g["errored"] for g in words.values()), words
    assert words["greeting-response"]["score"] == 1.0  # 7 words >= 3: defineAssertion's pass, score 1
    assert words["short-answer"]["score"] == pytest.approx(1 / 3)  # 1 word: min(1/3, 0.9), failing
    assert words["json-response"]["score"] == pytest.approx(2 / 3)  # two words
    assert [c["passed"] for c in words["short-answer"]["checks"]] == [False]
    assert "Assertion failed" in words["short-answer"]["checks"][0]["evidence"]  # agentv's reason when the file gives none


RELEVANCE = "You are a precise relevance grader"


def test_script_calls_the_judge_through_the_provider_proxy(bun, byok_env, tmp_path):
    root = _copy(tmp_path, "script-grader-with-llm-calls")
    byok_env.add(Rule(reply="An answer.", judge=False, model="m"))
    byok_env.add(Rule(reply='{"relevant": false, "reasoning": "off topic"}', system_contains=RELEVANCE, model="j"))
    for fact in ("builds on JavaScript", "Rayleigh scattering"):
        byok_env.add(Rule(reply='{"relevant": true, "reasoning": "answers it"}', system_contains=RELEVANCE, user_contains=fact, model="j"))
    out = tmp_path / "out"
    suite = root / "evals" / "contextual-precision.eval.yaml"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--judge-model", "j", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    assert "asked agentv's provider proxy for 'gemini-llm': the run's judge model (j) answers its calls" in err  # said once
    assert err.count("'gemini-llm'") == 1
    trials = _trials(only_report(out))
    script = {name: next(g for g in t["graders"] if g["type"] == "script") for name, t in trials.items()}
    assert script["perfect-ranking"]["score"] == 1.0  # the relevant node first: precision 1
    assert script["relevant-node-last"]["score"] == pytest.approx(1 / 3)  # the only relevant node third: 1/3
    assert [c["passed"] for c in script["relevant-node-last"]["checks"]] == [False, False, True]
    assert script["relevant-node-last"]["usage"]["prompt_tokens"] > 0  # the proxy's calls are the grader's judge tokens
    proxied = [r for r in byok_env.requests if RELEVANCE in json.dumps(r["messages"])]
    assert len(proxied) == 6 and {r["model"] for r in proxied} == {"j"}  # three nodes per test, the judge named on the command line
    assert {r["model"] for r in byok_env.requests} <= {"m", "j"}


def test_max_calls_is_enforced_and_a_judge_failure_errors_the_grader(bun, byok_env, tmp_path):
    root = _copy(tmp_path, "script-grader-with-llm-calls")
    suite = root / "evals" / "contextual-precision.eval.yaml"
    suite.write_text(suite.read_text().replace("max_calls: 10", "max_calls: 2"))  # a batch of three is refused, as agentv does
    byok_env.add(Rule(reply="An answer.", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    graders = [next(g for g in t["graders"] if g["type"] == "script") for t in _trials(only_report(out)).values()]
    assert all(g["score"] == 0.0 and "Batch would exceed max calls" in json.dumps(g) for g in graders)

    suite.write_text(suite.read_text().replace("max_calls: 2", "max_calls: 10"))
    byok_env.add(Rule(status=400, message="no such model", system_contains=RELEVANCE))
    out = tmp_path / "out2"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache"])
    trial = _trials(only_report(out))["perfect-ranking"]
    assert trial["status"] == "errored" and "the script's call to the judge model failed" in json.dumps(trial), trial


def test_a_cli_agent_run_with_bun_and_a_script_reading_the_trace(bun, byok_env, tmp_path):
    root = _copy(tmp_path, "execution-metrics")
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "suite.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    trial = _trials(only_report(out))["hybrid-evaluation"]
    assert trial["status"] == "scored" and "I processed your request successfully." in json.dumps(trial)  # the mock agent's answer
    script = next(g for g in trial["graders"] if g["type"] == "script")
    texts = [c["target"] for c in script["checks"]]
    assert any(t.startswith("Tool calls (0) within limit") for t in texts), script  # trace.eventCount
    # durationMs, the trial's own, is checked against the script's 10 s limit: which way that
    # check goes depends on the machine's load, so the test asserts that it is made, not its verdict
    timed = [c for c in script["checks"] if c["target"].startswith(("Duration (", "Slow execution: "))]
    assert len(timed) == 1, script
    assert all(c["passed"] for c in script["checks"] if c not in timed), script
    assert script["score"] == round(sum(c["passed"] for c in script["checks"]) / len(script["checks"]), 2), script  # the script's own share
    assert not any("Cost" in t for t in texts)  # a cost the trial did not record is left out, not null
    assert byok_env.requests == []  # the agent is the mock; nothing needed the model


def test_without_bun_the_trial_errors_naming_make_bun(byok_env, monkeypatch, tmp_path):
    root = _copy(tmp_path, "sdk-custom-assertion")
    monkeypatch.setenv("AGENTSPROOF_BUN", str(tmp_path / "no-bun-here"))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "suite.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code == 30, err
    trial = _trials(only_report(out))["greeting-response"]
    assert trial["status"] == "errored" and "bun is not installed" in json.dumps(trial) and "make bun" in json.dumps(trial)


ESCAPE = """import { writeFileSync } from 'node:fs';
import { defineAssertion } from 'agentv';

export default defineAssertion(({ output }) => {
  writeFileSync(new URL('../../planted.txt', import.meta.url), 'written from a grader');
  return { pass: true, reason: String(output) };
});
"""


def test_a_bun_program_stays_confined(bun, byok_env, tmp_path):
    root = _copy(tmp_path, "sdk-custom-assertion")
    (root / ".agentv" / "assertions" / "min-words.ts").write_text(ESCAPE)
    byok_env.add(Rule(reply="Hello there, friend of mine.", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "suite.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert not (root / "planted.txt").exists()  # read-only outside its workspace
    script = [g for g in _trials(only_report(out))["greeting-response"]["graders"] if g["type"] == "script"][-1]
    assert script["score"] == 0.0 and "Assertion failed" in json.dumps(script) and "planted.txt" in json.dumps(script)


def test_agentvs_own_payload_contract_holds(bun, byok_env, tmp_path):
    root = _copy(tmp_path, "contract")
    byok_env.add(Rule(reply="RELEASE CONTRACT: ready.", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "script-grader-contract.eval.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    script = next(g for g in _trials(only_report(out))["script-grader-stdin-payload"]["graders"] if g["type"] == "script")
    assert {c["target"]: c["passed"] for c in script["checks"]} == {
        "output is the final answer string": True,
        "output contains tokens from both input messages": True,
        "messages is the full transcript array": True,
        "messages contains an assistant message": True,
        "input contains both source prompts": True,
        "criteria contains the test criteria": True,  # the plain-text assertion, as agentv gives it
        "grader payload uses snake_case wire keys": True,
        "deprecated answer alias is absent": True,
    }
    assert script["score"] == 1.0  # no score printed: the mean of its checks, as agentv derives it


PROXY_SCRIPT = """import { createProviderClient, defineScriptGrader } from 'agentv';

export default defineScriptGrader(async ({ output }) => {
  const provider = createProviderClient();
  const info = await provider.getInfo();
  const reply = await provider.invoke({ question: `Is this polite? ${output}`, systemPrompt: 'Answer yes or no.' });
  const anonymous = await fetch(`${process.env.AGENTV_PROVIDER_PROXY_URL}/info`, { unix: process.env.AGENTSPROOF_PROVIDER_PROXY_SOCKET });
  const polite = (reply.rawText ?? '').includes('yes');
  return {
    score: polite ? 1 : 0,
    reason: `max ${info.maxCalls}, after ${(await provider.getInfo()).callCount} call(s), anonymous ${anonymous.status}`,
  };
});
"""


def test_provider_true_gives_invoke_and_info_behind_the_token(bun, byok_env, tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "polite.ts").write_text(PROXY_SCRIPT)
    (tmp_path / "evals").mkdir()
    suite = tmp_path / "evals" / "suite.yaml"
    suite.write_text(
        "tests:\n  - id: greet\n    input: Greet me\n    assert:\n"
        "      - {type: script, command: [bun, run, ../scripts/polite.ts], provider: true}\n"
    )
    byok_env.add(Rule(reply="Good morning to you!", judge=False, model="m"))
    byok_env.add(Rule(reply="yes, it is polite", system_contains="Answer yes or no.", model="j"))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--judge-model", "j", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    script = _trials(only_report(out))["greet"]["graders"][0]
    assert script["score"] == 1.0 and script["reasoning"] == "max 50, after 1 call(s), anonymous 401", script
    asked = [r for r in byok_env.requests if "Answer yes or no." in json.dumps(r["messages"])]
    assert len(asked) == 1 and asked[0]["model"] == "j" and "Good morning to you!" in json.dumps(asked[0]["messages"])
    report = next(out.glob("*/*-tc-eval.json"))
    code, said, err = run_cli(["verify", report, "--regrade"])  # a script that asked the judge is not re-run without it
    assert code == 0 and "1 judged grader result(s) not re-run" in said + err, said + err


def test_the_commands_last_word_is_found_above_the_eval_and_the_payload_holds_the_test(tmp_path):
    from agentsproof.formats.agentevals.items import load_suite

    # agentv examples/features/import-claude: `command: [bun, graders/transcript-quality.ts]` from evals/
    (tmp_path / ".agentv").mkdir()
    (tmp_path / "graders").mkdir()
    (tmp_path / "graders" / "transcript-quality.ts").write_text("export {};\n")
    (tmp_path / "evals").mkdir()
    suite = tmp_path / "evals" / "transcript-check.EVAL.yaml"
    suite.write_text(
        "tests:\n  - id: transcript-quality\n    input: Analyze the transcript\n    metadata: {team: a}\n"
        "    expected_output: [{role: assistant, tool_calls: [{tool: search, output: {results: [x]}}]}]\n"
        "    assert:\n      - {type: script, command: [bun, graders/transcript-quality.ts], provider: {max_calls: 3}}\n"
        "      - Transcript contains meaningful assistant messages\n"
    )
    built = load_suite(suite)
    script = built.graders["transcript-quality"].graders[0]
    assert script.run == ["bun", str((tmp_path / "graders" / "transcript-quality.ts").resolve())]
    assert script.provider_calls == 3 and script.stdin == "json"
    assert script.payload["criteria"] == "Transcript contains meaningful assistant messages"
    assert script.payload["expected_output"][0]["tool_calls"][0]["output"] == {"results": ["x"]}
    assert script.payload["input"] == [{"role": "user", "content": "Analyze the transcript"}] and script.payload["metadata"] == {"team": "a"}
    suite.write_text(suite.read_text().replace("provider: {max_calls: 3}", "provider: {max_calls: -1}"))
    with pytest.raises(Exception, match=r"provider.max_calls: must be a whole number"):
        load_suite(suite)


SETUP_HOOKS = Path(__file__).resolve().parents[1] / "data" / "agentv-real" / "examples" / "features" / "setup-hooks"


def test_a_typescript_extension_runs_with_bun(bun, byok_env, tmp_path):
    # agentv's cross-repo-sync runs `extensions: [file://../scripts/setup.ts:beforeEach]`: TypeScript, in agentv's runtime
    root = tmp_path / "setup-hooks"
    shutil.copytree(SETUP_HOOKS, root)
    module = root / "scripts" / "workspace-setup.mjs"
    typed = module.read_text().replace("export function beforeAll(context)", "export function beforeAll(context: { workspace_path: string; hook_name: string; eval_dir: string })")
    (root / "scripts" / "workspace-setup.ts").write_text(typed.replace("export function afterEach(context)", "export function afterEach(context: { test_id: string })"))
    module.unlink()
    suite = root / "evals" / "suite.yaml"
    suite.write_text(suite.read_text().replace("workspace-setup.mjs", "workspace-setup.ts"))
    byok_env.add(Rule(reply='{"reasoning": "reports it", "passed": true, "score": 1.0}', judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--output", out, "--no-cache", "--model", "m"])
    assert code == 0, err
    trial = only_report(out)["items"][0]["with_arm"]["trials"][0]
    log = "\n".join(e["text"] for e in trial["log"])
    assert "extensions[0]:beforeAll: extension saw the evals folder" in log and "extensions[1]:afterEach: after sees-the-setup" in log
