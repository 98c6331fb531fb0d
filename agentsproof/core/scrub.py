"""The one scrubber every output passes: secrets masked as ``***`` in every form they may
take in a text.

Secrets are *registered* where they are read — a provider's API key, an http target's
``token_env`` value, every ``${VAR}`` value expanded from targets.yaml, a command target's
``env`` values — and masked in everything written afterwards: the console (stdout and
stderr), every report format, the journal, JSONL streams, session logs, workspace
previews and the reasons of errored trials. A secret is masked raw and in the forms a
message shows it in: repr-escaped (``tok\\r``), JSON-escaped, URL-encoded, HTML-escaped,
with its surrounding whitespace stripped or its whitespace runs collapsed.

Masking must come *before* any cut to a bounded length (a cut secret no longer matches);
:func:`clip` does both in that order. :func:`scrub_data` also masks a fragment of a secret
left at either end of a string by a cut made elsewhere.

The registry is process-wide: a value registered once stays masked for the rest of the
process. Values shorter than :data:`MIN_SECRET_CHARS` are not masked in free text (they
would hit ordinary words).

Credentials inside URLs are masked whatever their length: :func:`scrub_url` (user-info and
secret-looking query values), and :func:`scrub_text` for a free text (an error reason, a
log line) that may hold URLs.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit, urlunsplit

if TYPE_CHECKING:
    from pydantic import BaseModel

_Model = TypeVar("_Model", bound="BaseModel")

MASK = "***"
MIN_SECRET_CHARS = 4
"""Secrets shorter than this are not replaced in free text."""
MIN_FRAGMENT_CHARS = 6
"""The shortest piece of a secret masked at the end (or start) of a cut string."""

_lock = threading.Lock()
_values: set[str] = set()
_forms: list[str] = []
"""Every masked form of every registered value, longest first."""
_vars: dict[str, str] = {}
"""``${NAME}`` references expanded so far: name → value (for the journal's digest)."""


def forms(value: str) -> set[str]:
    """The forms ``value`` may take in a message: raw, repr-, JSON-, URL- and HTML-escaped,
    stripped, whitespace-collapsed (and the escapes of those)."""
    base = {value, value.strip(), " ".join(value.split())}
    out: set[str] = set()
    for v in base:
        if not v:
            continue
        reprd = repr(v)[1:-1]
        uni = v.encode("unicode_escape").decode("ascii")
        jsoned = json.dumps(v)[1:-1]
        out |= {
            v,
            reprd,
            uni,
            jsoned,
            json.dumps(v, ensure_ascii=False)[1:-1],
            json.dumps(reprd)[1:-1],
            json.dumps(uni)[1:-1],
            repr(jsoned)[1:-1],
            quote(v, safe=""),
            quote(v),
            quote_plus(v),
            html.escape(v),
            html.escape(v, quote=False),
            html.escape(reprd),
            html.escape(jsoned),
        }
    return {f for f in out if len(f) >= MIN_SECRET_CHARS}


def register(*values: str | None) -> None:
    """Mask these values (and their forms) in every output from now on."""
    fresh = [v for v in values if isinstance(v, str) and len(v.strip()) >= MIN_SECRET_CHARS and v not in _values]
    if not fresh:
        return
    global _forms
    with _lock:
        _values.update(fresh)
        found = set(_forms)
        for v in fresh:
            found |= forms(v)
        _forms = sorted(found, key=len, reverse=True)  # rebound, never changed in place: readers keep a whole list


_SECRET_ENV_NAME = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.I)
MIN_ENV_SECRET_CHARS = 8
"""An environment value found by its name alone is masked from this length (``true`` is no key)."""


def secret_name(name: str) -> bool:
    """Whether a variable's or option's name says it holds a secret (``*_API_KEY``, ``token``, ``PASSWORD`` …)."""
    return bool(_SECRET_ENV_NAME.search(name))


def register_environment(environ: dict[str, str] | None = None) -> None:
    """The values of secret-named environment variables (``*_API_KEY``, ``*_TOKEN``,
    ``*_SECRET``, ``*_PASSWORD`` …): an agent inherits them and may echo them."""
    import os

    env = os.environ if environ is None else environ
    register(*(v for k, v in env.items() if _SECRET_ENV_NAME.search(k) and len(v.strip()) >= MIN_ENV_SECRET_CHARS))


def register_var(name: str, value: str) -> None:
    """A ``${NAME}`` reference was expanded to ``value``: mask it and remember it for
    :func:`var_digests`."""
    _vars[name] = value
    register(value)


def expanded_vars() -> dict[str, str]:
    """Every ``${NAME}`` expanded so far in this process: name → value."""
    return dict(_vars)


def var_digests(salt: str, names: Iterable[str] | None = None) -> dict[str, str]:
    """A salted digest (HMAC-SHA256, never the value) of each expanded ``${NAME}``."""
    chosen = _vars if names is None else {n: _vars[n] for n in names if n in _vars}
    return {n: digest(salt, v) for n, v in sorted(chosen.items())}


def digest(salt: str, value: str) -> str:
    """A salted digest of ``value``: HMAC-SHA256 keyed by ``salt``, its first 32 hex digits."""
    return hmac.new(salt.encode(), value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:32]


