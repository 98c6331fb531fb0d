"""The one async interface every provider implements.

A provider turns a :class:`ChatRequest` into a :class:`ChatResponse`, or raises
:class:`LLMError` with a short reason. Nothing above this layer knows which provider
answered: runner, graders and generator only see these types.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

from agentsproof.core.errors import LLMError
from agentsproof.model.results import Usage


@dataclass
class ChatRequest:
    messages: list[dict[str, str]]
    model: str
    temperature: float | None = None
    json_schema: dict[str, Any] | None = None
    """When set, ask for a JSON object following this schema (best effort per provider)."""
    max_tokens: int | None = None
    timeout: float | None = None
    """Per-attempt timeout in seconds (one HTTP call / one session)."""
    budget: float | None = None
    """Seconds the whole call may take, retries and waits included (the eval's ``timeout``).
    :class:`~agentsproof.llm.retry.RetryingClient` gives each attempt
    ``min(timeout, ATTEMPT_SHARE * budget, time left)`` and never waits past the budget."""
    deadline: float | None = None
    """The same as an absolute ``time.monotonic()`` instant, shared by several calls (the
    judge calls of one trial); the earlier of ``deadline`` and ``now + budget`` counts."""
    slot: tuple[str, str, int] | None = None
    """The trial the call is made for (item, arm, trial index; the judge's calls share their
    trial's): the response cache keys by it, so N trials of one prompt stay N samples."""


@dataclass
class ChatResponse:
    text: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    cost_usd: float | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 1
    cached: bool = False
    """Served from the response cache (agentsproof.llm.cache): no call was made."""


_SECRET_PARAM = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session|cookie|bearer", re.I)
_URL_IN_TEXT = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]{0,30}://[^\s'\"<>]+")  # bounded scheme: linear time
MIN_SECRET_CHARS = 4
"""Secrets shorter than this are not replaced in free text (they would hit ordinary words);
inside URLs every user-info part and secret-looking query value is replaced regardless."""


def _secret_query(name: str, value: str, secrets: Iterable[str]) -> bool:
    return bool(value) and (_SECRET_PARAM.search(name) is not None or any(s and s == value for s in secrets))


def scrub_url(url: str | None, secrets: Iterable[str] = ()) -> str | None:
    """``url`` fit for reports: user-info becomes ``***@`` and the value of every query
    parameter whose name looks like a secret (key, token, secret, password, auth, sig ...)
    or whose value is one of ``secrets`` becomes ``***``."""
    if not url:
        return url
    secrets = [s for s in secrets if s]
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # an unparsable URL: keep nothing that could be a credential
        return "<unparsable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = "&".join(
            f"{quote(k, safe='')}=" + ("***" if _secret_query(k, v, secrets) else quote(v, safe=""))
            for k, v in pairs
        )
    fragment = "***" if parts.fragment else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def url_secrets(url: str | None) -> list[str]:
    """The credential parts of ``url`` (user, password, secret-looking query values), for :func:`scrub`."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        found = [parts.username, parts.password]
    except ValueError:
        return []
    found += [unquote(p) for p in (parts.username, parts.password) if p]
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if _secret_query(k, v, ())]
    found += [quote(v, safe="") for v in list(found) if v]
    return sorted({s for s in found if s}, key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` fit for error reasons, reports and logs: every URL in it passed through
    :func:`scrub_url`, then every secret of 4+ characters (these and every one registered
    with :mod:`agentsproof.core.scrub`, in all their escaped forms) replaced by ``***``."""
    from agentsproof.core.scrub import scrub as mask

    secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
    text = _URL_IN_TEXT.sub(lambda m: scrub_url(m.group(0), secrets) or "", text)
    return mask(text, secrets)


def provider_setting(name: str, default: float, *, lo: float | None = None, hi: float | None = None, whole: bool = False) -> float:
    """An ``AGENTSPROOF_*`` number a provider reads when it is built: the shared env reader
    (:mod:`agentsproof.core.envcfg`), with a malformed or out-of-range value as an
    ``LLMError(kind="config")`` naming the variable (the provider layer's error type)."""
    from agentsproof.core.envcfg import env_int, env_number
    from agentsproof.core.errors import InputError

    try:
        if whole:
            return env_int(name, int(default), lo=None if lo is None else int(lo), hi=None if hi is None else int(hi))
        return env_number(name, default, lo=lo, hi=hi)
    except InputError as err:
        raise LLMError(err.format(), kind="config") from None


class LLMClient(abc.ABC):
    """Base class of all providers."""

    name: str = "base"
    max_concurrency: int | None = None
    """Upper bound on concurrent calls this provider can usefully take (None: no bound)."""

    @abc.abstractmethod
    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion. Raise LLMError on failure."""

    async def aclose(self) -> None:
        """Release connections, processes or models (by default there are none)."""
        return None

    def describe(self) -> dict[str, Any]:
        """Non-secret facts for reports (never keys)."""
        return {"provider": self.name}
