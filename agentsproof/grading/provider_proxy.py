"""agentv's provider proxy for a script grader: the run's judge model, reachable from the script.

agentv gives a script with ``provider: {max_calls: N}`` (or ``provider: true``) an HTTP proxy
to its grader model: ``POST /invoke`` (``{question, systemPrompt}`` → ``{output, rawText,
tokenUsage}``), ``POST /invokeBatch`` (``{requests: [...]}`` → ``{responses: [...]}``) and
``GET /info``, behind a bearer token, at most ``max_calls`` calls (agentv's default 50);
its SDK's ``createProviderClient()`` calls it. Here the proxy listens on a unix socket in the
script's own temporary folder (a confined script has no network, but that folder is bound into
its sandbox), and every call goes to the run's judge (``--judge-model``, else ``--model``)
through the judge's client, with the trial's deadline and cache slot: the model reaching the
provider is the one the command line named (a call naming another agentv target, ``provider:
gemini-llm``, is answered by the judge too, with a note). The script's environment gets agentv's
``AGENTV_PROVIDER_PROXY_URL`` / ``AGENTV_PROVIDER_PROXY_TOKEN`` and
``AGENTSPROOF_PROVIDER_PROXY_SOCKET`` (agentsproof's SDK module fetches over it). A call the
provider fails is answered as agentv answers it, and recorded: the grader is then errored with
that reason (a provider failure is never a failing score).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from pathlib import Path
from typing import Any

from agentsproof.grading.judge import Judge
from agentsproof.model.results import Usage

DEFAULT_MAX_CALLS = 50
"""agentv's default ``max_calls``."""
MAX_BODY = 4 * 1024 * 1024
MAX_HEADER_LINES = 100
SOCKET_NAME = "provider.sock"
PROXY_URL = "http://agentv-provider-proxy"
"""What ``AGENTV_PROVIDER_PROXY_URL`` says: the host part is not used (the socket is)."""
LABEL = "judge"


class ProviderProxy:
    """One script run's proxy to ``judge``; ``async with`` starts and stops it."""

    def __init__(self, judge: Judge, folder: Path, max_calls: int):
        self.judge, self.folder, self.max_calls = judge, folder, max_calls
        self.token = secrets.token_hex(32)
        self.calls = 0
        self.usage = Usage()
        self.failure: str | None = None
        """The first provider failure (the grader is errored with it)."""
        self._server: asyncio.AbstractServer | None = None

    @property
    def socket(self) -> Path:
        """The unix socket the proxy listens on (in the script's own folder)."""
        return self.folder / SOCKET_NAME

    def env(self) -> dict[str, str]:
        """The script's proxy variables."""
        return {"AGENTV_PROVIDER_PROXY_URL": PROXY_URL, "AGENTV_PROVIDER_PROXY_TOKEN": self.token, "AGENTSPROOF_PROVIDER_PROXY_SOCKET": str(self.socket)}

    async def __aenter__(self) -> ProviderProxy:
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.socket), limit=MAX_BODY)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                status, body = await self._route(*request)
                data = json.dumps(body).encode("utf-8")
                head = f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                writer.write(head.encode("ascii") + data)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _route(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        if not secrets.compare_digest(headers.get("authorization", ""), f"Bearer {self.token}"):
            return 401, {"error": "Unauthorized"}
        if method == "GET" and target == "/info":
            return 200, {"providerLabel": LABEL, "maxCalls": self.max_calls, "callCount": self.calls, "availableProviderLabels": [LABEL]}
        if method != "POST" or target not in ("/invoke", "/invokeBatch"):
            return 404, {"error": "Not found"}
        try:
            given = json.loads(body or b"{}")
        except ValueError:
            return 400, {"error": "the body is not JSON"}
        if not isinstance(given, dict):
            return 400, {"error": "the body is not a JSON object"}
        if target == "/invoke":
            if self.calls >= self.max_calls:
                return 429, {"error": f"Max calls exceeded (limit: {self.max_calls})"}
            if not isinstance(given.get("question"), str) or not given["question"]:
                return 400, {"error": "Missing required field: question"}
            self._other_provider(given)
            self.calls += 1
            try:
                return 200, await self._invoke(given)
            except Exception as err:  # noqa: BLE001 - answered as agentv answers it, and recorded
                return 500, {"error": self._failed(err)}
        requests = given.get("requests")
        if not isinstance(requests, list):
            return 400, {"error": "Missing required field: requests (array)"}
        if self.calls + len(requests) > self.max_calls:
            return 429, {"error": f"Batch would exceed max calls (current: {self.calls}, batch: {len(requests)}, limit: {self.max_calls})"}
        responses: list[Any] = []
        for req in requests:
            if not isinstance(req, dict) or not isinstance(req.get("question"), str) or not req["question"]:
                responses.append({"output": [], "rawText": "Error: Missing required field: question"})
                continue
            self._other_provider(req)
            self.calls += 1
            try:
                responses.append(await self._invoke(req))
            except Exception as err:  # noqa: BLE001 - answered as agentv answers it, and recorded
                responses.append({"output": [], "rawText": f"Error: {self._failed(err)}"})
        return 200, {"responses": responses}

    def _other_provider(self, req: dict[str, Any]) -> None:
        """agentv lets a call name another of its targets (``provider: gemini-llm``); here the run's judge answers every call (said once)."""
        named = req.get("provider")
        if named in (None, "", LABEL):
            return
        from agentsproof.core.notice import note_once

        text = f"a script asked agentv's provider proxy for {str(named)[:80]!r}: the run's judge model ({self.judge.model}) answers its calls"
        note_once(text, key=("provider-proxy", str(named), self.judge.model))

    def _failed(self, err: Exception) -> str:
        reason = " ".join(f"{type(err).__name__}: {err}".split())[:400]
        if self.failure is None:
            self.failure = f"the script's call to the judge model failed: {reason}"
        return reason

    async def _invoke(self, req: dict[str, Any]) -> dict[str, Any]:
        from agentsproof.grading.judge import _call
        from agentsproof.llm.base import ChatRequest

        messages = []
        system = req.get("systemPrompt")
        if isinstance(system, str) and system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": req["question"]})
        judge = self.judge
        request = ChatRequest(messages=messages, model=judge.model, temperature=0.0, timeout=judge.timeout, deadline=judge.deadline, slot=judge.slot)
        reply = await _call(judge, request)
        self.usage = self.usage + reply.usage
        tokens = {"input": reply.usage.prompt_tokens, "output": reply.usage.completion_tokens}
        return {"output": [{"role": "assistant", "content": reply.text}], "rawText": reply.text, "tokenUsage": tokens}


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    """One HTTP/1.1 request (method, path, lower-cased headers, body), or None at the end of the connection."""
    line = await reader.readline()
    if not line:
        return None
    parts = line.decode("latin-1").split()
    if len(parts) < 2:
        raise ValueError("not an HTTP request")
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADER_LINES):
        raw = await reader.readline()
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    if length < 0 or length > MAX_BODY:
        raise ValueError("body too large")
    body = await reader.readexactly(length) if length else b""
    return parts[0].upper(), parts[1], headers, body


def proxy_for(max_calls: int | None, judge: Judge | None, folder: Path) -> Any:
    """The proxy for one run of a script given ``max_calls`` (an async context; it gives None
    when the script has no proxy or the run no judge)."""
    if max_calls is None or judge is None:
        return contextlib.nullcontext(None)
    return ProviderProxy(judge, folder, max_calls)
