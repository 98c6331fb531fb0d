"""The ``anthropic`` provider: Claude through the Messages API, over httpx.

``POST {AGENTSPROOF_PROVIDER_URL or https://api.anthropic.com}/v1/messages`` with the key
in ``x-api-key`` and an ``anthropic-version`` header. The official ``anthropic`` package is
not used: importing it takes about 2 s against httpx's 0.2 s, and a Messages call needs one
POST and one JSON body.

- The system messages become the ``system`` field, one text block carrying
  ``cache_control: {type: ephemeral}`` (prompt caching, on unless ``prompt_cache=False``):
  every trial of an arm sends the same skill text, so trials 2..N read it from the cache at
  a tenth of the input price. Prompts below the model's minimum cacheable length (1,024 or
  2,048 tokens) are simply not cached by the API.
- ``max_tokens`` is required by the API: the request's, else ``AGENTSPROOF_ANTHROPIC_MAX_TOKENS``
  (default 4096). Temperatures above 1 (the API's maximum) are sent as 1.
- Judge calls (``json_schema`` set) force one tool whose ``input_schema`` is the schema;
  its input is the reply text (a JSON object). An endpoint that refuses tools falls back
  to plain prompting. ``tool_use`` blocks of trial calls are recorded as tool calls.
- Usage: ``prompt_tokens`` is input + cache reads + cache writes (comparable with other
  providers); the cache parts are also reported on their own. Cost comes from
  :mod:`agentsproof.llm.prices`.
- Errors: 429, 529 (overloaded), 408/409 and 5xx are retryable, with ``Retry-After``;
  401/403/404/400 are not, with a hint; a 400 for a too-long prompt says so. Reply bodies
  are read within :mod:`agentsproof.llm.replies` limits. The key and URL credentials are
  scrubbed from every message and never appear in :meth:`describe`.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.core.scrub import clip, scrub_text, scrub_url, url_secrets
from agentsproof.llm import prices
from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError, refuse_extra
from agentsproof.llm.openai_wire import RETRYABLE_STATUS as OPENAI_RETRYABLE
from agentsproof.llm.openai_wire import retry_after, unreachable
from agentsproof.llm.provider_entry import BuildOptions, ProviderEntry
from agentsproof.llm.replies import MAX_NAME_CHARS, MAX_TOOL_CALLS, ReplyError, load_json, read_capped, token_count
from agentsproof.model.results import Usage

DEFAULT_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
ENV_MAX_TOKENS = "AGENTSPROOF_ANTHROPIC_MAX_TOKENS"
VERDICT_TOOL = "record_verdict"
RETRYABLE_STATUS = OPENAI_RETRYABLE | {529}  # 529: overloaded
CONTEXT_MARKERS = ("prompt is too long", "context window", "context length", "too many tokens", "exceeds the maximum")
MAX_ERROR_CHARS = 300
MAX_ERROR_BODY_CHARS = 16_384
"""Of an error body, read to mask its secrets before it is cut to MAX_ERROR_CHARS."""


def messages_url(base: str | None) -> str:
    """The Messages endpoint for a base URL: ``…`` → ``…/v1/messages``, ``…/v1`` → ``…/v1/messages``."""
    base = base or DEFAULT_URL
    try:
        parts = urlsplit(base)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise LLMError(f"AGENTSPROOF_PROVIDER_URL is not a valid URL ({scrub_text(str(exc), url_secrets(base))})", kind="config") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LLMError(f"AGENTSPROOF_PROVIDER_URL must be an http(s) URL, not {scrub_url(base, url_secrets(base))!r}", kind="config")
    path = parts.path.rstrip("/")
    if not path.endswith("/messages"):
        path += "/messages" if path.endswith("/v1") else "/v1/messages"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _max_tokens_from_env() -> int:
    from agentsproof.core.envcfg import env_int
    from agentsproof.core.errors import InputError

    try:
        return env_int(ENV_MAX_TOKENS, DEFAULT_MAX_TOKENS, lo=1, hi=1_000_000)
    except InputError as err:
        raise LLMError(err.format(), kind="config") from None


def build_body(request: ChatRequest, *, prompt_cache: bool, max_tokens: int, force_tool: bool) -> dict[str, Any]:
    """The Messages API body of ``request``; consecutive turns of one role are joined (the API wants them alternating)."""
    system: list[str] = []
    turns: list[dict[str, str]] = []
    for m in request.messages:
        role, content = m.get("role"), m.get("content") or ""
        if role in ("system", "developer"):
            system.append(content)
            continue
        role = "assistant" if role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + content
        else:
            turns.append({"role": role, "content": content})
    body: dict[str, Any] = {"model": request.model, "max_tokens": request.max_tokens or max_tokens, "messages": turns}
    text = "\n\n".join(s for s in system if s)
    if text:
        block: dict[str, Any] = {"type": "text", "text": text}
        if prompt_cache:
            block["cache_control"] = {"type": "ephemeral"}
        body["system"] = [block]
    if request.temperature is not None:
        body["temperature"] = min(max(float(request.temperature), 0.0), 1.0)
    if request.json_schema is not None:
        if force_tool:
            schema = request.json_schema if request.json_schema.get("type") == "object" else {"type": "object", **request.json_schema}
            body["tools"] = [{"name": VERDICT_TOOL, "description": "Record your answer: a JSON object of this schema.", "input_schema": schema}]
            body["tool_choice"] = {"type": "tool", "name": VERDICT_TOOL}
        else:
            note = f"Answer with only a JSON object of this schema: {json.dumps(request.json_schema)}"
            body["system"] = [*body.get("system", []), {"type": "text", "text": note}]
    return body


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", type(None): "null", bool: "a boolean"}.get(type(value), "a number")


def parse_message(raw: bytes, *, judge: bool) -> tuple[str, Usage, list[dict[str, Any]], str, int]:
    """(text, usage, tool calls, model, 1-hour cache-write tokens) of a Messages API reply;
    ReplyError naming what is wrong. A judge's forced-tool input becomes the text."""
    data = load_json(raw, what="reply")
    if not isinstance(data, dict):
        raise ReplyError(f"the reply is {_kind(data)}, not a JSON object")
    if data.get("type") == "error":
        err = data.get("error")
        msg = err.get("message") if isinstance(err, dict) else None
        raise ReplyError(f"the reply is an error: {' '.join(clip(str(msg or err), MAX_ERROR_CHARS).split())}")
    content = data.get("content")
    if not isinstance(content, list):
        raise ReplyError(f"'content' is {_kind(content)}, not an array")
    texts: list[str] = []
    verdict: str | None = None
    calls: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        text = block.get("text")
        if block.get("type") == "text" and isinstance(text, str):
            texts.append(text)
        elif block.get("type") == "tool_use":
            found = block.get("name")
            name = found if isinstance(found, str) else ""
            args = block.get("input", {})
            if judge and name == VERDICT_TOOL and verdict is None:
                verdict = json.dumps(args)  # depth is bounded by load_json
            elif len(calls) < MAX_TOOL_CALLS:
                calls.append({"name": name[:MAX_NAME_CHARS], "arguments": args if isinstance(args, str) else json.dumps(args)})
    if verdict is None and not texts and not calls:
        stop = data.get("stop_reason")
        raise ReplyError(f"empty reply (no text or tool_use block{', stop_reason ' + stop[:40] if isinstance(stop, str) else ''})")
    found_usage = data.get("usage")
    u: dict[str, Any] = found_usage if isinstance(found_usage, dict) else {}
    read, write = token_count(u.get("cache_read_input_tokens")), token_count(u.get("cache_creation_input_tokens"))
    prompt = token_count(u.get("input_tokens")) + read + write
    out = token_count(u.get("output_tokens"))
    usage = Usage(prompt_tokens=prompt, completion_tokens=out, total_tokens=prompt + out, cache_read_tokens=read, cache_write_tokens=write)
    detail = u.get("cache_creation")
    write_1h = token_count(detail.get("ephemeral_1h_input_tokens")) if isinstance(detail, dict) else 0
    found_model = data.get("model")
    model = found_model if isinstance(found_model, str) else ""
    return verdict if verdict is not None else "".join(texts), usage, calls, model[:MAX_NAME_CHARS], write_1h