_SHORT_CHARS = 64
_SHORT_KEPT = 8192
"""Strings up to this long are remembered once masked, this many at most per masker."""
_CUT_MARKS = ("…", "...")
"""What a cut may leave beside a fragment."""


class _Masker:
    """The masking state for one set of forms, built once per set: the forms longest
    first, and every :data:`MIN_FRAGMENT_CHARS`-long piece of them (a cut string's end or
    start can only hold a fragment if its outermost piece is one of these)."""

    __slots__ = ("forms", "pieces", "_short", "_json_probes")

    def __init__(self, found: list[str]) -> None:
        n = MIN_FRAGMENT_CHARS
        self.forms = found
        self.pieces = frozenset(f[i : i + n] for f in found for i in range(len(f) - n + 1))
        self._short: dict[str, str] = {}
        """Short strings already masked (field names, labels, verdicts recur in every record)."""
        self._json_probes: tuple[str, ...] | None = None

    def json_probes(self) -> tuple[str, ...]:
        """What a JSON text (``json.dumps``, ASCII escapes) must hold for :func:`scrub_data`
        or :func:`scrub` to change it: a form raw or JSON-escaped (a form inside a string is
        its escaped form in the text), or the escaped first or last :data:`MIN_FRAGMENT_CHARS`
        characters of a form (a fragment :meth:`edges` masks at a string's end starts with the
        form's first ones; at its start, it ends with the form's last ones)."""
        if self._json_probes is None:
            n = MIN_FRAGMENT_CHARS
            found = {p for f in self.forms for p in (f, json.dumps(f)[1:-1], json.dumps(f[:n])[1:-1], json.dumps(f[-n:])[1:-1])}
            self._json_probes = tuple(sorted(found, key=len))  # the shortest first: a hit ends the search soonest
        return self._json_probes

    def scrub(self, text: str) -> str:
        for form in self.forms:
            if form in text:
                text = text.replace(form, MASK)
        return text

    def edges(self, text: str) -> str:
        """Mask a fragment (at least :data:`MIN_FRAGMENT_CHARS` long) of a secret form that a
        cut left at the end or the start of ``text`` (an ellipsis after/before it allowed)."""
        n, pieces = MIN_FRAGMENT_CHARS, self.pieces
        if len(text) < n:
            return text
        if text[-n:] not in pieces and text[:n] not in pieces and not text.endswith(_CUT_MARKS) and not text.startswith(_CUT_MARKS):
            return text  # neither end can hold a fragment (the common case)
        for mark in ("…", "...", ""):
            if text.endswith(mark):
                body = text[: len(text) - len(mark)]
                probe = body[-n:]
                if len(probe) < n or probe not in pieces:
                    continue
                hit = next((k for form in self.forms if probe in form for k in range(min(len(form) - 1, len(body)), n - 1, -1) if body.endswith(form[:k])), 0)
                if hit:
                    text = body[:-hit] + MASK + mark
                    break
        for mark in ("…", "...", ""):
            if text.startswith(mark):
                body = text[len(mark) :]
                probe = body[:n]
                if len(probe) < n or probe not in pieces:
                    continue
                hit = next(
                    (k for form in self.forms if probe in form for k in range(min(len(form) - 1, len(body)), n - 1, -1) if body.startswith(form[-k:])), 0
                )
                if hit:
                    text = mark + MASK + body[hit:]
                    break
        return text

    def string(self, text: str) -> str:
        if not isinstance(text, str) or not text:
            return text
        if len(text) > _SHORT_CHARS:
            return self.edges(self.scrub(text))
        done = self._short.get(text)
        if done is None:
            if len(self._short) >= _SHORT_KEPT:
                self._short.clear()
            done = self._short[text] = self.edges(self.scrub(text))
        return done


_masker: _Masker | None = None
"""The masker of the registered forms alone (rebuilt when :data:`_forms` is rebound)."""


def _masker_for(extra: Iterable[str | None]) -> _Masker | None:
    """The masker for the registered forms plus ``extra``'s; ``None`` when there is nothing to mask."""
    global _masker
    more = [v for v in extra if isinstance(v, str) and len(v) >= MIN_SECRET_CHARS and v not in _values]
    if more:
        found = set(_forms)
        for v in more:
            found |= forms(v)
        return _Masker(sorted(found, key=len, reverse=True))
    current = _forms
    if not current:
        return None
    masker = _masker
    if masker is None or masker.forms is not current:
        masker = _masker = _Masker(current)
    return masker


