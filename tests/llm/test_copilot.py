"""The ``copilot`` provider end to end: the real github-copilot-sdk driving the real Copilot
CLI, whose BYOK mode points at the scripted OpenAI-compatible server on loopback. No GitHub
login is involved: HOME is an empty temporary folder and the token variables are unset.

The CLI binary comes from COPILOT_CLI_PATH (``make test`` installs it), the repo's
``.venv/copilot-cli`` or ``copilot`` on PATH; without one these tests are skipped.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Iterator

import pytest

from conftest import Rule, ScriptedServer, all_output_text, make_plugin, read_json, run_cli, simple_eval
from copilot_cli import cli_cache, copilot_byok  # noqa: F401 - cli_cache is a fixture the module uses

pytestmark = pytest.mark.copilot

MARK = "SKILLMARK"
SKILL_TEXT = f"{MARK}: always greet with the word HELLO.\n"
MODEL = "test-model"
SECRET = "sk-copilot-test-secret"


@pytest.fixture
def copilot_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli_cache: Path) -> Iterator[ScriptedServer]:
    """Copilot as the run's provider (BYOK through the CLI) aimed at a fresh scripted server."""
    for name in ("AGENTSPROOF_PROVIDER_URL", "AGENTSPROOF_PROVIDER_KEY", "AGENTSPROOF_MODEL", "AGENTSPROOF_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "copilot")
    monkeypatch.setenv("AGENTSPROOF_RETRY_BASE_DELAY", "0")
    yield from copilot_byok(monkeypatch, tmp_path, cli_cache, SECRET)


def _system_of(req: dict) -> str:
    return "\n".join(m["content"] for m in req["messages"] if m["role"] == "system")


def _user_of(req: dict) -> str:
    return [m["content"] for m in req["messages"] if m["role"] == "user"][-1]


# ---------------------------------------------------------------- direct calls


async def test_direct_call_text_usage_and_system_message(copilot_env):
    from agentsproof.llm.base import ChatRequest
    from agentsproof.llm.copilot import CopilotClient

    srv = copilot_env
    srv.add(Rule(reply="HELLO from the skill arm", system_contains=MARK, usage=(17, 5)))
    client = CopilotClient.from_env()
    t0 = time.perf_counter()
    try:
        resp = await client.complete(
            ChatRequest(messages=[{"role": "system", "content": SKILL_TEXT}, {"role": "user", "content": "greet me"}], model=MODEL)
        )
        first = time.perf_counter() - t0
        t1 = time.perf_counter()
        again = await client.complete(ChatRequest(messages=[{"role": "user", "content": "second call"}], model=MODEL))
        second = time.perf_counter() - t1
    finally:
        await client.aclose()
    print(f"\nCopilot CLI startup {client.startup_s:.2f}s; first call {first:.2f}s, next call {second:.2f}s")

    assert resp.text == "HELLO from the skill arm"
    assert resp.usage.prompt_tokens == 17 and resp.usage.completion_tokens == 5 and resp.usage.total_tokens == 22
    assert resp.latency_s > 0 and resp.model == MODEL and resp.tool_calls == []
    assert again.text == "OK"  # the server's default reply

    # the skill text is the whole system prompt (replace mode), the user text reached the model
    req = srv.requests[0]
    assert _system_of(req).strip() == SKILL_TEXT.strip()
    assert _user_of(req).endswith("greet me")
    assert req["model"] == MODEL
    # one fresh session per call: the second call carries no trace of the first
    assert "greet me" not in str(srv.requests[1]["messages"])
    # sessions are deleted after use: nothing piles up in the user's Copilot history
    state = Path(os.environ["HOME"]) / ".copilot" / "session-state"
    assert not [p for p in state.glob("*") if not p.name.startswith(".")]

    facts = client.describe()
    assert facts["provider"] == "copilot" and facts["base_url"] == srv.base_url and facts["auth"] == "byok"
    assert SECRET not in str(facts)


async def test_concurrent_calls_share_one_cli(copilot_env):
    import asyncio

    from agentsproof.llm.base import ChatRequest
    from agentsproof.llm.copilot import CopilotClient

    srv = copilot_env
    srv.add(Rule(reply="slow", delay=0.3))
    client = CopilotClient.from_env()
    try:
        replies = await asyncio.gather(
            *[client.complete(ChatRequest(messages=[{"role": "user", "content": f"q{i}"}], model=MODEL)) for i in range(4)]
        )
        cli = client._sdk_client
    finally:
        await client.aclose()
    assert [r.text for r in replies] == ["slow"] * 4
    assert cli is not None and client._sdk_client is None  # one SDK client, stopped by aclose
    assert srv.max_in_flight >= 2  # the calls really overlapped


async def test_judge_call_gets_json_instructions_and_parses(copilot_env):
    from agentsproof.llm.copilot import CopilotClient
    from agentsproof.grading.judge import Judge
    from agentsproof.grading.llm_rubric import grade_rubric
    from agentsproof.grading.llm_rubric import LLMRubricGrader

    srv = copilot_env
    client = CopilotClient.from_env()
    try:
        result = await grade_rubric("Hello there", LLMRubricGrader(type="llm_rubric", rubric="Mentions 'hello'"), Judge(client, MODEL), "greet")
    finally:
        await client.aclose()
    assert result.errored is False and result.score == 1.0
    judge_req = srv.judge_requests()[0]
    assert "JSON schema" in _system_of(judge_req)


async def test_auth_failure_is_not_retryable_and_names_the_key(copilot_env):
    from agentsproof.llm.base import ChatRequest, LLMError
    from agentsproof.llm.copilot import CopilotClient

    copilot_env.add(Rule(status=401))
    client = CopilotClient.from_env()
    try:
        with pytest.raises(LLMError) as info:
            await client.complete(ChatRequest(messages=[{"role": "user", "content": "hi"}], model=MODEL))
    finally:
        await client.aclose()
    err = info.value
    assert err.retryable is False and err.kind == "auth" and err.status == 401
    assert "AGENTSPROOF_COPILOT_PROVIDER_KEY" in str(err) and SECRET not in str(err)


# ---------------------------------------------------------------- through the CLI


def _one_skill(tmp_path: Path, ev: dict) -> Path:
    make_plugin(tmp_path, plugin="demo-plugin", skills={"greeter": {"prompt": SKILL_TEXT, "eval": ev}})
    return tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"


def test_eval_through_copilot_grades_the_skill(copilot_env, tmp_path):
    srv = copilot_env
    srv.add(
        Rule(reply="HELLO, nice to meet you", system_contains=MARK, judge=False),
        Rule(reply="hi there", system_contains="You are a helpful assistant.", judge=False),
    )
    path = _one_skill(tmp_path, simple_eval([{"type": "deterministic", "checks": ["hello"]}], trials=3))  # 3: enough for --ci (UNPROVEN below)
    out = tmp_path / "out"

    code, stdout, err = run_cli(["eval", path, "--provider", "copilot", "--model", MODEL, "--output", out, "--parallel", "4", "--ci"])

    assert code == 0, err
    data = read_json(out / "demo-plugin" / "greeter-eval.json")
    assert data["provider"] == "copilot" and data["model"] == MODEL and data["verdict"] == "PASS"
    item = data["items"][0]
    assert item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.0
    assert item["delta"] == 1.0 and item["grade"] == "A" and item["passed"] is True
    assert item["with_arm"]["scored"] == 3 and item["without_arm"]["scored"] == 3
    trials = srv.trial_requests()
    assert len(trials) == 6
    assert sum(MARK in _system_of(r) for r in trials) == 3
    assert all(_user_of(r).endswith("Say hello to the user.") for r in trials)
    assert SECRET not in all_output_text(out, stdout, err)


def test_missing_cli_is_exit_30_with_install_hint(copilot_env, tmp_path, monkeypatch):
    monkeypatch.setenv("COPILOT_CLI_PATH", str(tmp_path / "no" / "copilot"))
    path = _one_skill(tmp_path, simple_eval(trials=1))

    code, stdout, err = run_cli(["eval", path, "--provider", "copilot", "--model", MODEL, "--output", tmp_path / "out"])

    assert code == 30
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "COPILOT_CLI_PATH" in lines[0] and "npm install -g @github/copilot" in lines[0]
    assert "Traceback" not in err
    assert not copilot_env.requests


def test_server_500_makes_trials_errored_not_failed(copilot_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    # Retry-After: 0 keeps the CLI's own retries quick (it retries 5 times by itself)
    copilot_env.add(Rule(status=500, retry_after=0))
    path = _one_skill(tmp_path, simple_eval(trials=1))
    out = tmp_path / "out"

    code, stdout, err = run_cli(["eval", path, "--provider", "copilot", "--model", MODEL, "--output", out, "--parallel", "2"])

    assert code == 30
    item = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]
    assert item["status"] == "errored" and item["grade"] is None and item["delta"] is None
    for arm in ("with_arm", "without_arm"):
        assert item[arm]["errored"] == 1 and item[arm]["scored"] == 0
        trial = item[arm]["trials"][0]
        assert trial["status"] == "errored" and trial["score"] is None
        assert "HTTP 500" in trial["error"], trial
    assert SECRET not in all_output_text(out, stdout, err)


# ---------------------------------------------------------------- discovery and events (pure logic)


@pytest.fixture
def bare_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An installed CLI file, an empty HOME, no tokens, no BYOK."""
    pytest.importorskip("copilot")
    fake_cli = tmp_path / "bin" / "copilot"
    fake_cli.parent.mkdir()
    fake_cli.write_text("#!/bin/sh\n")
    fake_cli.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COPILOT_CLI_PATH", str(fake_cli))
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN", "COPILOT_HOME",
                 "AGENTSPROOF_COPILOT_PROVIDER_URL", "AGENTSPROOF_COPILOT_PROVIDER_KEY", "AGENTSPROOF_COPILOT_PROVIDER_TYPE"):
        monkeypatch.delenv(name, raising=False)
    return home


def test_status_says_how_to_log_in(bare_env, monkeypatch):
    from agentsproof.llm.copilot import copilot_status, copilot_usable

    ok, problem = copilot_status()
    assert not ok and not copilot_usable()
    assert "/login" in problem and "GH_TOKEN" in problem and "AGENTSPROOF_COPILOT_PROVIDER_URL" in problem

    monkeypatch.setenv("GH_TOKEN", "ghp_not_a_real_token")
    assert copilot_status() == (True, "")


def test_status_accepts_a_stored_login(bare_env):
    from agentsproof.llm.copilot import copilot_usable, login_source

    config = bare_env / ".copilot" / "config.json"
    config.parent.mkdir()
    config.write_text('// managed\n{\n  "firstLaunchAt": "2026-01-01T00:00:00Z"\n}\n')
    assert login_source() is None and not copilot_usable()
    config.write_text('// managed\n{\n  "loggedInUsers": [{"host": "https://github.com", "login": "octo"}]\n}\n')
    assert login_source() == str(config) and copilot_usable()


def test_status_names_a_missing_or_bad_cli(bare_env, monkeypatch, tmp_path):
    from agentsproof.llm.base import LLMError
    from agentsproof.llm.copilot import CopilotClient, copilot_status

    monkeypatch.setenv("AGENTSPROOF_COPILOT_PROVIDER_URL", "http://127.0.0.1:9/v1")
    assert copilot_status() == (True, "")
    monkeypatch.setenv("COPILOT_CLI_PATH", str(tmp_path / "missing"))
    ok, problem = copilot_status()
    assert not ok and "does not exist" in problem and "npm install -g @github/copilot" in problem
    with pytest.raises(LLMError, match="COPILOT_CLI_PATH"):
        CopilotClient.from_env()
    monkeypatch.setenv("COPILOT_CLI_PATH", str(bare_env.parent / "bin" / "copilot"))
    monkeypatch.setenv("AGENTSPROOF_COPILOT_PROVIDER_TYPE", "bedrock")
    ok, problem = copilot_status()
    assert not ok and "AGENTSPROOF_COPILOT_PROVIDER_TYPE" in problem


def _event(kind: str, data: dict, agent_id: str | None = None):
    import uuid

    from copilot.session_events import SessionEvent

    raw = {"type": kind, "id": str(uuid.uuid4()), "timestamp": "2026-01-01T00:00:00Z", "data": data}
    if agent_id:
        raw["agentId"] = agent_id
    return SessionEvent.from_dict(raw)


def test_collector_records_tools_usage_and_final_message():
    pytest.importorskip("copilot")
    from agentsproof.llm.copilot_events import EventCollector

    c = EventCollector()
    c.on_event(_event("assistant.message", {"content": "", "messageId": "m1", "toolRequests": [
        {"name": "view", "toolCallId": "t1", "arguments": {"path": "README.md"}}]}))
    c.on_event(_event("tool.execution_start", {"toolCallId": "t1", "toolName": "view", "arguments": {"path": "README.md"}}))
    c.on_event(_event("assistant.usage", {"model": "m", "inputTokens": 10, "outputTokens": 3}))
    c.on_event(_event("assistant.usage", {"model": "m", "inputTokens": 4, "outputTokens": 2}, agent_id="sub"))
    c.on_event(_event("assistant.message", {"content": "sub-agent talk", "messageId": "m2"}, agent_id="sub"))
    c.on_event(_event("assistant.message", {"content": "final answer", "messageId": "m3", "model": "m"}))
    assert not c.done.is_set()
    c.on_event(_event("session.idle", {}))
    assert c.done.is_set() and c.error is None
    assert c.final_text() == "final answer"
    assert c.usage.prompt_tokens == 14 and c.usage.completion_tokens == 5 and c.usage.total_tokens == 19
    assert c.tool_calls == [{"id": "t1", "name": "view", "arguments": '{"path": "README.md"}', "executed": True}]


def test_session_errors_are_classified():
    pytest.importorskip("copilot")
    from copilot.session_events import SessionErrorData

    from agentsproof.llm.copilot_events import error_from_session_error

    def err(**data):
        return error_from_session_error(SessionErrorData.from_dict(data), auth_hint="check KEY")

    rate = err(errorType="rate_limit", message="Too many requests", statusCode=429)
    assert rate.retryable and rate.kind == "rate_limit" and rate.status == 429
    busy = err(errorType="query", message="Service unavailable", statusCode=503)
    assert busy.retryable and "HTTP 503" in str(busy)
    # the CLI already retried with backoff: do not multiply its retries
    exhausted = err(errorType="query", message="Failed; retried 5 times (total retry wait time: 5.00 seconds) Last error: 500", statusCode=500)
    assert not exhausted.retryable and exhausted.status == 500
    down = err(errorType="query", message="Could not connect to local model provider at http://127.0.0.1:9/v1.")
    assert down.retryable and down.kind == "connection"
    auth = err(errorType="authentication", message="Authentication failed (HTTP 401).\n  Check your COPILOT_PROVIDER_API_KEY.", statusCode=401)
    assert not auth.retryable and auth.kind == "auth" and "check KEY" in str(auth) and "COPILOT_PROVIDER_API_KEY" not in str(auth)
    bad_model = err(errorType="query", message="model not found", statusCode=404)
    assert not bad_model.retryable


def test_render_prompt_keeps_system_and_turns():
    from agentsproof.llm.copilot_events import DEFAULT_SYSTEM, render_prompt

    system, prompt = render_prompt([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}], None)
    assert (system, prompt) == ("S", "U")
    system, prompt = render_prompt([{"role": "user", "content": "only"}], {"type": "object"})
    assert system.startswith(DEFAULT_SYSTEM) and '{"type": "object"}' in system and prompt == "only"
    _, prompt = render_prompt(
        [{"role": "system", "content": "S"}, {"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"}, {"role": "user", "content": "q2"}],
        None,
    )
    assert prompt.index("q1") < prompt.index("a1") < prompt.index("q2") and prompt.endswith("q2")
