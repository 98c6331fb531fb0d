"""What a run asks of its client, as Protocols, so that the SDK's imports only go down.

``client.py`` (``AgentsProof``) sits at the top and imports ``run.py`` and ``suite.py``; a
run and a suite never import the client back, not even for type hints: they are typed
against ``RunClient`` here (and ``suite.SuiteClient``), which ``AgentsProof`` satisfies
structurally. This module imports only the SDK's bottom layer (transport, worker, usage).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agentsproof.sdk.transport import Transport, TransportError
from agentsproof.sdk.usage import Prices
from agentsproof.sdk.worker import BackgroundWorker


@runtime_checkable
class TrackedRun(Protocol):
    """An open run as the client keeps it: at process exit, spooled if the server lacks it."""

    def _needs_spool(self) -> bool: ...

    def _spool(self, *, completed: bool, reason: str) -> dict[str, Any]: ...


@runtime_checkable
class RunClient(Protocol):
    """The client state and hooks an ``AgentRun`` uses (all of them ``AgentsProof``'s)."""

    base_url: str
    flush_timeout: float
    complete_timeout: float
    _transport: Transport
    _worker: BackgroundWorker
    _prices: Prices | None
    _spool_dir: Path | None
    _last_error: str | None

    def _online(self) -> bool:
        """False while background sends pause after a connection failure."""
        ...

    def _failed(self, err: TransportError) -> None:
        """Record a failed request (may pause sending; warns once per kind)."""
        ...

    def _warn_once(self, key: str, msg: str, *args: Any) -> None:
        """Log ``msg % args`` as a warning, once per ``key`` for this client."""
        ...

    def _track(self, run: TrackedRun) -> None:
        """Remember an open run, to spool it at exit if it never completes."""
        ...

    def _forget(self, run: TrackedRun) -> None:
        """Stop tracking a run (completed or spooled)."""
        ...


__all__ = ["RunClient", "TrackedRun"]
