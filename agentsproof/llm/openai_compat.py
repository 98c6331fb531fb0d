"""BYOK providers on the official ``openai`` async clients: azure always, openai and ollama
with ``AGENTSPROOF_OPENAI_CLIENT=sdk`` (the default path is :mod:`agentsproof.llm.openai_http`).

The openai client's own retries are off (``max_retries=0``): :mod:`agentsproof.llm.retry`
retries every provider the same way.
"""

from __future__ import annotations

import os
import time
from typing import Any

import httpx
import openai

from agentsproof.core.scrub import clip
from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError, scrub, scrub_url, url_secrets
from agentsproof.llm.openai_wire import (  # noqa: F401 - split_url and parse_completion re-exported
    DEFAULT_OLLAMA_URL,
    RETRYABLE_STATUS,
    parse_completion,
    split_url,
    status_hint,
)
from agentsproof.llm.openai_wire import retry_after as _retry_after
from agentsproof.llm.openai_wire import safe_str as _safe_str
from agentsproof.llm.replies import MAX_REPLY_BYTES, ReplyError, read_capped

RAW_RESPONSE_HEADER = "X-Stainless-Raw-Response"
"""The openai SDK's header for "return the response unread" (see ``_should_stream_response_body``)."""
DEFAULT_AZURE_API_VERSION = "2024-10-21"


def _http_client(max_connections: int) -> Any:
    """The transport under the openai client: aiohttp when installed (the ``openai[aiohttp]``
    extra; a fraction of the CPU per call of the default pool at high --parallel), else the
    SDK's default HTTP client."""
    # the Limits of the HTTP library the installed openai runs on (httpx before openai 3, httpx2 since)
    limits = type(openai.DEFAULT_CONNECTION_LIMITS)(max_connections=max_connections, max_keepalive_connections=max_connections)
    aio = getattr(openai, "DefaultAioHttpClient", None)
    if aio is not None and os.environ.get("AGENTSPROOF_HTTP_TRANSPORT", "").lower() != "httpx":
        try:
            return aio(limits=limits)
        except RuntimeError:  # aiohttp is not installed
            pass
    return openai.DefaultAsyncHttpxClient(limits=limits)


