"""A minimal OpenAI-compatible chat server on asyncio, for throughput benchmarks only.

tests/openai_server.py (``ThreadingHTTPServer``: a thread per connection, Python's
``http.server`` parsing) is the scripted server the tests need: rules, errors, tool calls.
At 50 calls in flight on a 2-core machine its own CPU is a large part of the wall time,
so a throughput bench measured the server as much as the client (the bare openai SDK
needed 5x the 1.0 s floor of 1,000 calls at 50 ms, 50 at a time). This one answers every
``POST .../chat/completions`` with the same reply after ``--latency`` seconds, on one
event loop, HTTP/1.1 keep-alive, nothing else: the floor is then the clients'.

    python bench/fast_server.py --port 0 --latency 0.05 --port-file /tmp/port [--reply OK] [--replies 'OK|NO|OK ERROR']

``--replies``: each reply one of these, drawn by a seeded random generator (seed 0), so the
trials of a benchmarked report score differently (bench/verify.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import socket
import time
from collections.abc import Callable


def reply_body(text: str, model: str) -> bytes:
    """One chat completion, as the API returns it."""
    return json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        }
    ).encode()


def _quickack(sock: socket.socket | None) -> None:
    if sock is not None and hasattr(socket, "TCP_QUICKACK"):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency: float, text: str | Callable[[], str]) -> None:
    """Serve one connection's requests, one after another (keep-alive). Each read is ACKed at
    once (TCP_QUICKACK): a client that sends its headers and body in two writes (Nagle on)
    would otherwise wait ~40 ms for the delayed ACK of the first before sending the second."""
    sock = writer.get_extra_info("socket")
    try:
        while True:
            _quickack(sock)
            head = await reader.readuntil(b"\r\n\r\n")
            _quickack(sock)
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in lines[1:] if ":" in h)}
            body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
            if method == "POST" and path.rstrip("/").endswith("/chat/completions"):
                model = json.loads(body or b"{}").get("model", "bench-model")
                if latency:
                    await asyncio.sleep(latency)
                status, payload = "200 OK", reply_body(text if isinstance(text, str) else text(), model)
            elif method == "GET" and path.rstrip("/").endswith("/models"):
                status, payload = "200 OK", json.dumps({"object": "list", "data": [{"id": "bench-model", "object": "model"}]}).encode()
            else:
                status, payload = "404 Not Found", b'{"error": {"message": "not found"}}'
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\nConnection: keep-alive\r\n\r\n".encode() + payload
            )
            await writer.drain()
            if headers.get("connection", "").lower() == "close":
                break
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def serve(port: int, latency: float, text: str | Callable[[], str], port_file: str | None) -> None:
    """Listen on 127.0.0.1:``port`` (0: any free port, written to ``port_file``) until killed."""
    server = await asyncio.start_server(lambda r, w: handle(r, w, latency, text), "127.0.0.1", port, backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    if port_file:
        with open(port_file, "w") as fh:
            fh.write(str(bound))
    print(bound, flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    """The command line (the same options as tests/openai_server.py's out-of-process mode)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--reply", default="OK")
    ap.add_argument("--replies", help="'|'-separated replies, each request answered with one drawn at random (seed 0)")
    ap.add_argument("--port-file")
    args = ap.parse_args()
    text: str | Callable[[], str] = args.reply
    if args.replies:
        draw, choices = random.Random(0), args.replies.split("|")
        text = lambda: draw.choice(choices)  # noqa: E731
    try:
        asyncio.run(serve(args.port, args.latency, text, args.port_file))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
