"""Errors that the CLI turns into exit codes.

``InputError`` is anything the user can fix in a file or flag (exit 30).
``ProviderUnavailable`` means no usable LLM provider could be set up (exit 30).
``LLMError`` (and ``TargetError``, its kind for agent targets) is one trial's failure:
the trial is *errored* with that reason, never failed; the run goes on.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_ERROR = 30


class AgentsproofError(Exception):
    """Base class; ``str(err)`` is the one line shown to the user."""

    exit_code = EXIT_ERROR


class InputError(AgentsproofError):
    """Invalid or missing input: a file, a field, a flag."""

    def __init__(self, source: str | None, field: str | None, message: str):
        self.source = source
        self.field = field
        self.message = message
        super().__init__(self.format())

    def format(self) -> str:
        """The one-line message: ``source: field: message`` (``input`` when no source is known)."""
        where = self.source or "input"
        if self.field:
            return f"{where}: {self.field}: {self.message}"
        return f"{where}: {self.message}"


class ProviderUnavailable(AgentsproofError):
    """No provider could be configured or reached before the run started."""


class RunAborted(AgentsproofError):
    """The run stopped early (too many errored trials in a row)."""


class OutputError(AgentsproofError):
    """A report could not be written (unwritable --output, disk full)."""


class TrialError(Exception):
    """A failure that errors one trial, never the run: ``str(err)`` is the reason shown on it.

    The common base of :class:`LLMError` (a provider call failed; :class:`TargetError`, an
    agent target could not answer, is one) and :class:`IsolationError` (where the trial runs
    could not be made or used: :class:`SeedError` for its workspace and seed,
    :class:`ContainerError` for its container, the engine, the image, the relay). Code that
    turns any failure of a trial into an errored trial catches this; code about a provider
    call catches :class:`LLMError`."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        kind: str = "error",
    ):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.kind = kind


class LLMError(TrialError):
    """A provider call failed. ``str(err)`` is the reason shown on an errored trial."""


class TargetError(LLMError):
    """The target could not produce an answer (crash, timeout, bad reply): an errored trial."""


class IsolationError(TrialError):
    """Where a trial runs could not be made or used (not the agent's failure, not a provider's): an errored trial."""


class SeedError(IsolationError):
    """The trial's workspace could not be created, or its seed not copied in."""


class ContainerError(IsolationError):
    """The trial's container could not be started or used: the engine, the image, the relay, a copy in or out."""
