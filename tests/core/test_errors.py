"""core/errors: the one line a user sees and the exit code each error gives."""

from __future__ import annotations

import pytest

from agentsproof.core.errors import (
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_OK,
    AgentsproofError,
    InputError,
    LLMError,
    OutputError,
    ProviderUnavailable,
    RunAborted,
    TargetError,
)


def test_exit_codes() -> None:
    assert (EXIT_OK, EXIT_FAILED, EXIT_ERROR) == (0, 1, 30)
    for cls in (InputError, ProviderUnavailable, RunAborted, OutputError):
        assert issubclass(cls, AgentsproofError) and cls.exit_code == EXIT_ERROR


@pytest.mark.parametrize("source, field, line", [
    ("eval.yaml", "graders[0].type", "eval.yaml: graders[0].type: bad"),
    ("eval.yaml", None, "eval.yaml: bad"),
    (None, "--parallel", "input: --parallel: bad"),
    (None, None, "input: bad"),
    ("", "", "input: bad"),
])
def test_input_error_line(source: str | None, field: str | None, line: str) -> None:
    err = InputError(source, field, "bad")
    assert str(err) == err.format() == line
    assert (err.source, err.field, err.message) == (source, field, "bad")


def test_an_llm_error_carries_what_the_retry_needs() -> None:
    err = LLMError("429 Too Many Requests", retryable=True, status=429, retry_after=1.5, kind="rate_limit")
    assert str(err) == "429 Too Many Requests"
    assert (err.retryable, err.status, err.retry_after, err.kind) == (True, 429, 1.5, "rate_limit")
    plain = LLMError("boom")
    assert (plain.retryable, plain.status, plain.retry_after, plain.kind) == (False, None, None, "error")


def test_a_target_error_is_an_errored_trial_not_an_input_error() -> None:
    err = TargetError("the agent crashed")
    assert isinstance(err, LLMError) and not isinstance(err, AgentsproofError)
    assert str(err) == "the agent crashed" and err.retryable is False


def test_isolation_failures_have_their_own_types_under_the_trial_base() -> None:
    """A seed or container failure is not a provider's (not an LLMError); every trial failure is a TrialError."""
    from agentsproof.core.errors import ContainerError, IsolationError, SeedError, TrialError

    for cls in (SeedError, ContainerError):
        err = cls("the container could not be started", kind="limit")
        assert isinstance(err, IsolationError) and isinstance(err, TrialError)
        assert not isinstance(err, LLMError) and not isinstance(err, AgentsproofError) and err.kind == "limit"
    assert issubclass(LLMError, TrialError) and issubclass(TargetError, LLMError)  # `except LLMError` still catches a target's failure