def _error_text(raw: bytes) -> tuple[str, str]:
    """(error type, message) of an error body; the body's start as text when it is not the API's JSON."""
    try:
        data = load_json(raw, what="error body")
    except ReplyError:
        data = None
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and isinstance(err.get("message"), str) and err["message"].strip():
            found = err.get("type")
            etype = found if isinstance(found, str) else ""
            return etype[:60], " ".join(clip(err["message"], MAX_ERROR_CHARS).split())  # masked before the cut
        if isinstance(err, str) and err.strip():
            return "", " ".join(clip(err, MAX_ERROR_CHARS).split())
    return "", " ".join(clip(raw[:MAX_ERROR_BODY_CHARS].decode("utf-8", "replace"), MAX_ERROR_CHARS).split())


class AnthropicClient(LLMClient):
    """Claude through the Messages API."""

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        prompt_cache: bool = True,
        timeout: float = 600.0,
        max_connections: int = 100,
    ):
        self.name = "anthropic"
        if not api_key:
            raise LLMError("no API key: set ANTHROPIC_API_KEY (or AGENTSPROOF_PROVIDER_KEY)", kind="config")
        self._secrets = [api_key] + url_secrets(base_url)
        self._url = messages_url(base_url)
        self.base_url = scrub_url(base_url or DEFAULT_URL, self._secrets)
        self._reached = False
        """A reply came back once: a connection failure after that is retried, before it it ends the run."""
        self.prompt_cache = prompt_cache
        self._max_tokens = _max_tokens_from_env()
        self._prices = prices.load_prices()
        self._force_tool = True  # judge JSON through a forced tool; off if the endpoint refuses tools
        self._headers = {"x-api-key": api_key, "anthropic-version": API_VERSION, "accept": "application/json"}
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._http = httpx.AsyncClient(limits=limits, timeout=timeout, follow_redirects=False)

    def _scrub(self, text: str) -> str:
        return scrub_text(text, self._secrets)

    def _status_error(self, status: int, headers: httpx.Headers, raw: bytes) -> LLMError:
        etype, message = _error_text(raw)
        message = message or "request failed"
        hint = ""
        kind = "http"
        if status == 401:
            hint = " (the API key was refused: check ANTHROPIC_API_KEY or AGENTSPROOF_PROVIDER_KEY)"
        elif status == 403:
            hint = " (the API key may not use this model or endpoint)"
        elif status == 404:
            hint = " (check the model name and AGENTSPROOF_PROVIDER_URL)"
        elif status == 529:
            hint = " (Anthropic's API is overloaded)"
        elif status in (400, 413) and any(m in message.lower() for m in CONTEXT_MARKERS):
            hint, kind = " (the prompt does not fit the model's context window)", "context_length"
        label = f"HTTP {status}" + (f" {etype}" if etype else "")
        return LLMError(
            self._scrub(f"{label}: {message}{hint}"),
            retryable=status in RETRYABLE_STATUS,
            status=status,
            retry_after=retry_after(headers),
            kind=kind,
        )

    def _transport_error(self, exc: Exception) -> LLMError:
        if isinstance(exc, httpx.TimeoutException):
            return LLMError("request timed out", retryable=True, kind="timeout")
        try:
            detail = " ".join(clip(self._scrub(str(exc)), 400).split()) or type(exc).__name__
        except Exception:  # noqa: BLE001 - a hostile error must not break error handling
            detail = type(exc).__name__
        if isinstance(exc, httpx.ConnectError) and not self._reached:  # refused, no such host: no retry fixes it
            source = next((f"set by {env}" for env in ("AGENTSPROOF_PROVIDER_URL", "ANTHROPIC_BASE_URL") if os.environ.get(env)), "the default, no URL set")
            return unreachable(self.base_url or DEFAULT_URL, source, self._scrub(detail))
        if isinstance(exc, (httpx.TransportError, OSError)):
            return LLMError(f"connection error: {self._scrub(detail)}", retryable=True, kind="connection")
        return LLMError(self._scrub(f"{type(exc).__name__}: {detail}")[:400], kind="error")

    async def _post(self, body: dict[str, Any], timeout: float | None) -> tuple[int, httpx.Headers, bytes]:
        kwargs: dict[str, Any] = {"json": body, "headers": self._headers}
        if timeout:
            kwargs["timeout"] = timeout
        async with self._http.stream("POST", self._url, **kwargs) as resp:
            self._reached = True
            return resp.status_code, resp.headers, await read_capped(resp)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One Messages API call; a judge call forces the verdict tool, falling back to plain prompting once an endpoint refuses tools."""
        refuse_extra(request, "anthropic")
        start = time.perf_counter()
        judge = request.json_schema is not None
        while True:
            forced = self._force_tool
            body = build_body(request, prompt_cache=self.prompt_cache, max_tokens=self._max_tokens, force_tool=forced)
            try:
                status, headers, raw = await self._post(body, request.timeout)
            except ReplyError as exc:
                raise LLMError(f"the provider sent a reply that is not a Messages API message: {exc}", retryable=True, kind="malformed") from None
            except Exception as exc:  # noqa: BLE001 - every transport failure becomes an LLMError
                raise self._transport_error(exc) from None
            if status == 200:
                break
            err = self._status_error(status, headers, raw)
            if judge and forced and status == 400 and "tool" in str(err).lower() and err.kind != "context_length":
                self._force_tool = False  # an endpoint without tools: ask for JSON in the prompt instead
                continue
            raise err
        try:
            text, usage, calls, model, write_1h = parse_message(raw, judge=judge)
        except ReplyError as exc:
            reason = str(exc)
            kind = "empty" if reason.startswith("empty reply") else "malformed"
            prefix = "the provider sent an " if kind == "empty" else "the provider sent a reply that is not a Messages API message: "
            raise LLMError(self._scrub(prefix + reason), retryable=True, kind=kind) from None
        price = prices.price_for(model, self._prices) or prices.price_for(request.model, self._prices)
        return ChatResponse(
            text=text,
            usage=usage,
            latency_s=time.perf_counter() - start,
            model=model or request.model,
            cost_usd=prices.cost_usd(price, usage, write_1h),
            tool_calls=calls,
        )

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._http.aclose()

    def describe(self) -> dict[str, Any]:
        """Provider, base URL (credentials never shown) and whether prompt caching is on."""
        return {"provider": self.name, "base_url": self.base_url, "prompt_cache": self.prompt_cache}


def build(options: BuildOptions) -> LLMClient:
    """The client from ``AGENTSPROOF_PROVIDER_KEY`` or ``ANTHROPIC_API_KEY`` (the former wins)
    and ``AGENTSPROOF_PROVIDER_URL`` or ``ANTHROPIC_BASE_URL`` (default: the public API)."""
    key = os.environ.get("AGENTSPROOF_PROVIDER_KEY") or os.environ.get("ANTHROPIC_API_KEY") or None
    if not key:
        raise ProviderUnavailable("provider anthropic: set ANTHROPIC_API_KEY (or AGENTSPROOF_PROVIDER_KEY)")
    url = os.environ.get("AGENTSPROOF_PROVIDER_URL") or os.environ.get("ANTHROPIC_BASE_URL") or None
    return AnthropicClient(api_key=key, base_url=url, prompt_cache=options.prompt_cache)


def _detect() -> bool:
    # ``auto`` asks this last: ANTHROPIC_API_KEY is set on many machines for other tools
    return bool(os.environ.get("ANTHROPIC_API_KEY"))


PROVIDER = ProviderEntry(
    name="anthropic",
    build=build,
    throttled=True,
    secret_envs=("AGENTSPROOF_PROVIDER_KEY", "ANTHROPIC_API_KEY"),
    url_envs=("AGENTSPROOF_PROVIDER_URL", "ANTHROPIC_BASE_URL"),
    detect=_detect,
    configure_hint="Claude: ANTHROPIC_API_KEY (or AGENTSPROOF_PROVIDER_KEY) with --provider anthropic",
)
