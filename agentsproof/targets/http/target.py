"""The http target: any agent behind a JSON endpoint.

Each trial is one ``POST``: the ``extra`` fields, the instruction at ``request_field`` and,
in the with-arm, the skill text at ``skill_field`` (or the request goes to ``with_url``).
The reply is JSON; the answer sits at ``answer_field`` (dotted, list items by number:
``choices.0.text``), tool calls, usage, cost and skill use at their own optional paths.

A reply that is not JSON, has no text at the answer path or comes with a non-2xx status
is an *errored* trial naming what was wrong, never a failed one: a wrong field name must
not look like a 0% pass rate. HTTP 408/429/502/503/504 and dropped connections are
retried (honouring ``Retry-After``) within the trial's timeout; each attempt may use all
of the time left, so a timed-out attempt is not retried.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import random
import re
import time
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
from pydantic import Field, field_validator, model_validator

from agentsproof.core.errors import InputError
from agentsproof.core.scrub import SECRET_PARAM, clip, register, scrub_text, scrub_url, url_secrets
from agentsproof.core.units import seconds
from agentsproof.llm.replies import (
    MAX_TOOL_CALLS,
    ReplyError,
    _kind,
    cost_value,
    load_json,
    read_capped,
    usage_of,
)
from agentsproof.llm.retry import MIN_ATTEMPT_S, RetryPolicy
from agentsproof.model.graders import FieldError, Strict
from agentsproof.model.results import LogEvent, ToolCall
from agentsproof.targets.base import ENV_REF, MAX_TARGET_TIMEOUT, Target, TargetError, TrialInput, TrialRecord, http_url
from agentsproof.targets.http.reply import lookup, openai_usage, overlap, put, tool_call

SOURCE = "targets.yaml"
RETRY_STATUS = frozenset({408, 429, 502, 503, 504})
"""Statuses retried: the agent was busy or a proxy in front of it failed, not the request."""
MAX_ERROR_BODY = 16 * 1024
"""Most bytes read of a non-2xx reply, for the excerpt in the error."""
MAX_EXCERPT_CHARS = 200
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
"""A line break, NUL or other control character: httpx refuses it in a header and its
error would show the whole value."""


class HttpTargetSpec(Strict):
    """Any JSON agent endpoint: POST {request_field: prompt, ...extra} → answer at a dotted path."""

    type: Literal["http"]
    url: str = Field(min_length=1)
    with_url: str | None = Field(None, description="A second endpoint for the with-arm (instead of skill_field).")
    request_field: str = Field("prompt", min_length=1, description="Dotted path of the instruction in the request body.")
    answer_field: str = Field("answer", min_length=1, description="Dotted path of the answer in the reply, e.g. 'choices.0.text'.")
    tools_field: str | None = Field(None, description="Dotted path of the tool calls (names, or objects with 'name').")
    skill_field: str | None = Field(None, description="Dotted path the with-arm's skill text is sent in.")
    skill_used_field: str | None = Field(None, description="Dotted path of a boolean: the agent used the skill.")
    usage_field: str | None = Field(None, description="Dotted path of an OpenAI-style usage object.")
    cost_field: str | None = Field(None, description="Dotted path of the trial's cost in USD (a number); default: usage.cost.")
    token_env: str | None = Field(None, description="Env var holding a bearer token (sent as Authorization: Bearer).")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra headers ('${VAR}' allowed).")
    extra: dict[str, Any] = Field(default_factory=dict, description="Fixed fields merged into every request body.")
    timeout: float | None = Field(None, gt=0, le=MAX_TARGET_TIMEOUT, allow_inf_nan=False)
    max_concurrency: int | None = Field(None, ge=1, le=512, strict=True)

    @field_validator("url", "with_url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        # scheme, host and port; a ${VAR} URL is checked again once expanded (TargetDef.expanded)
        return None if value is None else http_url(value)

    @field_validator("token_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", value):
            raise ValueError(f"{value!r} is not an environment variable name (give the name, not the token)")
        return value

    @model_validator(mode="after")
    def _one_skill_route(self) -> HttpTargetSpec:
        if self.skill_field is not None and self.with_url is not None:
            raise FieldError("with_url", "give one of skill_field and with_url")
        if self.skill_field is None and self.with_url is None:
            raise FieldError("skill_field", "is required (or with_url): without one, both arms send the same request and the eval measures nothing")
        return self


class HttpTarget(Target):
    """An agent behind an HTTP endpoint: the prompt POSTed as JSON, the answer (and tool calls, usage) read from the reply."""

    spec_model = HttpTargetSpec
    """Its targets.yaml entry (``type: http``)."""
    kind = "http"
    uses_workspace = False

    def __init__(self, name: str, spec: HttpTargetSpec, shown: HttpTargetSpec, *, model: str | None = None, source: str = SOURCE):
        self.name = name
        self.source = source
        self.spec = spec
        self.shown = shown
        """The spec as written (``${VAR}`` unexpanded): what describe() and errors show."""
        self.model = model
        self.max_concurrency = spec.max_concurrency
        self.policy = RetryPolicy.from_env()
        self.waits: list[float] = []
        """Every backoff wait taken, in seconds (for tests and diagnostics)."""
        self._rng = random.Random()
        self._client: httpx.AsyncClient | None = None
        self._headers = {"Accept": "application/json", **spec.headers}
        secrets = [*url_secrets(spec.url), *url_secrets(spec.with_url), *_referenced_values(shown)]
        for key, value in spec.headers.items():
            if SECRET_PARAM.search(key):
                secrets += [value, *value.split()[-1:]]  # "Bearer abc": the whole value and the token
        if spec.token_env:
            token = os.environ.get(spec.token_env)
            if token is None:
                raise InputError(self.source, f"{name}.token_env", f"environment variable {spec.token_env} is not set")
            if not token.strip():
                raise InputError(self.source, f"{name}.token_env", f"environment variable {spec.token_env} is empty")
            if _CONTROL.search(token):
                register(token)
                raise InputError(
                    self.source,
                    f"{name}.token_env",
                    f"environment variable {spec.token_env} holds a line break or control character (a token cannot; strip it)",
                )
            if any("@" in urlsplit(u).netloc for u in (spec.url, spec.with_url or "")):
                raise InputError(self.source, f"{name}.token_env", "the url has user-info (HTTP basic auth) too; give one of them")
            self._headers = {k: v for k, v in self._headers.items() if k.lower() != "authorization"}
            self._headers["Authorization"] = f"Bearer {token}"
            secrets.append(token)
        self._secrets = [s for s in secrets if s]
        register(*self._secrets)
        for key, value in spec.headers.items():
            if _CONTROL.search(value) or _CONTROL.search(key):
                raise InputError(
                    self.source,
                    f"{name}.headers.{key}",
                    "holds a line break or control character" + (" once ${VAR} is expanded" if ENV_REF.search(shown.headers.get(key, "")) else ""),
                )
        self._check_paths()

    # -- configuration ---------------------------------------------------------------

    def _check_paths(self) -> None:
        spec = self.spec
        for field in ("request_field", "answer_field", "tools_field", "skill_field", "skill_used_field", "usage_field", "cost_field"):
            path = getattr(spec, field)
            if path is not None and "" in path.split("."):
                raise InputError(self.source, f"{self.name}.{field}", f"{path!r} has an empty segment (write 'a.b.0.c')")
        if spec.skill_field is not None and overlap(spec.skill_field, spec.request_field):
            raise InputError(self.source, f"{self.name}.skill_field", f"{spec.skill_field!r} overlaps request_field {spec.request_field!r}")
        try:
            json.dumps(spec.extra)
        except (TypeError, ValueError) as exc:
            raise InputError(self.source, f"{self.name}.extra", f"is not plain JSON ({exc})") from None
        for field, path in (("request_field", spec.request_field), ("skill_field", spec.skill_field)):
            if path is not None:
                try:
                    put(copy.deepcopy(spec.extra), path, "")
                except ValueError as exc:
                    raise InputError(self.source, f"{self.name}.{field}", f"{path!r} cannot be set in the body: {exc}") from None

    def describe(self) -> dict[str, Any]:
        """The endpoint and the fields it uses (URLs with their secrets masked)."""
        shown = self.shown
        out: dict[str, Any] = {"target": self.name, "target_type": self.kind, "url": scrub_url(shown.url)}
        if shown.with_url:
            out["with_url"] = scrub_url(shown.with_url)
        out["request_field"] = shown.request_field
        out["answer_field"] = shown.answer_field
        for field in ("tools_field", "skill_field", "skill_used_field", "usage_field", "cost_field", "token_env", "timeout"):
            if getattr(shown, field) is not None:
                out[field] = getattr(shown, field)
        if shown.headers:
            out["headers"] = _masked(shown.headers)
        if shown.extra:
            out["extra"] = _masked(shown.extra)
        return out

    # -- one trial -------------------------------------------------------------------

    async def run(self, trial: TrialInput) -> TrialRecord:
        """One trial: the prompt POSTed to the endpoint, the reply read; TargetError (secrets masked) for an errored one."""
        spec = self.spec
        body = copy.deepcopy(spec.extra)
        put(body, spec.request_field, trial.prompt)
        url, shown_url = spec.url, self.shown.url
        if trial.with_skill:
            if spec.skill_field is not None:
                put(body, spec.skill_field, trial.skill.text if trial.skill is not None else trial.system)
            elif spec.with_url is not None:
                url, shown_url = spec.with_url, self.shown.with_url or spec.with_url
        timeout = spec.timeout or trial.timeout
        log: list[LogEvent] = []
        start = time.monotonic()
        raw, latency = await self._post_with_retries(url, scrub_url(shown_url, self._secrets) or "", body, timeout, start, log)
        return self._record(raw, latency, log)

    async def _post_with_retries(
        self, url: str, shown_url: str, body: dict[str, Any], timeout: float, start: float, log: list[LogEvent]
    ) -> tuple[bytes, float]:
        deadline = start + timeout
        attempt = 0
        while True:
            attempt += 1
            left = deadline - time.monotonic()
            try:
                if left < MIN_ATTEMPT_S:
                    raise TargetError(f"the agent did not answer within {seconds(timeout)}", kind="timeout")
                t0 = time.perf_counter()
                try:
                    raw = await asyncio.wait_for(self._post(url, shown_url, body, left), left)
                except TimeoutError:
                    raise TargetError(f"the agent did not answer within {seconds(timeout)}", kind="timeout") from None
                return raw, time.perf_counter() - t0
            except TargetError as err:
                wait = self.policy.wait_for(attempt, err.retry_after, self._rng) if err.retryable else 0.0
                late = time.monotonic() + wait + MIN_ATTEMPT_S > deadline
                if not err.retryable or attempt > self.policy.max_retries or late:
                    raise _final(err, attempt, timeout if err.retryable and late else None) from None
                self.waits.append(wait)
                log.append(LogEvent(t=time.monotonic() - start, role="info", text=f"{err}; retry {attempt} in {wait:.2g}s"))
                if wait > 0:
                    await asyncio.sleep(wait)

    def _client_for_run(self) -> httpx.AsyncClient:
        if self._client is None:
            n = self.max_concurrency or 100
            self._client = httpx.AsyncClient(limits=httpx.Limits(max_connections=n, max_keepalive_connections=n))
        return self._client

    async def _post(self, url: str, shown_url: str, body: dict[str, Any], left: float) -> bytes:
        """One attempt: the reply body of a 2xx, or a TargetError (retryable when worth it)."""
        client = self._client_for_run()
        try:
            request = client.build_request("POST", url, json=body, headers=self._headers, timeout=left)
            response = await client.send(request, stream=True)
            if 200 <= response.status_code < 300:
                return await read_capped(response)
            raise self._status_error(response, await _excerpt(response))
        except TargetError:
            raise
        except ReplyError as exc:
            raise TargetError(f"the agent's reply is unusable: {self._scrub(str(exc))}", kind="malformed") from None
        except httpx.TimeoutException:
            raise TimeoutError from None
        except httpx.ConnectError as exc:
            raise TargetError(f"could not connect to {shown_url}: {self._detail(exc)}", retryable=True, kind="connection") from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise TargetError(f"the connection to {shown_url} broke: {self._detail(exc)}", retryable=True, kind="connection") from None
        except Exception as exc:  # noqa: BLE001 - e.g. a header httpx refuses: an errored trial, scrubbed
            raise TargetError(f"request to {shown_url} failed: {type(exc).__name__}: {self._detail(exc)}") from None

    def _status_error(self, response: httpx.Response, excerpt: str) -> TargetError:
        status = response.status_code
        hint = ""
        if status in (401, 403):
            hint = f" (check token_env {self.spec.token_env})" if self.spec.token_env else " (check token_env or headers)"
        elif status == 404:
            hint = " (check url)"
        text = f"HTTP {status} from the agent{hint}" + (f": {excerpt}" if excerpt else "")
        return TargetError(
            self._scrub(text),
            retryable=status in RETRY_STATUS,
            status=status,
            retry_after=_retry_after(response.headers) if status in RETRY_STATUS else None,
            kind="http",
        )

    def _record(self, raw: bytes, latency: float, log: list[LogEvent]) -> TrialRecord:
        spec = self.spec
        try:
            data = load_json(raw, what="the agent's reply")
        except ReplyError as exc:
            start = clip(" ".join(self._scrub(raw[:4096].decode("utf-8", "replace")).split()), 80)
            raise TargetError(self._scrub(f"{exc}; it starts with {start!r}"), kind="malformed") from None
        answer, why = lookup(data, spec.answer_field)
        if why is not None:
            raise TargetError(self._scrub(f"the reply has no answer at answer_field {spec.answer_field!r}: {why}"), kind="malformed")
        if isinstance(answer, (int, float)) and not isinstance(answer, bool):
            answer = str(answer)
        if not isinstance(answer, str):
            raise TargetError(f"the answer at answer_field {spec.answer_field!r} is {_kind(answer)}, not text", kind="malformed")
        trajectory = self._tools(data, log)
        usage, cost = usage_of(openai_usage(self._optional(data, spec.usage_field)))
        if spec.cost_field is not None:
            cost = cost_value(self._optional(data, spec.cost_field))
        used = self._optional(data, spec.skill_used_field)
        return TrialRecord(
            answer=answer,
            trajectory=trajectory,
            usage=usage,
            cost_usd=cost,
            latency_s=latency,
            skill_used=used if isinstance(used, bool) else None,
            log=log,
        )

    def _tools(self, data: Any, log: list[LogEvent]) -> list[ToolCall]:
        raw = self._optional(data, self.spec.tools_field)
        if raw is None:
            return []
        if not isinstance(raw, list):
            log.append(LogEvent(t=0.0, role="info", text=f"tools_field {self.spec.tools_field!r} is {_kind(raw)}, not an array; ignored"))
            return []
        return [call for call in map(tool_call, raw[:MAX_TOOL_CALLS]) if call is not None]

    @staticmethod
    def _optional(data: Any, path: str | None) -> Any:
        if path is None:
            return None
        value, why = lookup(data, path)
        return None if why is not None else value

    def _scrub(self, text: str) -> str:
        return scrub_text(text, self._secrets)

    def _detail(self, exc: BaseException) -> str:
        try:
            text = str(exc)
        except Exception:  # noqa: BLE001 - a hostile error must not break error handling
            text = ""
        return clip(" ".join(self._scrub(text).split()), 300) or type(exc).__name__

    async def aclose(self) -> None:
        """Close the HTTP client, when one was opened."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None


