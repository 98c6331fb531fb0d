"""What every grader is: a config model, one async function, and what it needs.

A grader type is one module under ``agentsproof/grading/`` that defines its eval.yaml
config (a pydantic model with ``type: Literal["<name>"]``), an async ``grade(spec, given)``
and a module-level ``GRADER = GraderEntry(...)`` tying them together, plus one line in
:mod:`agentsproof.grading.registry`. The runner, the oracle preflight, ``lint``,
``convert``, the eval-file models and the reports find it from there and ask its hooks
(the fields below; each has a default); nothing else changes.
"""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentsproof.grading.context import TrialContext, judged_response
from agentsproof.grading.hooks import ConvertCase, LintCase, LintFact
from agentsproof.grading.judge import Judge
from agentsproof.model.results import GraderResult


@dataclass(frozen=True)
class GradeInput:
    """One trial as a grader receives it."""

    answer: str
    """The final answer."""
    context: TrialContext
    """What the trial left besides the answer (workspace, files, trajectory, skill use)."""
    judge: Judge | None
    """The LLM judge (None when no grader of the run needs one)."""
    task: str
    """The instruction the trial answered."""

    def judged_answer(self) -> str:
        """What an LLM judge reads: the answer, then the files an agent produced."""
        return judged_response(self.answer, self.context)

    def need_judge(self) -> Judge:
        """The trial's judge; RuntimeError when the run has none (the registry's ``judged`` says which graders need one)."""
        if self.judge is None:
            raise RuntimeError("an LLM grader needs a judge")
        return self.judge


GradeFn = Callable[[Any, GradeInput], Awaitable[GraderResult]]


@dataclass(frozen=True)
class GraderEntry:
    """A grader type as the registry knows it."""

    type: str
    """The ``type:`` of its eval.yaml config, and its key in the registry."""
    config: builtins.type[BaseModel]  # builtins: ``type`` here is the field above
    """Its eval.yaml model (strict; ``type: Literal[...]`` is the union's discriminator)."""
    grade: GradeFn | None
    """``await grade(spec, given)`` → a GraderResult; None for a grader judged per pair
    after both arms ran (``per_pair``)."""
    judged: bool = False
    """It asks the LLM judge (a run with such a grader builds one)."""
    asks_judge: Callable[[Any], bool] | None = None
    """``asks_judge(spec)``: this one grader asks the judge though its type does not (a script
    given agentv's provider proxy): the run then builds one too."""
    agent_only: bool = False
    """It reads what only an agent trial has (a workspace, skill loading): refused in a chat eval."""
    runs_last: bool = False
    """It may change the workspace: runs after the other graders have read it, one at a time."""
    per_pair: bool = False
    """Judged on the two arms' answers together after the runner (not part of a trial's score)."""
    judge_texts: Callable[[Any], Sequence[str]] | None = None
    """The texts its judge calls add to each prompt, one per call (for ``--plan``'s estimate)."""
    rewrite: Callable[[Any], Any] | None = None
    """Applied to a raw grader mapping before the type is read (another tool's spelling of it)."""
    lint: Callable[[Any, LintCase], Iterable[LintFact]] | None = None
    """``lint(spec, case)`` → what ``agentsproof lint`` checks in its config without a model
    (:mod:`agentsproof.grading.hooks`); None: the checks every grader gets (weights) only."""
    to_agentevals: Callable[[Any, ConvertCase], list[Any]] | None = None
    """``to_agentevals(spec, case)`` → its EVAL.yaml assertions for ``convert`` (warnings in
    ``case``); None: it has no EVAL.yaml form and is left out with a warning saying so."""
    oracle_checked: bool = True
    """The oracle preflight runs it on the oracle's output; False for a grader that reads what
    a reference command cannot leave (a trajectory, skill loading). A ``per_pair`` one never is."""
    grade_answer: Callable[[str, Any], GraderResult] | None = None
    """``grade_answer(answer, spec)``: graded at once from the answer alone (no judge, no
    workspace); eval-generate checks a generated reference answer with it."""
    logged: bool = True
    """The runner adds its score and reasoning to the trial's log (False: its checks say it all)."""
    reads_workspace: bool = False
    """It reads the files in the trial's workspace: ``regrade`` rebuilds the workspace from the
    recorded files for it, and an imported trajectory without files cannot be graded by it."""

    @property
    def checks_oracle(self) -> bool:
        """The oracle preflight grades the oracle's output with it."""
        return self.oracle_checked and not self.per_pair


@dataclass
class Nested:
    """What a grader made of other graders (``composite``) needs of the registry and the grading
    loop, filled in by them when they load (so it imports neither)."""

    configs: Callable[[list[Any]], list[Any]] | None = None
    """Raw grader mappings → their validated configs (:mod:`agentsproof.grading.registry`)."""
    grade_all: Callable[..., Awaitable[list[GraderResult]]] | None = None
    """``await grade_all(answer, graders, judge, task, context=…)`` (:mod:`agentsproof.grading.grade`)."""


NESTED = Nested()
