"""The one client for OpenAI-compatible endpoints (``openai``, ``azure``, ``ollama``):
chat completions on httpx and the pooled transport of :mod:`agentsproof.llm.http_pool`.

No ``openai`` import: a JSON body built once per call, the reply read within
:data:`~agentsproof.llm.replies.MAX_REPLY_BYTES` and parsed by
:mod:`agentsproof.llm.replies`, failures as :class:`LLMError` (kind, retryable, status,
retry_after, message) with the wire details in :mod:`agentsproof.llm.openai_wire`. Azure is
the same request on its own route: ``{endpoint}/openai/deployments/{model}/chat/completions``
with ``api-version`` in the query and the key in an ``api-key`` header, as the official SDK
sends it. Why not the SDK or httpx's own pool: docs/benchmarks.md (``bench/throughput.py``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any
from urllib.parse import quote

if "httpx" not in sys.modules:
    # httpx's package imports its own command-line tool (httpx._main: rich, pygments, click)
    # whenever those are installed, a third of its import time; no run uses it. Marking that
    # one submodule absent makes httpx skip it (it guards the import with ImportError).
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    import httpx

    if sys.modules.get("httpx._main", True) is None:
        del sys.modules["httpx._main"]  # importable again, should anything ask for it
import httpx  # noqa: E402

from agentsproof.core.scrub import (  # noqa: E402
    clip,  # noqa: E402
    scrub_text,
    scrub_url,
    url_secrets,
)
from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError  # noqa: E402
from agentsproof.llm.http_pool import lean_transport  # noqa: E402
from agentsproof.llm.openai_wire import (  # noqa: E402
    DEFAULT_OLLAMA_URL,
    RETRYABLE_STATUS,
    parse_completion,
    retry_after,
    safe_str,
    split_url,
    status_hint,
    unreachable,
    url_source,
)
from agentsproof.llm.replies import MAX_REPLY_BYTES, ReplyError, load_json, read_capped  # noqa: E402

DEFAULT_AZURE_API_VERSION = "2024-10-21"
AZURE_API_VERSION_ENV = "AGENTSPROOF_AZURE_API_VERSION"
_SEGMENT_SAFE = "!$&'()*+,;=:@"
"""What a URL path segment may hold unescaped (RFC 3986 ``pchar`` beside the unreserved set)."""


def openai_client(*, provider: str = "openai", **kwargs: Any) -> LLMClient:
    """The client for an OpenAI-compatible endpoint (``provider``: openai, azure or ollama)."""
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
        self.name = provider
        self._secrets = [s for s in [api_key or ""] + url_secrets(base_url) if s]
        self.base_url = scrub_url(base_url, self._secrets)
        """The URL as reports show it: credentials replaced by ``***``."""
        endpoint, query, extra_headers = split_url(base_url)
        auth: dict[str, str]
        self._azure_base: str | None = None
        if provider == "azure":
            if not endpoint:
                raise LLMError("azure needs AGENTSPROOF_PROVIDER_URL (the resource endpoint)")
            # the SDK's route: the deployment (the model name) in the path unless the URL names one
            base = endpoint.rstrip("/") + "/openai"
            if "/deployments" in httpx.URL(base).path:
                url = base + "/chat/completions"
            else:
                url, self._azure_base = "", base  # the URL is built per deployment: _target_for
            query = {**query, "api-version": api_version or os.environ.get(AZURE_API_VERSION_ENV, DEFAULT_AZURE_API_VERSION)}
            auth = {"api-key": api_key or "missing-key"}
        else:
            if provider == "ollama":
                endpoint = endpoint or DEFAULT_OLLAMA_URL
                api_key = api_key or "ollama"
            if not endpoint:
                endpoint = os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
            url = endpoint.rstrip("/") + "/chat/completions"
            auth = {"Authorization": f"Bearer {api_key or 'missing-key'}"}
        self.url_in_use = scrub_url(endpoint, self._secrets) or ""
        """The endpoint the calls go to (credentials replaced), named when it cannot be reached."""
        self.url_source = url_source(provider, base_url)
        self._reached = False
        """A reply came back once: a connection failure after that is retried, before it it ends the run."""
        self._params = query or None
        self._headers = {
            **auth,
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
        self._target = httpx.URL(url, params=self._params) if self._azure_base is None else None
        self._targets: dict[str, httpx.URL] = {}  # azure: one URL per deployment
        self._json_mode = "json_schema"  # degrades to json_object, then to plain prompting

    def _target_for(self, model: str) -> httpx.URL:
        if self._target is not None:
            return self._target
        found = self._targets.get(model)
        if found is None:
            if model in ("", ".", ".."):
                raise LLMError(f"azure: {model!r} is not a deployment name", kind="error")
            route = f"{self._azure_base}/deployments/{quote(model, safe=_SEGMENT_SAFE)}/chat/completions"
            found = self._targets[model] = httpx.URL(route, params=self._params)
        return found

    def _scrub(self, text: str) -> str:
        return scrub_text(text, self._secrets)

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": request.model, "messages": request.messages}
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        for key, value in (request.extra or {}).items():  # a provider config's fields, as given
            if key not in ("model", "messages"):
                body[key] = value
        return body

    def _response_format(self, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is None or self._json_mode == "none":
            return None
        if self._json_mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema}}
        return {"type": "json_object"}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion; an endpoint that rejects ``response_format`` is asked again with a weaker JSON mode."""
        body = self._body(request)
        timeout = request.timeout or self._timeout
        start = time.perf_counter()
        while True:
            fmt = self._response_format(request.json_schema)
            if fmt is not None:
                body["response_format"] = fmt
            elif "response_format" not in (request.extra or {}):
                body.pop("response_format", None)
            status, raw, headers = await self._post(self._target_for(request.model), body, timeout)
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
        return ChatResponse(text=text, usage=usage, latency_s=latency, model=model or request.model, cost_usd=cost, tool_calls=tool_calls)

    async def embed(self, texts: list[str], model: str, timeout: float | None = None) -> list[list[float]]:
        """One vector per text from the endpoint's ``/embeddings`` (beside its ``/chat/completions``)."""
        target = self._target_for(model)
        path = target.path.removesuffix("/chat/completions") + "/embeddings"
        status, raw, headers = await self._post(target.copy_with(path=path), {"model": model, "input": texts}, timeout or self._timeout)
        if status >= 400:
            message, _ = _error_message(raw)
            raise LLMError(
                self._scrub(f"embeddings: HTTP {status}: {message}{status_hint(status)}"), retryable=status in RETRYABLE_STATUS, status=status, kind="http"
            )
        try:
            data = json.loads(raw)["data"]
            vectors = [[float(x) for x in d["embedding"]] for d in sorted(data, key=lambda d: int(d.get("index", 0)))]
        except (ValueError, KeyError, TypeError) as err:
            raise LLMError(f"embeddings: the reply is not an embeddings list ({type(err).__name__})", kind="error") from None
        if len(vectors) != len(texts) or any(len(v) != len(vectors[0]) or not v for v in vectors):
            raise LLMError(f"embeddings: {len(vectors)} vectors of uneven or no length for {len(texts)} texts", kind="error")
        return vectors

    async def _post(self, target: httpx.URL, body: dict[str, Any], timeout: float) -> tuple[int, bytes, httpx.Headers]:
        """(status, body read within its limit, headers); LLMError for a failed exchange."""
        content = json.dumps(body).encode()
        try:
            if self._pool is not None:
                req = httpx.Request("POST", target, headers=self._headers, content=content, extensions={"timeout": _timeouts(timeout)})
                resp = await self._pool.handle_async_request(req)
            else:
                req = self._client.build_request("POST", target, content=content, headers=self._headers, timeout=timeout)  # type: ignore[union-attr]
                resp = await self._client.send(req, stream=True)  # type: ignore[union-attr]
            try:
                raw = await read_capped(resp, MAX_REPLY_BYTES)
            except ReplyError as exc:
                if resp.status_code < 400:
                    raise LLMError(f"the provider sent a reply that is not a chat completion: {exc}", retryable=True, kind="malformed") from None
                raw = b""  # an oversized error body: the status alone speaks
            self._reached = True
            return resp.status_code, raw, resp.headers
        except LLMError:
            raise
        except httpx.TimeoutException:
            raise LLMError("request timed out", retryable=True, kind="timeout") from None
        except httpx.ConnectError as exc:
            if not self._reached:  # refused, no such host: nothing a retry fixes, and every trial would wait for it
                raise unreachable(self.url_in_use, self.url_source, self._scrub(safe_str(exc) or type(exc).__name__)) from None
            raise LLMError(f"connection error: {self._scrub(safe_str(exc) or type(exc).__name__)}", retryable=True, kind="connection") from None
        except (httpx.TransportError, OSError) as exc:
            raise LLMError(f"connection error: {self._scrub(safe_str(exc) or type(exc).__name__)}", retryable=True, kind="connection") from None
        except Exception as exc:  # noqa: BLE001 - every client error becomes an LLMError
            raise LLMError(self._scrub(f"{type(exc).__name__}: {' '.join(safe_str(exc).split())}")[:400], kind="error") from None

    async def aclose(self) -> None:
        """Close the pooled transport or the httpx client."""
        if self._pool is not None:
            await self._pool.aclose()
        else:
            await self._client.aclose()  # type: ignore[union-attr]

    def describe(self) -> dict[str, Any]:
        """Provider and base URL (credentials never shown)."""
        return {"provider": self.name, "base_url": self.base_url}


def _timeouts(seconds: float) -> dict[str, float]:
    return {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}


def _error_message(raw: bytes) -> tuple[str, str]:
    """(message shown, lower-case text searched for a rejected response_format) of an error
    body, as the official SDK shows it: ``error.message`` (or ``message``) of a JSON body,
    else the body's first 300 characters."""
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