class OpenAICompatibleClient(LLMClient):
    """Chat completions on any OpenAI-compatible endpoint."""

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
        self.name = provider
        self._secrets = [s for s in [api_key or ""] + url_secrets(base_url) if s]
        self.base_url = scrub_url(base_url, self._secrets)
        """The URL as reports show it: credentials replaced by ``***``."""
        endpoint, query, headers = split_url(base_url)
        extra: dict[str, Any] = {"default_query": query or None, "default_headers": headers or None}
        http_client = _http_client(max_connections)
        if provider == "azure":
            if not endpoint:
                raise LLMError("azure needs AGENTSPROOF_PROVIDER_URL (the resource endpoint)")
            self._client: openai.AsyncOpenAI = openai.AsyncAzureOpenAI(
                azure_endpoint=endpoint,
                api_key=api_key or "missing-key",
                api_version=api_version or os.environ.get("AGENTSPROOF_AZURE_API_VERSION", DEFAULT_AZURE_API_VERSION),
                max_retries=0,
                timeout=timeout,
                http_client=http_client,
                **extra,
            )
        else:
            if provider == "ollama":
                endpoint = endpoint or DEFAULT_OLLAMA_URL
                api_key = api_key or "ollama"
            self._client = openai.AsyncOpenAI(
                base_url=endpoint,
                api_key=api_key or "missing-key",
                max_retries=0,
                timeout=timeout,
                http_client=http_client,
                **extra,
            )
        self._json_mode = "json_schema"  # degrades to json_object, then to plain prompting

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets)

    def _error(self, exc: Exception) -> LLMError:
        if isinstance(exc, openai.APITimeoutError):
            root = _root_cause(exc)
            # the aiohttp transport reports a dropped connection as a connect timeout
            if root is exc or isinstance(root, TimeoutError) or "timeout" in type(root).__name__.lower():
                return LLMError("request timed out", retryable=True, kind="timeout")
            return LLMError(
                f"connection error: {self._scrub(str(root) or type(root).__name__)}", retryable=True, kind="connection"
            )
        if isinstance(exc, httpx.TimeoutException):
            return LLMError("request timed out", retryable=True, kind="timeout")
        if isinstance(exc, (httpx.TransportError, OSError)):  # the body broke off while being read
            return LLMError(f"connection error: {self._scrub(_safe_str(exc) or type(exc).__name__)}", retryable=True, kind="connection")
        if isinstance(exc, openai.APIConnectionError):
            return LLMError(f"connection error: {self._scrub(str(exc.__cause__ or exc))}", retryable=True, kind="connection")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            message = _status_message(exc)
            return LLMError(
                self._scrub(f"HTTP {status}: {message}{status_hint(status)}"),
                retryable=status in RETRYABLE_STATUS,
                status=status,
                retry_after=_retry_after(exc.response.headers if exc.response is not None else None),
                kind="http",
            )
        if isinstance(exc, (openai.APIResponseValidationError, ValueError)):  # ValueError: body is not JSON
            detail = self._scrub(" ".join(str(exc).split()))[:200]
            return LLMError(
                f"the provider sent a reply that is not a chat completion ({detail or type(exc).__name__})",
                retryable=True,
                kind="malformed",
            )
        return LLMError(self._scrub(f"{type(exc).__name__}: {' '.join(str(exc).split())}")[:400], kind="error")

    def _response_format(self, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is None or self._json_mode == "none":
            return None
        if self._json_mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema}}
        return {"type": "json_object"}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        kwargs: dict[str, Any] = {"model": request.model, "messages": request.messages}
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.timeout:
            kwargs["timeout"] = request.timeout
        start = time.perf_counter()
        while True:
            fmt = self._response_format(request.json_schema)
            if fmt is not None:
                kwargs["response_format"] = fmt
            else:
                kwargs.pop("response_format", None)
            try:
                # ``post`` is the SDK's own request path minus ``create``'s per-call re-typing of
                # the (already plain) parameters; the body is streamed and read here, at most
                # MAX_REPLY_BYTES of it, which also skips building a typed ChatCompletion object
                # (about half the SDK's CPU).
                resp = await self._client.post(
                    "/chat/completions", body=body_of(kwargs), cast_to=httpx.Response, options=options_of(kwargs)
                )
                raw = await read_capped(getattr(resp, "http_response", resp), MAX_REPLY_BYTES)
                break
            except openai.BadRequestError as exc:
                # Endpoints without structured output reject response_format: degrade once per level.
                reason = _safe_str(exc).lower()
                if fmt is not None and ("response_format" in reason or "json" in reason):
                    self._json_mode = "json_object" if self._json_mode == "json_schema" else "none"
                    continue
                raise self._error(exc) from None
            except ReplyError as exc:
                raise LLMError(
                    f"the provider sent a reply that is not a chat completion: {exc}", retryable=True, kind="malformed"
                ) from None
            except Exception as exc:  # noqa: BLE001 - every client error becomes an LLMError
                raise self._error(exc) from None
        latency = time.perf_counter() - start
        text, usage, cost, tool_calls, model = parse_completion(raw)
        return ChatResponse(
            text=text, usage=usage, latency_s=latency, model=model or request.model, cost_usd=cost, tool_calls=tool_calls
        )

    async def aclose(self) -> None:
        await self._client.close()

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "base_url": self.base_url}


def _root_cause(exc: BaseException) -> BaseException:
    seen = {id(exc)}
    while exc.__cause__ is not None and id(exc.__cause__) not in seen:
        exc = exc.__cause__
        seen.add(id(exc))
    return exc


def body_of(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if k != "timeout"}


def options_of(kwargs: dict[str, Any]) -> openai.RequestOptions:
    """Per-request options: the timeout, and the SDK's raw-response header asking for an
    unread (streamed) body, so that :func:`read_capped` can stop at the size limit."""
    options: openai.RequestOptions = {"headers": {RAW_RESPONSE_HEADER: "stream"}}
    if "timeout" in kwargs:
        options["timeout"] = kwargs["timeout"]
    return options


def _status_message(exc: openai.APIStatusError) -> str:
    try:
        body = exc.body
        if isinstance(body, dict):
            err = body.get("error", body)
            if isinstance(err, dict) and isinstance(err.get("message"), str) and err["message"]:
                return " ".join(clip(err["message"], 300).split())  # masked before the cut
            if isinstance(err, str):
                return " ".join(clip(err, 300).split())
        text = clip(exc.response.text, 300)
    except Exception:  # noqa: BLE001 - any odd error body falls back to the status alone
        text = ""
    return " ".join(clip(text or exc.message or "", 300).split()) or "request failed"
