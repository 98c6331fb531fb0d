"""``oracle:`` of an eval file or task: a reference solution the graders must accept.

Before any trial, every grader of the task runs on the oracle's output (see
:mod:`agentsproof.executor.oracle`); an eval whose oracle fails a grader is refused with the
failing checks: the check is wrong, or the oracle is.

Forms::

    oracle:
      answer: "The total revenue is 3500."       # a reference final answer
    oracle:
      run: python3 make_summary.py                 # a command run in a fresh copy of the
      # or run: [python3, make_summary.py]         # workspace seed; it makes the expected
      # or script: oracle.py                       # workspace (script: beside the eval file)
      answer: "Wrote summary.md"                   # optional with run/script (default: its stdout)
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator, model_validator

from agentsproof.model.graders import FieldError, Strict, script_path

MAX_ORACLE_TIMEOUT = 3600.0


class Oracle(Strict):
    """A reference solution the graders must accept: an answer, or a command (run or script) that makes the expected workspace."""

    answer: str | None = Field(None, description="A reference final answer the graders must accept.")
    run: str | list[Annotated[str, Field(min_length=1)]] | None = Field(
        None,
        description="A command (sh -c) or argv list run in a fresh copy of the workspace seed, producing the expected workspace; its stdout is the answer unless 'answer' is given.",
    )
    script: str | None = Field(None, min_length=1, description="A script beside the eval file run like 'run' (.py with python3, .sh with sh, else directly).")
    timeout: float = Field(60.0, gt=0, le=MAX_ORACLE_TIMEOUT, allow_inf_nan=False, description="Seconds for run/script.")

    @field_validator("run")
    @classmethod
    def _not_empty(cls, value: str | list[str] | None) -> str | list[str] | None:
        if (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value):
            raise ValueError("is empty; give the command that makes the expected workspace")
        return value

    @field_validator("script")
    @classmethod
    def _script_path(cls, value: str | None) -> str | None:
        return None if value is None else script_path(value)  # the script grader's rule

    @model_validator(mode="after")
    def _one(self) -> Oracle:
        if self.answer is None and self.run is None and self.script is None:
            raise FieldError("answer", "required field is missing; give 'answer' (a reference answer), or 'run'/'script' (a reference command)")
        if self.run is not None and self.script is not None:
            raise FieldError("script", "give 'run' or 'script', not both")
        return self

    @property
    def runs_command(self) -> bool:
        """True when the oracle runs a command (``run`` or ``script``), not only an answer."""
        return self.run is not None or self.script is not None
