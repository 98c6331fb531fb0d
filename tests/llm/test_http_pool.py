"""The pooled HTTP/1.1 transport under the lean OpenAI-compatible path, against a raw
asyncio server on loopback that scripts the bytes: keep-alive reuse, a kept-alive
connection the server closed, chunked and read-to-close bodies, broken replies, the
connection limit."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from agentsproof.llm.base import ChatRequest, LLMError
from agentsproof.llm.http_pool import PoolTransport, lean_transport
from agentsproof.llm.openai_http import OpenAIHttpClient

MSGS = [{"role": "user", "content": "hello"}]
BODY = json.dumps({"choices": [{"message": {"content": "pong"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()


class RawServer:
    """Answers each request with ``reply(n, conn_no)`` bytes; counts connections."""

    def __init__(self, reply, close_after: int | None = None, delay: float = 0.0):
        self.reply, self.close_after, self.delay = reply, close_after, delay
        self.connections = 0
        self.open = 0
        self.max_open = 0
        self.requests = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open += 1
        self.max_open = max(self.max_open, self.open)
        conn_no, served = self.connections, 0
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = int(next((ln.split(b":")[1] for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length")), b"0"))
                json.loads(await reader.readexactly(length))
                self.requests += 1
                served += 1
                if self.delay:
                    await asyncio.sleep(self.delay)
                out = self.reply(self.requests, conn_no)
                if out is None:
                    return
                writer.write(out)
                await writer.drain()
                if self.close_after is not None and served >= self.close_after:
                    return
        finally:
            self.open -= 1
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"

    async def __aexit__(self, *exc) -> None:
        self.server.close()


def ok(body: bytes = BODY, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n" % (len(body), extra) + body


async def call(url: str, n: int = 1, **kw) -> list:
    c = OpenAIHttpClient(base_url=url, api_key="k", **kw)
    try:
        return await asyncio.gather(*(c.complete(ChatRequest(messages=MSGS, model="m", timeout=5)) for _ in range(n)), return_exceptions=True)
    finally:
        await c.aclose()


async def test_keep_alive_reuses_one_connection():
    srv = RawServer(lambda n, c: ok())
    async with srv as url:
        c = OpenAIHttpClient(base_url=url, api_key="k")
        try:
            for _ in range(5):
                assert (await c.complete(ChatRequest(messages=MSGS, model="m"))).text == "pong"
        finally:
            await c.aclose()
    assert (srv.requests, srv.connections) == (5, 1)


async def test_a_kept_alive_connection_the_server_closed_is_replaced():
    srv = RawServer(lambda n, c: ok(), close_after=1)  # the server closes after every reply, without saying so
    async with srv as url:
        c = OpenAIHttpClient(base_url=url, api_key="k")
        try:
            for _ in range(3):
                assert (await c.complete(ChatRequest(messages=MSGS, model="m"))).text == "pong"
                await asyncio.sleep(0.01)
        finally:
            await c.aclose()
    assert srv.requests == 3 and srv.connections == 3


async def test_connection_close_header_is_obeyed():
    srv = RawServer(lambda n, c: ok(extra=b"Connection: close\r\n"))
    async with srv as url:
        results = [r.text for r in await call(url)] + [r.text for r in await call(url)]
    assert results == ["pong", "pong"] and srv.connections == 2


async def test_chunked_with_trailers_and_read_to_close_bodies():
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"".join(
        b"%x;ext=1\r\n%s\r\n" % (len(BODY[i : i + 7]), BODY[i : i + 7]) for i in range(0, len(BODY), 7)
    ) + b"0\r\nX-Trailer: 1\r\n\r\n"
    srv = RawServer(lambda n, c: chunked)
    async with srv as url:
        (r,) = await call(url)
    assert r.text == "pong"
    srv = RawServer(lambda n, c: b"HTTP/1.0 200 OK\r\n\r\n" + BODY, close_after=1)
    async with srv as url:
        (r,) = await call(url)
    assert r.text == "pong"


@pytest.mark.parametrize(
    "reply, reason",
    [
        (b"garbage\r\n\r\n", "connection error: malformed status line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n{}", "connection error: peer closed connection"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "connection error: malformed chunked encoding"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "connection error: malformed Content-Length"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", "connection error: the reply's headers are too large"),
        (None, "connection error: Server disconnected without sending a response."),
    ],
    ids=["status-line", "short-body", "bad-chunk", "bad-length", "huge-headers", "dropped"],
)
async def test_broken_replies_are_retryable_connection_errors(reply, reason):
    srv = RawServer(lambda n, c: reply, close_after=1)
    async with srv as url:
        (err,) = await call(url)
    assert isinstance(err, LLMError) and err.kind == "connection" and err.retryable and str(err).startswith(reason), err


async def test_read_timeout_is_a_timeout():
    srv = RawServer(lambda n, c: ok(), delay=2)
    async with srv as url:
        c = OpenAIHttpClient(base_url=url, api_key="k")
        try:
            with pytest.raises(LLMError) as err:
                await c.complete(ChatRequest(messages=MSGS, model="m", timeout=0.2))
        finally:
            await c.aclose()
    assert err.value.kind == "timeout" and str(err.value) == "request timed out"


async def test_the_connection_limit_holds_and_every_call_completes():
    srv = RawServer(lambda n, c: ok(), delay=0.02)
    async with srv as url:
        results = await call(url, n=20, max_connections=3)
    assert [r.text for r in results] == ["pong"] * 20
    assert srv.max_open <= 3 and srv.connections <= 3


async def test_an_unread_body_closes_its_connection_and_frees_the_slot():
    srv = RawServer(lambda n, c: ok())
    async with srv as url:
        client = httpx.AsyncClient(transport=PoolTransport(1))
        try:
            async with client.stream("POST", url, json={}) as resp:
                assert resp.status_code == 200  # closed without reading the body
            r = await client.post(url, json={})
            assert r.json()["choices"][0]["message"]["content"] == "pong"
        finally:
            await client.aclose()
    assert srv.connections == 2


def test_a_configured_proxy_keeps_httpx_transport(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert isinstance(lean_transport(4), PoolTransport)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    assert lean_transport(4) is None