# -- helpers -------------------------------------------------------------------------


def _final(err: TargetError, attempt: int, budget: float | None) -> TargetError:
    """The error that ends the trial: ``err``, with the attempts and the budget when retried."""
    if attempt <= 1 and budget is None:
        return err
    where = f"after {attempt} attempt{'s' if attempt > 1 else ''}"
    if budget is not None:
        where += f"; no retry fits in the {seconds(budget)} timeout"
    return TargetError(f"{err} ({where})", status=err.status, kind=err.kind)


async def _excerpt(response: httpx.Response) -> str:
    """The start of an error reply's body, one line; a JSON error's message when it has one."""
    try:
        raw = await read_capped(response, MAX_ERROR_BODY)
    except (ReplyError, httpx.HTTPError):
        return ""
    try:
        data = load_json(raw, what="error body")
    except ReplyError:
        data = None
    if isinstance(data, dict):
        err = data.get("error", data)
        for msg in (err.get("message") if isinstance(err, dict) else err, data.get("detail"), data.get("message")):
            if isinstance(msg, str) and msg.strip():
                return clip(" ".join(scrub_text(msg).split()), MAX_EXCERPT_CHARS)
    return clip(" ".join(scrub_text(raw.decode("utf-8", "replace")).split()), MAX_EXCERPT_CHARS)


def _retry_after(headers: httpx.Headers) -> float | None:
    # the same Retry-After reading as the OpenAI-compatible providers (no openai import)
    from agentsproof.llm.openai_wire import retry_after as parse

    return parse(headers)


def _referenced_values(shown: HttpTargetSpec) -> list[str]:
    """The values of every ``${VAR}`` the spec refers to: secrets for scrubbing."""
    names = set(ENV_REF.findall(json.dumps(shown.model_dump(), default=str)))
    return [os.environ[n] for n in sorted(names) if os.environ.get(n)]


def _masked(value: Any, key: str = "") -> Any:
    """``value`` as written, with literal strings under secret-looking keys replaced by ``***``
    (a ``${VAR}`` reference is shown: it names the secret, it is not one)."""
    if isinstance(value, dict):
        return {k: _masked(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, key) for v in value]
    if isinstance(value, str) and key and SECRET_PARAM.search(key) and not ENV_REF.search(value):
        return "***"
    return value