def scrub(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` with every registered secret (and ``extra``) masked in all its forms."""
    if not isinstance(text, str) or not text:
        return text
    masker = _masker_for(extra)
    return masker.scrub(text) if masker else text


def scrub_string(text: str, extra: Iterable[str | None] = ()) -> str:
    """:func:`scrub`, then any fragment of a secret left at either end by a cut masked."""
    masker = _masker_for(extra)
    return masker.string(text) if masker else text


def clip(text: str, limit: int, extra: Iterable[str | None] = (), *, tail: bool = False) -> str:
    """``text`` scrubbed, *then* cut to ``limit`` characters (its end, with ``tail``)."""
    text = scrub(text, extra)
    if len(text) <= limit:
        return text
    return ("…" + text[-(limit - 1) :]) if tail else (text[: limit - 1] + "…")


# ------------------------------------------------------------------ URLs in texts

SECRET_PARAM = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session|cookie|bearer", re.I)
"""A query parameter (or header, or ``env`` key) named like this holds a secret."""
_URL_IN_TEXT = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]{0,30}://[^\s'\"<>]+")  # bounded scheme: linear time


def _secret_query(name: str, value: str, secrets: Iterable[str]) -> bool:
    return bool(value) and (SECRET_PARAM.search(name) is not None or any(s and s == value for s in secrets))


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
        query = "&".join(f"{quote(k, safe='')}=" + ("***" if _secret_query(k, v, secrets) else quote(v, safe="")) for k, v in pairs)
    fragment = "***" if parts.fragment else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def url_secrets(url: str | None) -> list[str]:
    """The credential parts of ``url`` (user, password, secret-looking query values), for :func:`scrub_text`."""
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


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` fit for error reasons, reports and logs: every URL in it passed through
    :func:`scrub_url`, then every secret of 4+ characters (these and every one registered
    here, in all their escaped forms) replaced by ``***``."""
    secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
    text = _URL_IN_TEXT.sub(lambda m: scrub_url(m.group(0), secrets) or "", text)
    return scrub(text, secrets)


def scrub_data(value: Any, extra: Iterable[str | None] = ()) -> Any:
    """A copy of a JSON-like value (dicts, lists, strings) with every string (and dict key)
    passed through :func:`scrub_string`."""
    masker = _masker_for(extra)
    if masker is None:
        return value
    string = masker.string

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return string(value)
        if isinstance(value, dict):
            return {(string(k) if isinstance(k, str) else k): walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, tuple):
            return tuple(walk(v) for v in value)
        return value

    return walk(value)


def scrub_json(value: Any) -> str:
    """``json.dumps(value)`` with every registered secret masked: exactly
    ``scrub(json.dumps(scrub_data(value)))``, whose walk of every string is skipped when
    the text holds nothing it could mask (:meth:`_Masker.json_probes`, a few substring
    searches of the whole text)."""
    text = json.dumps(value)
    masker = _masker_for(())
    if masker is None or not any(p in text for p in masker.json_probes()):
        return text
    return masker.scrub(json.dumps(scrub_data(value)))


_PLAIN = (int, float, bool, type(None))
"""Field values :func:`scrub_model` skips (exactly these types: a ``str`` or ``int`` subclass is walked)."""


def scrub_model(obj: _Model, extra: Iterable[str | None] = ()) -> _Model:
    """Every string inside a pydantic model (nested models, lists, dicts) scrubbed with
    :func:`scrub_string`, in place; returns ``obj``."""
    masker = _masker_for(extra)
    if masker is None:
        return obj
    from pydantic import BaseModel

    string = masker.string

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return string(value)
        if isinstance(value, BaseModel):
            for name in type(value).model_fields:
                old = getattr(value, name, None)
                if type(old) in _PLAIN:
                    continue  # a number, a flag or None: nothing to mask (most fields of a trial)
                new = walk(old)
                if new is not old:
                    object.__setattr__(value, name, new)
            return value
        if isinstance(value, list):
            out = [walk(v) for v in value]
            return value if all(a is b for a, b in zip(out, value, strict=True)) else out
        if isinstance(value, dict):
            pairs = {(walk(k) if isinstance(k, str) else k): walk(v) for k, v in value.items()}
            return pairs
        return value

    walk(obj)  # a model is scrubbed in place
    return obj


def registered() -> list[str]:
    """The registered secret values themselves (for masking bytes that are not text)."""
    return sorted(_values, key=len, reverse=True)


def active() -> bool:
    """True once any secret is registered."""
    return bool(_forms)


class ScrubbingStream:
    """A text stream that masks registered secrets in everything written to it, and shows
    control characters as escapes (:func:`agentsproof.core.termtext.console_text`): no
    key or name from an input file can send a terminal escape sequence."""

    def __init__(self, inner: IO[str]):
        self._inner = inner

    def write(self, text: str) -> int:
        """Write ``text`` scrubbed and made safe for a terminal; returns the length of ``text`` as given."""
        if not isinstance(text, str):
            raise TypeError("write() argument must be str")
        from agentsproof.core.termtext import console_text

        self._inner.write(console_text(scrub(text)))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":  # no way around the scrubber
            raise AttributeError(name)
        return getattr(self._inner, name)


@contextmanager
def scrubbed_console() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` pass the scrubber while the block runs (and the
    secret-named environment variables are registered first)."""
    import sys

    register_environment()
    old_out, old_err = sys.stdout, sys.stderr
    sys.stdout = ScrubbingStream(old_out)
    sys.stderr = ScrubbingStream(old_err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = old_out, old_err


def _reset_for_tests() -> None:
    global _forms
    with _lock:
        _values.clear()
        _forms = []
        _vars.clear()
