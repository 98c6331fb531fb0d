"""Hostile provider replies: every shape ends as a reply or an LLMError with its reason,
through the real OpenAI-compatible client (both transports), and as an errored (or scored) trial in
a full report through the real CLI. Nothing raises out of the client or the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentsproof.llm.base import ChatRequest, LLMError
from agentsproof.llm.openai_http import openai_client
from agentsproof.llm.replies import MAX_JSON_DEPTH, MAX_NUMBER_CHARS, MAX_REPLY_BYTES, ReplyError, load_json
from agentsproof.llm.retry import RetryingClient, RetryPolicy
from conftest import SECRET_KEY, Rule, make_plugin, read_json, run_cli, simple_eval

pytestmark = pytest.mark.usefixtures("openai_path")  # every test on both transports: the pooled one and httpx's own

MSGS = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]
MARK = "HOSTILEMARK"


def completion(message: object = None, **top: object) -> dict:
    """A chat completion whose first message (or anything else) is replaced."""
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"} if message is None else message}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
    body.update(top)
    return body


def raw(text: str) -> bytes:
    return text.encode()


DEEP = b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
OK_PREFIX = '{"choices": [{"message": {"content": "hello"}}], '

# (id, rule kwargs, expected): expected is ("text", reply text) or ("error", reason part)
SHAPES = [
    ("deep-nesting", {"raw_body": DEEP}, ("error", f"levels deep; the limit is {MAX_JSON_DEPTH}")),
    ("400-digit-usage", {"raw_body": raw(OK_PREFIX + '"usage": {"prompt_tokens": ' + "9" * 400 + "}}")},
     ("error", f"400 digits exceeds the limit of {MAX_NUMBER_CHARS} characters")),
    ("usage-not-object", {"body": completion(usage="lots")}, ("text", "hello")),
    ("usage-odd-counts", {"body": completion(usage={"prompt_tokens": -5, "completion_tokens": "7", "total_tokens": True, "cost": "free"})},
     ("text", "hello")),
    ("int-content-parts", {"body": completion({"content": [1, 2, {"type": "text", "text": "hello"}, {"text": 3}]})}, ("text", "hello")),
    ("only-int-parts", {"body": completion({"content": [1, 2]})}, ("error", "empty reply (content has no text parts")),
    ("tool-calls-7", {"body": completion({"content": "hello", "tool_calls": 7})}, ("text", "hello")),
    ("tool-calls-odd", {"body": completion({"content": "hello", "tool_calls": [7, None, {"function": {"name": 5, "arguments": {"a": [1]}}}]})},
     ("text", "hello")),
    ("choices-empty", {"body": {"choices": []}}, ("error", "the provider returned no choices")),
    ("choices-null", {"body": {"choices": [None]}}, ("error", "choices[0] is null, not an object")),
    ("choices-missing", {"body": {"id": "x"}}, ("error", "'choices' is null, not an array")),
    ("message-string", {"body": {"choices": [{"message": "hello"}]}}, ("error", "choices[0].message is a string")),
    ("content-null", {"body": completion({"role": "assistant", "content": None})}, ("error", "empty reply (content is null")),
    ("content-missing", {"body": completion({"role": "assistant"}), }, ("error", "empty reply (content is null")),
    ("tool-calls-only", {"body": completion({"content": None, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]})},
     ("text", "")),
    ("content-number", {"body": completion({"content": 42})}, ("error", "empty reply (content is a number")),
    ("nan", {"raw_body": raw(OK_PREFIX + '"usage": {"prompt_tokens": NaN}}')}, ("error", "NaN is not a valid JSON number")),
    ("infinity", {"raw_body": raw(OK_PREFIX + '"usage": {"cost": -Infinity}}')}, ("error", "-Infinity is not a valid JSON number")),
    ("1e400", {"raw_body": raw(OK_PREFIX + '"usage": {"cost": 1e400}}')}, ("error", "1e400 is out of range")),
    ("invalid-utf8", {"raw_body": b'{"choices": [{"message": {"content": "hel\xff\xfelo"}}]}'}, ("error", "not valid UTF-8")),
    ("top-level-array", {"body": [completion()]}, ("error", "the reply is an array, not a JSON object")),
    ("top-level-string", {"body": "hello"}, ("error", "the reply is a string, not a JSON object")),
    ("not-json", {"raw_body": b"<html>bad gateway</html>"}, ("error", "not valid JSON")),
    ("empty-body", {"raw_body": b""}, ("error", "not valid JSON")),
    ("huge-body", {"raw_body": b" " * (MAX_REPLY_BYTES + 1)}, ("error", f"exceeds the limit of {MAX_REPLY_BYTES:,} bytes")),
    ("huge-chunked-body", {"raw_body": b" " * (MAX_REPLY_BYTES + 1), "chunked": True},
     ("error", f"more than {MAX_REPLY_BYTES:,} bytes exceeds the limit")),
    ("chunked-ok", {"body": completion(), "chunked": True}, ("text", "hello")),
    ("model-not-string", {"body": completion(model={"a": 1})}, ("text", "hello")),
    ("error-body-deep", {"status": 500, "raw_body": DEEP}, ("error", "HTTP 500")),
    ("error-body-huge-number", {"status": 503, "raw_body": raw('{"error": {"message": ' + "7" * 5000 + "}}")}, ("error", "HTTP 503")),
    ("retry-after-nan", {"status": 429, "headers": {"Retry-After": "nan"}}, ("error", "HTTP 429")),
    ("retry-after-1e400", {"status": 503, "headers": {"Retry-After": "1e400", "retry-after-ms": "-5"}}, ("error", "HTTP 503")),
]
IDS = [s[0] for s in SHAPES]



@pytest.mark.parametrize("name, rule, expected", SHAPES, ids=IDS)
async def test_client_contains_every_shape(scripted_server, name, rule, expected):
    scripted_server.add(Rule(**rule))
    slept: list[float] = []

    async def no_sleep(s: float) -> None:
        slept.append(s)

    client = RetryingClient(
        openai_client(base_url=scripted_server.base_url, api_key=SECRET_KEY),
        RetryPolicy(max_retries=1, base_delay=0, max_wait=0.01),
        sleep=no_sleep,
    )
    try:
        if expected[0] == "text":
            resp = await client.complete(ChatRequest(messages=MSGS, model="m", timeout=20))
            assert resp.text == expected[1]
            assert all(isinstance(v, int) and v >= 0 for v in resp.usage.model_dump().values())
            assert isinstance(resp.model, str) and all(isinstance(c["name"], str) for c in resp.tool_calls)
        else:
            with pytest.raises(LLMError) as err:
                await client.complete(ChatRequest(messages=MSGS, model="m", timeout=20))
            reason = str(err.value)
            assert expected[1] in reason, reason
            assert len(reason) < 700 and "\n" not in reason and SECRET_KEY not in reason
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    "body, problem",
    [
        (b"[" * 65 + b"]" * 65, "65 levels deep; the limit is 64"),
        (b"1" * 41, "41 digits exceeds the limit of 40"),
        (b"-1.5e-400", None),  # underflows to -0.0: finite, accepted
        (b'"' + b"\\" * 1001, "not valid JSON"),
        (b'{"a": "' + b"[{" * 5000 + b'"}', None),  # brackets inside strings do not count
    ],
)
def test_load_json_limits(body, problem):
    if problem is None:
        load_json(body)
    else:
        with pytest.raises(ReplyError, match=problem.replace("(", r"\(")):
            load_json(body)


async def test_a_provider_raising_a_stray_exception_is_an_llm_error():
    """RetryingClient turns a provider bug into an errored call with its reason."""
    from agentsproof.llm.base import LLMClient

    class Buggy(LLMClient):
        name = "buggy"

        async def complete(self, request):
            raise KeyError("choices")

    with pytest.raises(LLMError, match="provider buggy failed unexpectedly: KeyError: 'choices'"):
        await RetryingClient(Buggy(), RetryPolicy(max_retries=2)).complete(ChatRequest(messages=MSGS, model="m", budget=5))


# ---------------------------------------------------------------- through the CLI


def _eval_tree(tmp_path: Path) -> Path:
    ev = simple_eval([{"type": "deterministic", "checks": ["hello"]}], trials=1, timeout=30)
    make_plugin(tmp_path, skills={"greeter": {"prompt": f"{MARK}: greet.\n", "eval": ev}})
    return tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"


@pytest.mark.parametrize("name, rule, expected", SHAPES, ids=IDS)
def test_cli_run_contains_every_shape(byok_env, tmp_path, monkeypatch, name, rule, expected):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "1")
    monkeypatch.setenv("AGENTSPROOF_RETRY_MAX_WAIT", "0.01")
    byok_env.add(Rule(system_contains=MARK, judge=False, **rule), Rule(reply="hello", judge=False))
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["eval", _eval_tree(tmp_path), "--model", "m", "--output", out, "--parallel", "1"])
    assert "Traceback" not in stdout + stderr and "internal error" not in (stdout + stderr).lower(), stderr
    base = out / "demo-plugin"
    for ext in ("json", "md", "html"):
        assert (base / f"greeter-eval.{ext}").is_file()
    item = read_json(base / "greeter-eval.json")["items"][0]
    (trial,) = item["with_arm"]["trials"]
    assert item["without_arm"]["trials"][0]["status"] == "scored"
    if expected[0] == "text":
        assert code == 0, stderr
        assert trial["status"] == "scored" and trial["response"] == expected[1]
        assert trial["score"] == (1.0 if "hello" in expected[1] else 0.0)
    else:
        assert code == 30, stderr
        assert trial["status"] == "errored" and trial["score"] is None
        assert expected[1] in trial["error"] and "after 2 attempts" in trial["error"]
        assert item["with_arm"]["errored"] == 1
        assert expected[1] in (base / "greeter-eval.md").read_text(encoding="utf-8").replace("\\", "")  # Markdown escapes


def test_cli_report_stays_small_for_a_huge_reply(byok_env, tmp_path, monkeypatch):
    """The 8 MB body is refused, not copied into the reports."""
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(system_contains=MARK, judge=False, raw_body=json.dumps(completion({"content": "x" * (MAX_REPLY_BYTES + 10)})).encode()))
    out = tmp_path / "out"
    code, _, stderr = run_cli(["eval", _eval_tree(tmp_path), "--model", "m", "--output", out])
    assert code == 30, stderr
    assert all(p.stat().st_size < 1_000_000 for p in out.rglob("*") if p.is_file())


# ---------------------------------------------------------------- Copilot session events


def _event(kind: str, data: dict, **odd: object):
    """A real SDK event, then given fields of odd types (as a newer or broken CLI might send)."""
    import uuid

    from copilot.session_events import SessionEvent

    event = SessionEvent.from_dict({"type": kind, "id": str(uuid.uuid4()), "timestamp": "2026-01-01T00:00:00Z", "data": data})
    for name, value in odd.items():
        setattr(event.data, name, value)
    return event


def test_copilot_events_of_odd_shapes_never_raise():
    pytest.importorskip("copilot")
    from copilot.session_events import SessionErrorData

    from agentsproof.llm.copilot_events import EventCollector, error_from_session_error

    c = EventCollector()
    c.on_event(_event("assistant.usage", {"model": "m", "inputTokens": 1, "outputTokens": 1},
                      input_tokens="lots", output_tokens=10**400, cost=float("nan"), model=7))
    c.on_event(_event("assistant.message", {"content": "x", "messageId": "m1"}, content=42, tool_requests=7))
    c.on_event(_event("assistant.message", {"content": "x", "messageId": "m2"}, content="final", tool_requests=[7, None]))
    c.on_event(_event("tool.execution_start", {"toolCallId": "t", "toolName": "view"}, tool_call_id=["x"], tool_name=5, arguments={1, 2}))
    c.on_event(_event("session.idle", {}))
    assert c.done.is_set() and c.final_text() == "final"
    assert (c.usage.prompt_tokens, c.usage.completion_tokens) == (0, 0) and c.cost is None and c.model == ""
    assert c.tool_calls == []  # entries without a name or id are skipped
    c.on_event(_event("tool.execution_start", {"toolCallId": "t", "toolName": "view"}, arguments={1, 2}))
    assert c.tool_calls == [{"id": "t", "name": "view", "arguments": '"{1, 2}"', "executed": True}]

    class Misbehaving:  # reading the event fails: the collector skips it but still ends the wait
        data = _event("session.idle", {}).data

        @property
        def agent_id(self):
            raise RuntimeError("odd event")

    broken = EventCollector()
    broken.on_event(Misbehaving())
    assert broken.done.is_set() and broken.odd_events == 1 and "odd event" in broken.odd_event

    err = error_from_session_error(
        SessionErrorData.from_dict({"errorType": "query", "message": "m"}), auth_hint="h"
    )
    assert "m" in str(err)
    odd = SessionErrorData.from_dict({"errorType": "query", "message": "m"})
    odd.status_code, odd.message, odd.error_type = [429], {"a": 1}, 5
    err = error_from_session_error(odd, auth_hint="h")
    assert err.status is None and "session error" in str(err)
