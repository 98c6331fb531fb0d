"""The http target against a real JSON agent on loopback: request shape, reply parsing,
retries, errors and secrets. The target is driven directly, one trial at a time."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import pytest

from agentsproof.core.errors import InputError
from agentsproof.model.items import EvalItem
from agentsproof.targets.base import TargetError, TrialInput, TrialRecord
from agentsproof.model.items import SkillFile
from agentsproof.targets.config import parse_targets
from agentsproof.targets.http.target import HttpTarget
from agentsproof.targets.registry import build_target

TOKEN = "tok-very-secret-123"
SKILL_TEXT = "---\nname: shout\n---\nAlways answer in UPPERCASE.\n"


@dataclass
class Reply:
    body: Any = None
    """A JSON value to send (default: the echo reply)."""
    raw: bytes | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False
    """Close the connection without answering."""


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any
    at: float


class Agent:
    """A scripted JSON agent: replies from ``script`` in order, then ``default(body)``."""

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.default: Callable[[Any], Reply] = lambda body: Reply(body={"answer": f"echo: {body.get('prompt')}"})
        self.seen: list[Seen] = []
        self.stopping = threading.Event()
        agent = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw) if raw else None
                agent.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic()))
                reply = agent.script.pop(0) if agent.script else agent.default(body)
                if reply.delay:
                    agent.stopping.wait(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    return
                data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> "Agent":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def agent() -> Iterator[Agent]:
    with Agent() as a:
        yield a


def make_target(spec: dict[str, Any], name: str = "myagent") -> HttpTarget:
    """Through targets.yaml parsing and the registry, as a run builds it (the skill in a
    ``system`` field unless the test says how it travels)."""
    if "skill_field" not in spec and "with_url" not in spec:
        spec = {**spec, "skill_field": "system"}
    defn = parse_targets({name: {"type": "http", **spec}}, "targets.yaml")[name]
    target = build_target(defn, model="some-model")
    assert isinstance(target, HttpTarget)
    return target


def trial(arm: str = "without", *, timeout: float = 10.0, skill: SkillFile | None = None, prompt: str = "What is 2+2?") -> TrialInput:
    item = EvalItem(
        id="it1", name="shout", kind="skill", source_path="SKILL.md", system_prompt=SKILL_TEXT, task_name="t1",
        prompt=prompt, graders=[], trials=1, timeout=timeout, threshold=0.5,
    )
    system = SKILL_TEXT if arm == "with" else "You are a helpful assistant."
    return TrialInput(item=item, arm=arm, index=0, system=system, prompt=prompt, timeout=timeout, skill=skill)


def run(target: HttpTarget, t: TrialInput) -> TrialRecord:
    async def go() -> TrialRecord:
        try:
            return await target.run(t)
        finally:
            await target.aclose()

    return asyncio.run(go())


def run_error(target: HttpTarget, t: TrialInput) -> TargetError:
    with pytest.raises(TargetError) as info:
        run(target, t)
    return info.value


# -- the request ---------------------------------------------------------------------


def test_prompt_lands_in_the_request_field_and_extra_fields_are_sent(agent: Agent) -> None:
    extra = {"model": "m1", "options": {"temperature": 0}}
    target = make_target({"url": agent.url + "/ask", "request_field": "question", "extra": extra})
    rec = run(target, trial(prompt="hello agent"))
    assert [s.path for s in agent.seen] == ["/ask"]
    assert agent.seen[0].body == {"model": "m1", "options": {"temperature": 0}, "question": "hello agent"}
    assert agent.seen[0].headers["content-type"] == "application/json"
    assert rec.answer == "echo: None"  # the echo agent reads 'prompt', which this target does not send


def test_nested_request_field_is_created_inside_extra_without_changing_the_spec(agent: Agent) -> None:
    target = make_target({"url": agent.url, "request_field": "input.message.text", "extra": {"input": {"session": "s1"}}})
    run(target, trial(prompt="nested hi"))
    run(target, trial(prompt="second"))
    assert agent.seen[0].body == {"input": {"session": "s1", "message": {"text": "nested hi"}}}
    assert agent.seen[1].body == {"input": {"session": "s1", "message": {"text": "second"}}}
    assert target.spec.extra == {"input": {"session": "s1"}}  # deep-copied, never mutated


def test_request_field_may_index_into_a_list_from_extra(agent: Agent) -> None:
    extra = {"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": ""}]}
    target = make_target({"url": agent.url, "request_field": "messages.1.content", "extra": extra})
    run(target, trial(prompt="list hi"))
    assert agent.seen[0].body["messages"][1] == {"role": "user", "content": "list hi"}
    assert agent.seen[0].body["messages"][0] == {"role": "system", "content": "be brief"}


def test_skill_text_is_sent_only_in_the_with_arm(agent: Agent) -> None:
    target = make_target({"url": agent.url, "skill_field": "context.skill"})
    skill = SkillFile(name="shout", kind="skill", text="SKILL FILE TEXT")
    run(target, trial("with", skill=skill))
    run(target, trial("with"))  # no SkillFile (a non-workspace trial): the arm's system prompt
    run(target, trial("without"))
    assert agent.seen[0].body == {"prompt": "What is 2+2?", "context": {"skill": "SKILL FILE TEXT"}}
    assert agent.seen[1].body == {"prompt": "What is 2+2?", "context": {"skill": SKILL_TEXT}}
    assert agent.seen[2].body == {"prompt": "What is 2+2?"}


def test_with_url_routes_the_with_arm_to_its_own_endpoint(agent: Agent) -> None:
    target = make_target({"url": agent.url + "/plain", "with_url": agent.url + "/skilled"})
    run(target, trial("with"))
    run(target, trial("without"))
    assert [s.path for s in agent.seen] == ["/skilled", "/plain"]
    assert all(s.body == {"prompt": "What is 2+2?"} for s in agent.seen)


def test_bearer_token_and_headers_are_sent_but_never_shown(agent: Agent, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", TOKEN)
    monkeypatch.setenv("TEAM_KEY", "team-key-value-9")
    spec = {
        "url": agent.url + "/ask?api_key=q-secret-42&mode=fast",
        "token_env": "AGENT_TOKEN",
        "headers": {"X-Team-Key": "${TEAM_KEY}", "X-Trace": "on", "Api-Key": "literal-key-77"},
    }
    target = make_target(spec)
    agent.script = [Reply(status=401, body={"error": {"message": f"bad token Bearer {TOKEN}, team team-key-value-9, key literal-key-77"}})]
    err = run_error(target, trial())
    seen = agent.seen[0].headers
    assert seen["authorization"] == f"Bearer {TOKEN}"
    assert seen["x-team-key"] == "team-key-value-9" and seen["x-trace"] == "on"
    assert "HTTP 401" in str(err) and "check token_env AGENT_TOKEN" in str(err) and "bad token" in str(err)
    shown = json.dumps(target.describe())
    for secret in (TOKEN, "team-key-value-9", "literal-key-77", "q-secret-42"):
        assert secret not in str(err)
        assert secret not in shown
    assert target.describe()["headers"] == {"X-Team-Key": "${TEAM_KEY}", "X-Trace": "on", "Api-Key": "***"}
    assert target.describe()["token_env"] == "AGENT_TOKEN"
    assert target.describe()["url"] == agent.url + "/ask?api_key=***&mode=fast"
    assert agent.seen[0].path == "/ask?api_key=q-secret-42&mode=fast"


def test_user_info_in_the_url_is_basic_auth_and_never_shown(agent: Agent) -> None:
    target = make_target({"url": agent.url.replace("http://", "http://user:pw-secret-1@") + "/ask"})
    agent.script = [Reply(status=403, raw=b"denied for user:pw-secret-1")]
    err = run_error(target, trial())
    assert agent.seen[0].headers["authorization"].startswith("Basic ")
    assert "HTTP 403" in str(err) and "pw-secret-1" not in str(err)
    assert target.describe()["url"] == agent.url.replace("http://", "http://***@") + "/ask"


def test_user_info_and_token_env_together_are_an_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", TOKEN)
    with pytest.raises(InputError) as info:
        make_target({"url": "http://u:p@127.0.0.1:9/ask", "token_env": "AGENT_TOKEN"})
    assert info.value.field == "myagent.token_env" and "user-info" in info.value.message


@pytest.mark.parametrize("value", [None, "", "  "])
def test_missing_or_empty_token_env_is_an_input_error(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv("AGENT_TOKEN", raising=False)
    else:
        monkeypatch.setenv("AGENT_TOKEN", value)
    with pytest.raises(InputError) as info:
        make_target({"url": "http://127.0.0.1:9/ask", "token_env": "AGENT_TOKEN"})
    assert info.value.source == "targets.yaml"
    assert info.value.field == "myagent.token_env"
    assert "AGENT_TOKEN" in info.value.message


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"request_field": "input.text", "extra": {"input": "fixed"}}, "myagent.request_field"),
        ({"skill_field": "prompt.skill"}, "myagent.skill_field"),
        ({"answer_field": "choices..text"}, "myagent.answer_field"),
    ],
)
def test_paths_that_cannot_work_are_input_errors(spec: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as info:
        make_target({"url": "http://127.0.0.1:9/ask", **spec})
    assert info.value.field == field


def test_describe_names_the_settings_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_HOST", "agent.internal:8080")
    target = make_target(
        {"url": "http://${AGENT_HOST}/ask", "answer_field": "data.reply", "tools_field": "steps", "extra": {"model": "m1"},
         "timeout": 30, "max_concurrency": 3}
    )
    assert target.spec.url == "http://agent.internal:8080/ask"
    assert target.describe() == {
        "target": "myagent", "target_type": "http", "url": "http://${AGENT_HOST}/ask", "request_field": "prompt",
        "answer_field": "data.reply", "tools_field": "steps", "skill_field": "system", "timeout": 30.0, "extra": {"model": "m1"},
    }
    assert target.max_concurrency == 3
    assert target.kind == "http" and target.uses_workspace is False


# -- the reply -----------------------------------------------------------------------


def test_answer_at_a_dotted_path_with_list_indexes(agent: Agent) -> None:
    agent.default = lambda body: Reply(body={"choices": [{"text": "four"}, {"text": "other"}]})
    rec = run(make_target({"url": agent.url, "answer_field": "choices.0.text"}), trial())
    assert rec.answer == "four"
    assert rec.latency_s > 0


def test_a_number_answer_is_text(agent: Agent) -> None:
    agent.default = lambda body: Reply(body={"result": {"value": 4}})
    assert run(make_target({"url": agent.url, "answer_field": "result.value"}), trial()).answer == "4"


def test_tools_usage_cost_and_skill_use_are_read(agent: Agent) -> None:
    steps = [
        "search",
        {"name": "read_file", "arguments": {"path": "a.txt"}, "result": "hello", "ok": True},
        {"tool": "bash", "args": "ls -la", "output": "x.txt", "is_error": True},
        {"function": {"name": "fetch", "arguments": '{"url": "u"}'}},
        {"no_name": 1},
        17,
    ]
    agent.default = lambda body: Reply(
        body={"answer": "done", "steps": steps, "meta": {"usage": {"prompt_tokens": 11, "completion_tokens": 5}, "cost": 0.25,
              "skill": True}}
    )
    target = make_target(
        {"url": agent.url, "tools_field": "steps", "usage_field": "meta.usage", "cost_field": "meta.cost",
         "skill_used_field": "meta.skill"}
    )
    rec = run(target, trial())
    assert [(c.name, c.arguments, c.result, c.ok) for c in rec.trajectory] == [
        ("search", "", "", None),
        ("read_file", '{"path": "a.txt"}', "hello", True),
        ("bash", "ls -la", "x.txt", False),
        ("fetch", '{"url": "u"}', "", None),
    ]
    assert (rec.usage.prompt_tokens, rec.usage.completion_tokens, rec.usage.total_tokens) == (11, 5, 16)
    assert rec.cost_usd == 0.25
    assert rec.skill_used is True


def test_input_output_token_usage_and_absent_optional_fields(agent: Agent) -> None:
    agent.default = lambda body: Reply(body={"answer": "ok", "usage": {"input_tokens": 7, "output_tokens": 3, "cost": 0.5}})
    target = make_target({"url": agent.url, "usage_field": "usage", "tools_field": "tools", "skill_used_field": "used"})
    rec = run(target, trial())
    assert (rec.usage.prompt_tokens, rec.usage.completion_tokens, rec.usage.total_tokens) == (7, 3, 10)
    assert rec.cost_usd == 0.5
    assert rec.trajectory == [] and rec.skill_used is None


# -- retries -------------------------------------------------------------------------


def test_429_is_retried_after_the_retry_after_wait(agent: Agent) -> None:
    agent.script = [Reply(status=429, body={"error": "slow down"}, headers={"Retry-After": "0.4"})]
    target = make_target({"url": agent.url})
    rec = run(target, trial())
    assert rec.answer == "echo: What is 2+2?"
    assert len(agent.seen) == 2
    assert agent.seen[1].at - agent.seen[0].at >= 0.35
    assert target.waits == [0.4]
    assert any("HTTP 429" in e.text and "slow down" in e.text for e in rec.log)


@pytest.mark.parametrize("status", [503, 502, 504])
def test_gateway_errors_twice_then_ok(agent: Agent, status: int) -> None:
    agent.script = [Reply(status=status, raw=b"<html>busy</html>"), Reply(status=status, raw=b"busy")]
    rec = run(make_target({"url": agent.url}), trial())
    assert rec.answer == "echo: What is 2+2?"
    assert len(agent.seen) == 3


def test_a_dropped_connection_is_retried(agent: Agent) -> None:
    agent.script = [Reply(drop=True)]
    rec = run(make_target({"url": agent.url}), trial())
    assert rec.answer == "echo: What is 2+2?"
    assert len(agent.seen) == 2


def test_a_retry_after_beyond_the_timeout_fails_at_once(agent: Agent) -> None:
    agent.script = [Reply(status=429, body={"error": "quota"}, headers={"Retry-After": "20"})]
    err = run_error(make_target({"url": agent.url, "timeout": 5}), trial())
    assert len(agent.seen) == 1  # no 20 s wait for a retry that could not fit
    assert "HTTP 429" in str(err) and "5s timeout" in str(err)


def test_retries_stop_after_the_policy_limit(agent: Agent, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "2")
    agent.default = lambda body: Reply(status=503, body={"error": {"message": "down for maintenance"}})
    err = run_error(make_target({"url": agent.url}), trial())
    assert len(agent.seen) == 3
    assert "HTTP 503" in str(err) and "down for maintenance" in str(err) and "after 3 attempts" in str(err)
    assert err.status == 503


def test_connection_refused_is_an_errored_trial(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "1")
    err = run_error(make_target({"url": f"http://127.0.0.1:{port}/ask?token=url-secret-5"}), trial())
    assert "could not connect" in str(err) and "after 2 attempts" in str(err)
    assert "url-secret-5" not in str(err)


# -- errors --------------------------------------------------------------------------


def test_a_non_json_reply_is_an_error_not_retried(agent: Agent) -> None:
    agent.script = [Reply(raw=b"<html>Welcome to nginx</html>")]
    err = run_error(make_target({"url": agent.url}), trial())
    assert "not valid JSON" in str(err) and "Welcome to nginx" in str(err)
    assert len(agent.seen) == 1


def test_a_missing_answer_path_names_the_path_and_what_was_there(agent: Agent) -> None:
    agent.default = lambda body: Reply(body={"data": {"text": "hi", "id": 3}})
    err = run_error(make_target({"url": agent.url, "answer_field": "data.reply"}), trial())
    assert "'data.reply'" in str(err)
    assert "'data' has no 'reply'" in str(err) and "'text', 'id'" in str(err)
    assert len(agent.seen) == 1


def test_a_short_list_at_the_answer_path_says_how_long_it_is(agent: Agent) -> None:
    agent.default = lambda body: Reply(body={"choices": []})
    err = run_error(make_target({"url": agent.url, "answer_field": "choices.0.text"}), trial())
    assert "'choices' is an array of 0 items" in str(err)


@pytest.mark.parametrize(("answer", "what"), [({"text": "x"}, "an object"), (["x"], "an array"), (None, "null"), (True, "a boolean")])
def test_an_answer_that_is_not_text_is_an_error(agent: Agent, answer: Any, what: str) -> None:
    agent.default = lambda body: Reply(body={"answer": answer})
    err = run_error(make_target({"url": agent.url}), trial())
    assert what in str(err) and "'answer'" in str(err)


def test_400_is_an_error_with_an_excerpt_and_no_retry(agent: Agent) -> None:
    agent.default = lambda body: Reply(status=400, raw=b"missing field   'question'\n in body" + b"x" * 5000)
    err = run_error(make_target({"url": agent.url}), trial())
    assert len(agent.seen) == 1
    assert str(err).startswith("HTTP 400 from the agent: missing field 'question' in body")
    assert len(str(err)) < 300
    assert err.status == 400 and not err.retryable


def test_timeout_from_the_spec_ends_the_trial_in_time(agent: Agent) -> None:
    agent.default = lambda body: Reply(delay=10, body={"answer": "late"})
    err = run_error(make_target({"url": agent.url, "timeout": 0.5}), trial(timeout=30))  # the agent replies after 10 s
    assert "within 0.5s" in str(err) and err.kind == "timeout"
    assert len(agent.seen) == 1


def test_the_trial_timeout_applies_without_a_spec_timeout(agent: Agent) -> None:
    agent.default = lambda body: Reply(delay=10, body={"answer": "late"})
    err = run_error(make_target({"url": agent.url}), trial(timeout=0.6))  # the agent replies after 10 s
    assert "within 0.6s" in str(err) and err.kind == "timeout"
    assert len(agent.seen) == 1


def test_one_client_is_shared_and_closed(agent: Agent) -> None:
    target = make_target({"url": agent.url, "max_concurrency": 2})

    async def go() -> list[Any]:
        await target.run(trial())
        first = target._client
        await asyncio.gather(*(target.run(trial()) for _ in range(4)))
        clients = [first, target._client]
        await target.aclose()
        return clients

    first, later = asyncio.run(go())
    assert len(agent.seen) == 5
    assert first is not None and first is later
    assert first.is_closed and target._client is None


def test_a_target_that_sends_both_arms_the_same_request_is_refused() -> None:
    from agentsproof.core.errors import InputError

    with pytest.raises(InputError) as err:
        parse_targets({"a": {"type": "http", "url": "http://127.0.0.1:1/ask"}}, "targets.yaml")
    assert str(err.value).startswith("targets.yaml: a.skill_field: is required (or with_url)")
