"""The wire details of OpenAI-compatible endpoints, without importing an HTTP library: the
URL split (credentials sent, never shown), ``Retry-After`` parsing, retryable statuses, the
hint on 401/404, and reading a chat-completion body into (text, usage, cost, tool calls,
model).

Used by the one OpenAI-compatible client, :mod:`agentsproof.llm.openai_http`, and
``Retry-After`` by the HTTP target (:mod:`agentsproof.targets.http.target`).
"""

from __future__ import annotations

import base64
import math
import os
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from agentsproof.core.scrub import scrub_text, url_secrets
from agentsproof.llm.base import LLMError
from agentsproof.llm.replies import ReplyError, parse_chat_completion
from agentsproof.model.results import Usage

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
DEFAULT_OLLAMA_URL = "http://localhost:11434/v1"


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``Retry-After(-ms)``; None when absent or not a finite, non-negative value."""
    if headers is None:
        return None
    for name in ("retry-after-ms", "retry-after"):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw[:40])
        except ValueError:
            # HTTP-date form
            from email.utils import parsedate_to_datetime

            try:
                value = parsedate_to_datetime(raw[:100]).timestamp() - time.time()
            except Exception:  # noqa: BLE001 - any unparsable date is no date
                continue
            return max(0.0, value) if math.isfinite(value) else None
        if not math.isfinite(value) or value < 0:
            continue
        return value / 1000.0 if name == "retry-after-ms" else value
    return None


def split_url(url: str | None) -> tuple[str | None, dict[str, str], dict[str, str]]:
    """(URL without user-info and query, query parameters, extra headers) for the openai client.

    ``https://user:pw@host/v1?api-key=K`` works as written: the user-info is sent as HTTP
    basic auth (an ``Authorization: Basic`` header, which takes the place of the bearer
    key) and every query parameter is sent on every request (``default_query``).
    """
    if not url:
        return url, {}, {}
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port
    except ValueError as exc:
        raise LLMError(f"AGENTSPROOF_PROVIDER_URL is not a valid URL ({scrub_text(str(exc), url_secrets(url))})") from None
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    headers: dict[str, str] = {}
    netloc = parts.netloc
    if "@" in netloc:
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
        netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")), query, headers


def url_source(provider: str, base_url: str | None) -> str:
    """Which setting chose the endpoint, for the message that says it cannot be reached."""
    if base_url:
        return "set by AGENTSPROOF_PROVIDER_URL" if base_url == os.environ.get("AGENTSPROOF_PROVIDER_URL") else "as configured"
    if provider == "ollama":
        return "ollama's default, AGENTSPROOF_PROVIDER_URL not set"
    if provider == "openai" and os.environ.get("OPENAI_BASE_URL"):
        return "set by OPENAI_BASE_URL, AGENTSPROOF_PROVIDER_URL not set"
    return "the default, AGENTSPROOF_PROVIDER_URL not set"


def unreachable(url: str, source: str, cause: str) -> LLMError:
    """The first call could not connect (refused, unknown host): not retried, and it ends the run
    (kind ``unreachable``: :func:`agentsproof.executor.fatal.fatal_reason`)."""
    return LLMError(f"cannot reach {url} ({source}): {cause}", retryable=False, kind="unreachable")


def status_hint(status: int) -> str:
    """What to check after an HTTP error, appended to its reason."""
    if status == 401:
        return " (check AGENTSPROOF_PROVIDER_KEY)"
    if status == 404:
        return " (check the model name and AGENTSPROOF_PROVIDER_URL)"
    return ""


def safe_str(exc: BaseException) -> str:
    """``str(exc)`` cut to 2,000 characters, or the type's name when even ``str`` fails."""
    try:
        return str(exc)[:2000]
    except Exception:  # noqa: BLE001 - a hostile error body must not break error handling
        return type(exc).__name__


def parse_completion(raw: bytes) -> tuple[str, Usage, float | None, list[dict[str, Any]], str]:
    """(text, usage, cost, tool calls, model) from a chat-completion body, read by
    :func:`agentsproof.llm.replies.parse_chat_completion` within its limits; LLMError (retryable,
    kind ``malformed``, or ``empty`` for a reply without text) naming what is wrong otherwise."""
    if not isinstance(raw, (bytes, bytearray)):
        raw = b"" if raw is None else raw if isinstance(raw, str) else b""
    try:
        c = parse_chat_completion(raw)
    except ReplyError as err:
        reason = str(err)
        if reason.startswith("empty reply"):
            raise LLMError(f"the provider sent an {reason}", retryable=True, kind="empty") from None
        if reason == "the provider returned no choices":
            raise LLMError(reason, retryable=True, kind="malformed") from None
        raise LLMError(f"the provider sent a reply that is not a chat completion: {reason}", retryable=True, kind="malformed") from None
    return c.text, c.usage, c.cost, c.tool_calls, c.model
