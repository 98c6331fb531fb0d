"""BYOK providers on the official ``openai`` async clients: openai, azure, ollama.

The openai client's own retries are off (``max_retries=0``): :mod:`agentsproof.llm.retry`
retries every provider the same way.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import httpx
import openai

from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError, scrub
from agentsproof.schemas.artifacts import Usage

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
DEFAULT_AZURE_API_VERSION = "2024-10-21"
DEFAULT_OLLAMA_URL = "http://localhost:11434/v1"


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    for name in ("retry-after-ms", "retry-after"):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw)
        except ValueError:
            # HTTP-date form
            from email.utils import parsedate_to_datetime

            try:
                when = parsedate_to_datetime(raw)
            except (TypeError, ValueError):
                continue
            return max(0.0, when.timestamp() - time.time())
        return value / 1000.0 if name == "retry-after-ms" else value
    return None


def _http_client(max_connections: int) -> Any:
    """The transport under the openai client: aiohttp when installed (the ``openai[aiohttp]``
    extra; a fraction of the CPU per call of the default pool at high --parallel), else the
    SDK's default HTTP client."""
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
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
        self.base_url = base_url
        self._secret = api_key or ""
        http_client = _http_client(max_connections)
        if provider == "azure":
            if not base_url:
                raise LLMError("azure needs AGENTSPROOF_PROVIDER_URL (the resource endpoint)")
            self._client = openai.AsyncAzureOpenAI(
                azure_endpoint=base_url,
                api_key=api_key or "missing-key",
                api_version=api_version or os.environ.get("AGENTSPROOF_AZURE_API_VERSION", DEFAULT_AZURE_API_VERSION),
                max_retries=0,
                timeout=timeout,
                http_client=http_client,
            )
        else:
            if provider == "ollama":
                base_url = base_url or DEFAULT_OLLAMA_URL
                api_key = api_key or "ollama"
            self._client = openai.AsyncOpenAI(
                base_url=base_url,
                api_key=api_key or "missing-key",
                max_retries=0,
                timeout=timeout,
                http_client=http_client,
            )
        self._json_mode = "json_schema"  # degrades to json_object, then to plain prompting

    def _scrub(self, text: str) -> str:
        return scrub(text, (self._secret,))

    def _error(self, exc: Exception) -> LLMError:
        if isinstance(exc, openai.APITimeoutError):
            root = _root_cause(exc)
            # the aiohttp transport reports a dropped connection as a connect timeout
            if root is exc or isinstance(root, TimeoutError) or "timeout" in type(root).__name__.lower():
                return LLMError("request timed out", retryable=True, kind="timeout")
            return LLMError(
                f"connection error: {self._scrub(str(root) or type(root).__name__)}", retryable=True, kind="connection"
            )
        if isinstance(exc, openai.APIConnectionError):
            return LLMError(f"connection error: {self._scrub(str(exc.__cause__ or exc))}", retryable=True, kind="connection")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            message = _status_message(exc)
            hint = ""
            if status == 401:
                hint = " (check AGENTSPROOF_PROVIDER_KEY)"
            elif status == 404:
                hint = " (check the model name and AGENTSPROOF_PROVIDER_URL)"
            return LLMError(
                self._scrub(f"HTTP {status}: {message}{hint}"),
                retryable=status in RETRYABLE_STATUS,
                status=status,
                retry_after=_retry_after(exc.response.headers if exc.response is not None else None),
                kind="http",
            )
        if isinstance(exc, (openai.APIResponseValidationError, ValueError)):  # ValueError: body is not JSON
            return LLMError("the provider sent a reply that is not a chat completion", retryable=True, kind="malformed")
        return LLMError(self._scrub(f"{type(exc).__name__}: {exc}"), kind="error")

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
                # the (already plain) parameters; the body comes back as bytes and is read here,
                # which skips building a typed ChatCompletion object (about half the SDK's CPU).
                raw = await self._client.post(
                    "/chat/completions", body=body_of(kwargs), cast_to=bytes, options=options_of(kwargs)
                )
                break
            except openai.BadRequestError as exc:
                # Endpoints without structured output reject response_format: degrade once per level.
                reason = str(exc).lower()
                if fmt is not None and ("response_format" in reason or "json" in reason):
                    self._json_mode = "json_object" if self._json_mode == "json_schema" else "none"
                    continue
                raise self._error(exc) from None
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
        return {"provider": self.name, "base_url": _without_userinfo(self.base_url)}


def _without_userinfo(url: str | None) -> str | None:
    """A base URL fit for reports: any user:password@ part removed."""
    if not url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.username or parts.password:
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return url


def _root_cause(exc: BaseException) -> BaseException:
    seen = {id(exc)}
    while exc.__cause__ is not None and id(exc.__cause__) not in seen:
        exc = exc.__cause__
        seen.add(id(exc))
    return exc


def body_of(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if k != "timeout"}


def options_of(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {"timeout": kwargs["timeout"]} if "timeout" in kwargs else {}


def _status_message(exc: "openai.APIStatusError") -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        if isinstance(err, str):
            return err[:300]
    try:
        text = exc.response.text
    except Exception:  # noqa: BLE001
        text = ""
    return (text or exc.message or "").strip()[:300] or "request failed"


def parse_completion(raw: bytes) -> tuple[str, Usage, float | None, list[dict[str, Any]], str]:
    """(text, usage, cost, tool calls, model) from a chat-completion body; LLMError if it is not one."""
    malformed = LLMError("the provider sent a reply that is not a chat completion", retryable=True, kind="malformed")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise malformed from None
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
        raise malformed
    if not data["choices"]:
        raise LLMError("the provider returned no choices", retryable=True, kind="malformed")
    choice = data["choices"][0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise malformed
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    text = content if isinstance(content, str) else ""
    tool_calls = []
    for tc in message.get("tool_calls") or []:
        fn = tc.get("function") if isinstance(tc, dict) else None
        if isinstance(fn, dict):
            tool_calls.append({"name": fn.get("name", ""), "arguments": fn.get("arguments", "")})
    usage = Usage()
    cost = None
    u = data.get("usage")
    if isinstance(u, dict):
        pt = int(u.get("prompt_tokens") or 0)
        ct = int(u.get("completion_tokens") or 0)
        usage = Usage(prompt_tokens=pt, completion_tokens=ct, total_tokens=int(u.get("total_tokens") or pt + ct))
        if isinstance(u.get("cost"), (int, float)) and not isinstance(u.get("cost"), bool):
            cost = float(u["cost"])
    return text, usage, cost, tool_calls, str(data.get("model") or "")
