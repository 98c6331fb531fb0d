"""The lean HTTP path to OpenAI-compatible endpoints: chat completions on plain httpx.

No ``openai`` import: one ``httpx.AsyncClient`` on the pooled transport of
:mod:`agentsproof.llm.http_pool`, a JSON body built once per call,
the reply read within :data:`~agentsproof.llm.replies.MAX_REPLY_BYTES` and parsed by
:mod:`agentsproof.llm.replies`. Failures become the same :class:`LLMError` (kind,
retryable, status, retry_after, message) as on the SDK path
(:mod:`agentsproof.llm.openai_compat`), which stays for Azure's credential flows and as
the fallback: ``AGENTSPROOF_OPENAI_CLIENT=sdk``. :func:`openai_client` picks the path.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

if "httpx" not in sys.modules:
    # httpx's package imports its own command-line tool (httpx._main: rich, pygments, click)
    # whenever those are installed, a third of its import time; no run uses it. Marking that
    # one submodule absent makes httpx skip it (it guards the import with ImportError).
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    import httpx

    if sys.modules.get("httpx._main", True) is None:
        del sys.modules["httpx._main"]  # importable again, should anything ask for it
import httpx  # noqa: E402

from agentsproof.core.scrub import clip  # noqa: E402
from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError, scrub, scrub_url, url_secrets  # noqa: E402
from agentsproof.llm.http_pool import lean_transport  # noqa: E402
from agentsproof.llm.openai_wire import (  # noqa: E402
    DEFAULT_OLLAMA_URL,
    RETRYABLE_STATUS,
    parse_completion,
    retry_after,
    safe_str,
    split_url,
    status_hint,
)
from agentsproof.llm.replies import MAX_REPLY_BYTES, ReplyError, load_json, read_capped  # noqa: E402

CLIENT_ENV = "AGENTSPROOF_OPENAI_CLIENT"
CLIENT_CHOICES = ("http", "sdk")


def client_path(provider: str) -> str:
    """``http`` or ``sdk``: ``AGENTSPROOF_OPENAI_CLIENT`` when set, else http for openai and
    ollama, sdk for azure (its credential flows live in the SDK). Azure always takes the SDK."""
    raw = os.environ.get(CLIENT_ENV, "").strip().lower()
    if raw and raw not in CLIENT_CHOICES:
        raise LLMError(f"{CLIENT_ENV}: {raw[:40]!r} is not one of {', '.join(CLIENT_CHOICES)}")
    if provider == "azure":
        return "sdk"
    return raw or "http"


def openai_client(*, provider: str = "openai", **kwargs: Any) -> LLMClient:
    """The client for an OpenAI-compatible endpoint on the path :func:`client_path` picks."""
    if client_path(provider) == "sdk":
        from agentsproof.llm.openai_compat import OpenAICompatibleClient

        return OpenAICompatibleClient(provider=provider, **kwargs)
    return OpenAIHttpClient(provider=provider, **kwargs)


class OpenAIHttpClient(LLMClient):
    """Chat completions on any OpenAI-compatible endpoint, over httpx alone."""

    def __init__(
        self,
        *,
        provider: str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        api_version: str | None = None,
        timeout: float = 600.0,
        max_connections: int = 100,
    ):
        if provider == "azure":
            raise LLMError("azure runs on the openai SDK path (AGENTSPROOF_OPENAI_CLIENT=sdk)")
        self.name = provider
        self._secrets = [s for s in [api_key or ""] + url_secrets(base_url) if s]
        self.base_url = scrub_url(base_url, self._secrets)
        """The URL as reports show it: credentials replaced by ``***``."""
        endpoint, query, extra_headers = split_url(base_url)
        if provider == "ollama":
            endpoint = endpoint or DEFAULT_OLLAMA_URL
            api_key = api_key or "ollama"
        if not endpoint:
            endpoint = os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        self._url = endpoint.rstrip("/") + "/chat/completions"
        self._params = query or None
        self._headers = {
            "Authorization": f"Bearer {api_key or 'missing-key'}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            **extra_headers,  # user-info in the URL: Basic auth in place of the bearer key
        }
        self._timeout = timeout
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        # our pooled HTTP/1.1 transport (O(1) per request); httpx's own when a proxy is configured
        self._pool = lean_transport(max_connections)
        # no proxy: requests go straight to the pool (no cookie jar, auth or redirect layers);
        # a proxy in the environment: httpx's own client and transport
        self._client = None if self._pool else httpx.AsyncClient(limits=limits, timeout=timeout)
        self._target = httpx.URL(self._url, params=self._params)
        self._json_mode = "json_schema"  # degrades to json_object, then to plain prompting

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets)

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": request.model, "messages": request.messages}
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        return body

    def _response_format(self, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is None or self._json_mode == "none":
            return None
        if self._json_mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema}}
        return {"type": "json_object"}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        body = self._body(request)
        timeout = request.timeout or self._timeout
        start = time.perf_counter()
        while True:
            fmt = self._response_format(request.json_schema)
            if fmt is not None:
                body["response_format"] = fmt
            else:
                body.pop("response_format", None)
            status, raw, headers = await self._post(body, timeout)
            if status < 400:
                break
            message, reason = _error_message(raw)
            if status == 400 and fmt is not None and ("response_format" in reason or "json" in reason):
                # Endpoints without structured output reject response_format: degrade once per level.
                self._json_mode = "json_object" if self._json_mode == "json_schema" else "none"
                continue
            raise LLMError(
                self._scrub(f"HTTP {status}: {message}{status_hint(status)}"),
                retryable=status in RETRYABLE_STATUS,
                status=status,
                retry_after=retry_after(headers),
                kind="http",
            )
        latency = time.perf_counter() - start
        text, usage, cost, tool_calls, model = parse_completion(raw)
        return ChatResponse(
            text=text, usage=usage, latency_s=latency, model=model or request.model, cost_usd=cost, tool_calls=tool_calls
        )

    async def _post(self, body: dict[str, Any], timeout: float) -> tuple[int, bytes, httpx.Headers]:
        """(status, body read within its limit, headers); LLMError for a failed exchange."""
        content = json.dumps(body).encode()
        try:
            if self._pool is not None:
                req = httpx.Request("POST", self._target, headers=self._headers, content=content, extensions={"timeout": _timeouts(timeout)})
                resp = await self._pool.handle_async_request(req)
            else:
                req = self._client.build_request("POST", self._target, content=content, headers=self._headers, timeout=timeout)  # type: ignore[union-attr]
                resp = await self._client.send(req, stream=True)  # type: ignore[union-attr]
            try:
                raw = await read_capped(resp, MAX_REPLY_BYTES)
            except ReplyError as exc:
                if resp.status_code < 400:
                    raise LLMError(
                        f"the provider sent a reply that is not a chat completion: {exc}", retryable=True, kind="malformed"
                    ) from None
                raw = b""  # an oversized error body: the status alone speaks
            return resp.status_code, raw, resp.headers
        except LLMError:
            raise
        except httpx.TimeoutException:
            raise LLMError("request timed out", retryable=True, kind="timeout") from None
        except (httpx.TransportError, OSError) as exc:
            raise LLMError(
                f"connection error: {self._scrub(safe_str(exc) or type(exc).__name__)}", retryable=True, kind="connection"
            ) from None
        except Exception as exc:  # noqa: BLE001 - every client error becomes an LLMError
            raise LLMError(self._scrub(f"{type(exc).__name__}: {' '.join(safe_str(exc).split())}")[:400], kind="error") from None

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
        else:
            await self._client.aclose()  # type: ignore[union-attr]

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "base_url": self.base_url}


def _timeouts(seconds: float) -> dict[str, float]:
    return {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}


def _error_message(raw: bytes) -> tuple[str, str]:
    """(message shown, lower-case text searched for a rejected response_format) of an error
    body, as the SDK path shows it: ``error.message`` (or ``message``) of a JSON body, else
    the body's first 300 characters."""
    text = raw.decode("utf-8", "replace")
    try:
        data = load_json(raw, what="error reply") if raw else None
    except ReplyError:
        data = None
    message = ""
    body = data.get("error", data) if isinstance(data, dict) else data  # what the SDK keeps as the error's body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str) and err["message"]:
            message = clip(err["message"], 300)  # masked before the cut
        elif isinstance(err, str):
            message = clip(err, 300)
    message = " ".join((message or clip(text, 300)).split()) or "request failed"
    return message, (message + " " + text[:2000]).lower()
