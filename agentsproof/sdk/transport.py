"""HTTP for the SDK on the standard library: keep-alive connections, JSON in and out.

One connection per thread and process (the worker thread keeps its own), so nothing is
shared across a fork. ``request`` raises ``Unreachable`` when no HTTP answer came back
(refused, reset, timeout, DNS) and ``HTTPStatusError`` for a non-2xx answer; callers
decide what a failure means. The API key goes in the ``x-api-key`` header and nowhere else.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import ssl
import threading
import urllib.parse
from typing import Any

SDK_VERSION = "0.1.0"
"""The SDK imports nothing from the harness, so it keeps its own copy of the version
(``tests/sdk/test_sdk_import.py`` keeps it equal to ``agentsproof.__version__``)."""
USER_AGENT = f"agentsproof-python/{SDK_VERSION}"
_MAX_REDIRECTS = 3


class TransportError(Exception):
    """Base of the SDK's HTTP failures."""


class Unreachable(TransportError):
    """No HTTP answer: connection refused or reset, timeout, unknown host."""


class TooSlow(Unreachable):
    """The server took the connection but sent no answer within the timeout: slow, not gone."""


class HTTPStatusError(TransportError):
    """A non-2xx answer (or a 2xx body that is not JSON): ``status`` and the raw ``body``."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:300]}")
        self.status = status
        self.body = body

    @property
    def retryable(self) -> bool:
        """Worth keeping the data for a later ``agentsproof sync``: auth, rate limit, server errors."""
        return self.status in (401, 403, 408, 429) or self.status >= 500

    @property
    def transient(self) -> bool:
        """Worth sending again in a moment: timeout, rate limit, server error."""
        return self.status in (408, 429) or self.status >= 500

    @property
    def refused(self) -> bool:
        """The server will not take this body (a 4xx other than auth, timeout, rate limit):
        kept in the spool, never sent again as is by the live client."""
        return not self.retryable


def encode(body: Any) -> bytes:
    """JSON bytes for any body: text that would not encode (lone surrogates) and numbers
    JSON has none for (NaN, Infinity) are made plain first, never refused."""
    try:
        return json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        from agentsproof.sdk.jsonable import to_jsonable

        return json.dumps(to_jsonable(body), ensure_ascii=False, allow_nan=False).encode("utf-8", "replace")


class Transport:
    """Keep-alive JSON over HTTP(S) to one base URL, one connection per thread and process."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout
        self._local = threading.local()

    def __repr__(self) -> str:  # never show the key
        return f"Transport({self.base_url!r})"

    def request(self, method: str, path: str, body: Any = None, *, params: dict | None = None, timeout: float | None = None) -> Any:
        """Send ``body`` as JSON to ``path``, following 307/308; the decoded answer, or None for an empty body.

        Raises ``Unreachable`` when no HTTP answer came back and ``HTTPStatusError`` for a non-2xx one.
        """
        url = self.base_url + path
        if params:
            url += "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        data = None if body is None else encode(body)
        headers = {"accept": "application/json", "user-agent": USER_AGENT}
        if data is not None:
            headers["content-type"] = "application/json"
        if self._api_key:
            headers["x-api-key"] = self._api_key
        for _ in range(_MAX_REDIRECTS + 1):
            status, resp_headers, raw = self._send(method, url, data, headers, timeout or self.timeout)
            if status in (307, 308) and resp_headers.get("location"):
                url = urllib.parse.urljoin(url, resp_headers["location"])
                continue
            break
        text = raw.decode("utf-8", errors="replace")
        if not 200 <= status < 300:
            raise HTTPStatusError(status, text)
        if not text.strip():
            return None
        try:
            return json.loads(text)
        except ValueError as err:
            raise HTTPStatusError(status, f"response is not JSON: {text[:200]}") from err

    def _send(self, method: str, url: str, data: bytes | None, headers: dict, timeout: float) -> tuple[int, dict, bytes]:
        parts = urllib.parse.urlsplit(url)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        for attempt in (0, 1):
            conn, reused = self._conn(parts, timeout)
            try:
                conn.request(method, target, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                if resp.will_close:
                    self._drop(parts)
                return resp.status, {k.lower(): v for k, v in resp.getheaders()}, raw
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as err:
                # a kept-alive connection the server closed meanwhile: retry once on a fresh one
                self._drop(parts)
                if attempt == 1 or not reused:
                    raise Unreachable(f"{type(err).__name__}: {err}") from err
            except (OSError, http.client.HTTPException) as err:
                connected = conn.sock is not None
                self._drop(parts)
                if isinstance(err, TimeoutError) and connected:
                    raise TooSlow(f"no answer within {timeout:g}s") from err
                raise Unreachable(f"{type(err).__name__}: {err}") from err
        raise Unreachable("unreachable")  # pragma: no cover

    def _conn(self, parts: urllib.parse.SplitResult, timeout: float) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection to the URL's origin, and whether it was kept alive from an earlier request."""
        key = (os.getpid(), parts.scheme, parts.netloc)
        conns: dict[tuple[int, str, str], http.client.HTTPConnection] | None = getattr(self._local, "conns", None)
        if conns is None or getattr(self._local, "pid", None) != os.getpid():
            conns = self._local.conns = {}
            self._local.pid = os.getpid()
        conn = conns.get(key)
        if conn is not None:
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            return conn, True
        host = parts.hostname or "127.0.0.1"
        if parts.scheme == "https":
            conn = http.client.HTTPSConnection(host, parts.port, timeout=timeout, context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(host, parts.port, timeout=timeout)
        conns[key] = conn
        return conn, False

    def _drop(self, parts: urllib.parse.SplitResult) -> None:
        conns = getattr(self._local, "conns", None) or {}
        conn = conns.pop((os.getpid(), parts.scheme, parts.netloc), None)
        if conn is not None:
            with contextlib.suppress(Exception):  # a connection being dropped may already be broken
                conn.close()
