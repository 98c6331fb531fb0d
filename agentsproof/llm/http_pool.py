"""A lean HTTP/1.1 keep-alive transport for httpx, on asyncio streams.

httpcore's connection pool (httpx's default transport) re-scans every queued request
against every connection on each state change, which at ``--parallel 50`` costs several
ms of CPU per call. This transport keeps a plain stack of idle connections per origin and
a semaphore for the connection limit: O(1) per request. httpx still builds the request,
decodes content-encoding and classifies errors; this module only moves bytes.

Scope: HTTP/1.1 over TCP or TLS, ``Content-Length``, chunked or read-to-close bodies.
Proxies are not spoken: :func:`lean_transport` returns None when a proxy is configured
in the environment, and the caller keeps httpx's own transport.

Errors are httpx's: ``ConnectTimeout``/``ReadTimeout``/``WriteTimeout``/``PoolTimeout``,
``ConnectError``, ``ReadError``/``WriteError`` and ``RemoteProtocolError`` (a dropped or
malformed reply), with the messages httpcore uses for the same events.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable

import httpx

PROXY_ENVS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
MAX_HEADER_BYTES = 64 * 1024
"""Largest status line plus headers accepted (asyncio's stream limit)."""
READ_CHUNK = 64 * 1024
DISCONNECTED = "Server disconnected without sending a response."

Origin = tuple[str, str, int]


TRANSPORT_ENV = "AGENTSPROOF_HTTP_TRANSPORT"
"""``httpx``: httpx's own client and transport instead of the pooled one (for comparisons)."""


def lean_transport(max_connections: int) -> PoolTransport | None:
    """The pooled transport, or None when the environment names a proxy (httpx handles
    those) or ``AGENTSPROOF_HTTP_TRANSPORT=httpx`` asks for httpx's own transport."""
    if any(os.environ.get(name) for name in PROXY_ENVS) or os.environ.get(TRANSPORT_ENV, "").strip().lower() == "httpx":
        return None
    return PoolTransport(max_connections)


class _Conn:
    __slots__ = ("reader", "writer", "reused")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer
        self.reused = False

    def usable(self) -> bool:
        return not self.writer.is_closing() and not self.reader.at_eof()

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing a broken socket must not raise
            self.writer.close()


class PoolTransport(httpx.AsyncBaseTransport):
    """An httpx transport keeping a stack of idle HTTP/1.1 connections per origin, at most ``max_connections`` in use."""

    def __init__(self, max_connections: int = 100):
        self._max = max_connections
        self._idle: dict[Origin, list[_Conn]] = defaultdict(list)
        self._slots: asyncio.Semaphore | None = None
        self._ssl: ssl.SSLContext | None = None

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context()
        return self._ssl

    async def _connect(self, origin: Origin, timeout: float | None, request: httpx.Request) -> _Conn:
        scheme, host, port = origin
        tls = self._ssl_context() if scheme == "https" else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, ssl=tls, server_hostname=host if tls else None, limit=MAX_HEADER_BYTES)
        except TimeoutError:
            raise httpx.ConnectTimeout("timed out", request=request) from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from None
        return _Conn(reader, writer)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` on an idle or new connection (waiting for a slot up to the pool timeout); httpx's errors on failure."""
        timeouts = request.extensions.get("timeout") or {}
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._max)
        try:
            async with asyncio.timeout(timeouts.get("pool")):
                await self._slots.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout("timed out waiting for a connection", request=request) from None
        try:
            return await self._exchange(request, timeouts)
        except BaseException:
            self._slots.release()
            raise

    async def _exchange(self, request: httpx.Request, timeouts: dict) -> httpx.Response:
        url = request.url
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        body = request.content if isinstance(request.stream, httpx.ByteStream) else await request.aread()
        head = _head(request, body)
        idle = self._idle[origin]
        while True:
            conn = None
            while idle:
                candidate = idle.pop()
                if candidate.usable():
                    conn = candidate
                    break
                candidate.close()
            if conn is None:
                conn = await self._connect(origin, timeouts.get("connect"), request)
            try:
                return await self._send(conn, origin, head, body, request, timeouts)
            except _Stale:
                conn.close()  # the server closed a kept-alive connection before reading: a fresh one
                continue
            except BaseException:
                conn.close()
                raise

    async def _send(self, conn: _Conn, origin: Origin, head: bytes, body: bytes, request: httpx.Request, timeouts: dict) -> httpx.Response:
        reused = conn.reused
        try:
            async with asyncio.timeout(timeouts.get("write")):
                conn.writer.write(head + body if len(body) < 65536 else head)
                if len(body) >= 65536:
                    conn.writer.write(body)
                await conn.writer.drain()
        except TimeoutError:
            raise httpx.WriteTimeout("timed out", request=request) from None
        except OSError as exc:
            if reused:
                raise _Stale from None
            raise httpx.WriteError(str(exc) or type(exc).__name__, request=request) from None
        read_timeout = timeouts.get("read")
        try:
            async with asyncio.timeout(read_timeout):
                raw_head = await conn.reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            raise httpx.ReadTimeout("timed out", request=request) from None
        except asyncio.IncompleteReadError as exc:
            if reused and not exc.partial:
                raise _Stale from None
            raise httpx.RemoteProtocolError(DISCONNECTED, request=request) from None
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError("the reply's headers are too large", request=request) from None
        except OSError as exc:
            if reused:
                raise _Stale from None
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from None
        status, headers, length, chunked, keep = _parse_head(raw_head, request)
        stream = _Body(self, conn, origin, length, chunked, keep and request.method != "HEAD", read_timeout, request)
        if status in (204, 304) or request.method == "HEAD":
            stream.length = 0
        return httpx.Response(status, headers=headers, stream=stream, request=request, extensions={"http_version": b"HTTP/1.1"})

    def _release(self, conn: _Conn | None, origin: Origin) -> None:
        if conn is not None:
            conn.reused = True
            self._idle[origin].append(conn)
        if self._slots is not None:
            self._slots.release()

    async def aclose(self) -> None:
        """Close every idle connection."""
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()


class _Stale(Exception):
    """A kept-alive connection was closed by the server before the request reached it."""


def _head(request: httpx.Request, body: bytes) -> bytes:
    lines = [b"%s %s HTTP/1.1" % (request.method.encode(), request.url.raw_path)]
    has_length = False
    for name, value in request.headers.raw:
        low = name.lower()
        if low == b"transfer-encoding":
            continue  # the body is sent whole, with its length
        if low == b"content-length":
            has_length = True
            value = str(len(body)).encode()
        lines.append(name + b": " + value)
    if not has_length and (body or request.method in ("POST", "PUT", "PATCH")):
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _parse_head(raw: bytes, request: httpx.Request) -> tuple[int, list[tuple[bytes, bytes]], int | None, bool, bool]:
    """(status, headers, content length or None, chunked, keep-alive) of a reply head."""
    lines = raw[:-4].split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit() or len(parts[1]) != 3:
        raise httpx.RemoteProtocolError("malformed status line in the reply", request=request)
    status = int(parts[1])
    keep = parts[0] == b"HTTP/1.1"
    headers: list[tuple[bytes, bytes]] = []
    length: int | None = None
    chunked = False
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep:
            raise httpx.RemoteProtocolError("malformed header line in the reply", request=request)
        value = value.strip()
        headers.append((name.strip(), value))
        low = name.strip().lower()
        if low == b"content-length":
            if not value.isdigit() or len(value) > 18:
                raise httpx.RemoteProtocolError("malformed Content-Length in the reply", request=request)
            length = int(value)
        elif low == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif low == b"connection":
            token = value.lower()
            keep = b"close" not in token and (keep or b"keep-alive" in token)
    if chunked:
        length = None
    elif length is None:
        keep = False  # the body runs to the end of the connection
    return status, headers, length, chunked, keep


class _Body(httpx.AsyncByteStream):
    """A reply body read from its connection; the connection goes back to the pool only
    when the body was read to its end (and the server keeps it alive)."""

    def __init__(
        self, pool: PoolTransport, conn: _Conn, origin: Origin, length: int | None, chunked: bool, keep: bool, timeout: float | None, request: httpx.Request
    ):
        self.pool, self.conn, self.origin = pool, conn, origin
        self.length, self.chunked, self.keep, self.timeout, self.request = length, chunked, keep, timeout, request
        self.done = False
        self.closed = False

    async def _read(self, op: Awaitable[bytes]) -> bytes:
        try:
            async with asyncio.timeout(self.timeout):
                return await op
        except TimeoutError:
            raise httpx.ReadTimeout("timed out", request=self.request) from None
        except asyncio.IncompleteReadError:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body", request=self.request) from None
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError("malformed chunked encoding in the reply", request=self.request) from None
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=self.request) from None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        reader = self.conn.reader
        if self.chunked:
            while True:
                line = await self._read(reader.readuntil(b"\r\n"))
                size_text = line.split(b";", 1)[0].strip()
                try:
                    size = int(size_text, 16) if len(size_text) <= 16 else -1
                except ValueError:
                    size = -1
                if size < 0:
                    raise httpx.RemoteProtocolError("malformed chunked encoding in the reply", request=self.request)
                if size == 0:
                    while (await self._read(reader.readuntil(b"\r\n"))) != b"\r\n":
                        pass  # trailers
                    break
                left = size
                while left:
                    chunk = await self._read(reader.readexactly(min(left, READ_CHUNK)))
                    left -= len(chunk)
                    yield chunk
                await self._read(reader.readexactly(2))
        elif self.length is not None:
            left = self.length
            while left:
                chunk = await self._read(reader.readexactly(min(left, READ_CHUNK)))
                left -= len(chunk)
                yield chunk
        else:
            while True:
                chunk = await self._read(reader.read(READ_CHUNK))
                if not chunk:
                    break
                yield chunk
        self.done = True

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.done and self.keep and self.conn.usable():
            self.pool._release(self.conn, self.origin)
        else:
            self.conn.close()
            self.pool._release(None, self.origin)
