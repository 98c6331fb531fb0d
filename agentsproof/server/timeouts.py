"""Read deadlines for ``serve``'s connections, so slow clients cannot hold them.

uvicorn closes an idle keep-alive connection, but a client that sends one byte now and then
is never idle: it could hold a connection (and a file descriptor) for ever. Each connection
here gets a deadline for what it is sending:

* **headers**: from connecting (or from the previous answer on a kept-alive connection),
  a request's headers must be complete within ``header_timeout`` seconds;
* **body**: once the headers are in, the whole body must be within ``body_timeout``, and
  from ``BODY_GRACE`` seconds on it must keep arriving at ``min_rate`` bytes a second on
  average (a body trickled a byte at a time is closed after the grace, whatever its
  declared length; any real upload is far faster);
* **slow uploads**: at most ``max_slow`` bodies may still be arriving after the grace at
  once; past that the one that started first is closed, so trickling clients cannot use
  up the server's connections even within their deadlines.

Past a deadline the client gets ``408 Request Timeout`` (when no answer has started) and
the connection is closed; a request being answered (body read) has no deadline, so a slow
handler is never cut. The protocol is uvicorn's own h11 one with these timers added.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import RequestResponseCycle

TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\ncontent-length: 16\r\n\r\nrequest timeout\n"
)


BODY_GRACE = 5.0
"""Seconds a body may arrive at any pace before its rate is checked (and before it counts as a slow upload)."""
RATE_CHECK = 1.0
"""Seconds between checks of a body's average rate after the grace."""


def timed_protocol(header_timeout: float, body_timeout: float, min_rate: float = 1024.0, max_slow: int = 32) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol class with the header and body deadlines, the body's least
    rate and the cap on slow uploads (kept per server, in this closure)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    slow: dict[Any, float] = {}  # protocol -> when its body began, for bodies past the grace (insertion order = age)

    class TimedH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._timer: asyncio.TimerHandle | None = None
            self._rate_timer: asyncio.TimerHandle | None = None
            self._phase = ""
            self._timed_cycle: RequestResponseCycle | None = None
            self._body_start = 0.0
            self._body_bytes = 0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._update()

        def data_received(self, data: bytes) -> None:
            if self._phase == "body":
                self._body_bytes += len(data)
            super().data_received(data)
            self._update()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._update()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel()
            super().connection_lost(exc)

        # -- the deadlines -----------------------------------------------------------
        def _update(self) -> None:
            """Arm the timer the connection's state calls for (a phase keeps its first deadline)."""
            if self.transport is None or self.transport.is_closing():
                return
            cycle = self.cycle
            if cycle is None or cycle.response_complete:
                if self._phase != "headers":
                    self._arm("headers", header_timeout, None)
            elif cycle.more_body:
                if self._phase != "body" or self._timed_cycle is not cycle:
                    self._arm("body", body_timeout, cycle)
            elif self._phase != "answering":
                self._cancel()
                self._phase = "answering"

        def _arm(self, phase: str, seconds: float, cycle: RequestResponseCycle | None) -> None:
            self._cancel()
            self._phase, self._timed_cycle = phase, cycle
            self._timer = self.loop.call_later(seconds, self._expired)
            if phase == "body":
                self._body_start, self._body_bytes = self.loop.time(), 0
                self._rate_timer = self.loop.call_later(min(BODY_GRACE, seconds), self._check_rate)

        def _cancel(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._rate_timer is not None:
                self._rate_timer.cancel()
                self._rate_timer = None
            slow.pop(self, None)

        def _check_rate(self) -> None:
            """After the grace: close a body arriving slower than ``min_rate`` on average, else
            count it as a slow upload (closing the oldest past ``max_slow``) and look again soon."""
            self._rate_timer = None
            if self._phase != "body" or self.transport is None or self.transport.is_closing():
                return
            elapsed = self.loop.time() - self._body_start
            if self._body_bytes < min_rate * elapsed and not self.flow.read_paused:  # (paused: the app is behind, not the client)
                self._expired()
                return
            if self not in slow:
                slow[self] = self._body_start
                while len(slow) > max_slow:
                    oldest = next(iter(slow))
                    slow.pop(oldest)
                    oldest._expired()
                if self not in slow:
                    return
            self._rate_timer = self.loop.call_later(RATE_CHECK, self._check_rate)

        def _expired(self) -> None:
            self._cancel()
            if self.transport is None or self.transport.is_closing():
                return
            cycle = self.cycle if self._phase == "body" else None
            if cycle is not None:
                if cycle.response_started:
                    cycle.disconnected = True
                    self.transport.close()
                    return
                cycle.disconnected = True  # the handler now sees the client gone; its answer is dropped
            self._unset_keepalive_if_required()
            self.transport.write(TIMEOUT_RESPONSE)
            self.transport.close()

    return TimedH11Protocol
