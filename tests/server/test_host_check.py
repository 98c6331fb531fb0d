"""The serve host check (DNS rebinding): starlette's TrustedHostMiddleware decides, our
answer says how to allow a name. Driven over ASGI, no database needed."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.responses import PlainTextResponse

from agentsproof.server.app import LOOPBACK_NAMES, HostCheck, bad_host_pattern, host_patterns


async def _ok(scope, receive, send):
    await PlainTextResponse("ok")(scope, receive, send)


def _get(names: set[str], host: str | None) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=HostCheck(_ok, names))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            req = c.build_request("GET", "/")
            if host is None:
                del req.headers["host"]
            else:
                req.headers["host"] = host
            return await c.send(req)

    return asyncio.run(go())


DEFAULT = {*LOOPBACK_NAMES, "0.0.0.0", "proof.example.org"}


@pytest.mark.parametrize("host", ["localhost", "localhost:8787", "LOCALHOST", "localhost.", "127.0.0.1:1", "[::1]:8787", "[::1]",
                                  "Proof.Example.Org", "proof.example.org.:443"])
def test_allowed_names_are_served(host):
    r = _get(DEFAULT, host)
    assert (r.status_code, r.text) == (200, "ok"), host


@pytest.mark.parametrize("host", ["rebound.example", "rebound.example:8787", "sub.proof.example.org", "127.0.0.2", "[::2]:8787",
                                  "localhost.evil.example", "[::1", "", None])
def test_other_hosts_get_400_saying_how_to_allow_them(host):
    r = _get(DEFAULT, host)
    assert r.status_code == 400, host
    assert r.json() == {"detail": "unknown Host; start the server with --allowed-host NAME to serve it"}


def test_star_serves_any_host_and_a_leading_star_its_subdomains():
    assert _get({"*"}, "anything.example").status_code == 200
    sub = {"*.example.org"}
    assert _get(sub, "a.example.org:80").status_code == 200 and _get(sub, "b.a.example.org").status_code == 200
    assert _get(sub, "example.org.evil").status_code == 400


def test_patterns_and_bad_patterns():
    assert host_patterns({"::1", "localhost", "*.example.org"}) == ["*.example.org", "[::1]", "localhost", "localhost."]
    assert [n for n in ("*", "*.example.org", "a*.example.org", "*example.org", "x.*.org", "*.*.org") if bad_host_pattern(n)] == [
        "a*.example.org", "*example.org", "x.*.org", "*.*.org"]
