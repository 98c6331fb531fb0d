"""A grader is one module plus one registry line: lint, convert, the oracle and the runner
treat a grader they have never heard of through the hooks of its registered entry
(``GraderEntry``), with no edit anywhere else.

The throwaway ``word_count`` grader below lives in a module made here and is registered
by adding its line to ``GRADERS`` (monkeypatched); nothing else of the package is touched.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import Field

from agentsproof.grading import registry
from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.grading.deterministic import DeterministicGrader
from agentsproof.grading.hooks import ConvertCase, Finding, LintCase, LintFact, Needle
from agentsproof.model.graders import Strict
from agentsproof.model.results import CheckResult, GraderResult


class WordCountGrader(Strict):
    type: Literal["word_count"]
    max_words: int
    weight: float = Field(1.0, gt=0)


def _count(answer: str, spec: WordCountGrader) -> GraderResult:
    n = len(answer.split())
    check = CheckResult(kind="max_words", target=str(spec.max_words), passed=n <= spec.max_words, evidence=f"{n} words")
    return GraderResult(type="word_count", weight=spec.weight, score=1.0 if check.passed else 0.0, checks=[check], reasoning=f"{n} words")


async def _grade(spec: WordCountGrader, given: GradeInput) -> GraderResult:
    return _count(given.answer, spec)


def _lint(spec: WordCountGrader, case: LintCase) -> Iterator[LintFact]:
    if spec.max_words <= 0:
        yield Finding(f"{case.where}.max_words", "impossible-check", "no answer has fewer than one word", "allow at least one word")
    yield Needle(("answer", None), "the answer", False, "TODO", False, f"{case.where}.no_todo")  # a word it refuses


def _to_agentevals(spec: WordCountGrader, case: ConvertCase) -> list[Any]:
    case.warn(f"{case.where}: word-count is an agentsproof extension")
    return [{"type": "javascript", "value": f"output.split(/\\s+/).length <= {spec.max_words}", **case.weight}]


WORD_COUNT = GraderEntry(type="word_count", config=WordCountGrader, grade=_grade, lint=_lint, to_agentevals=_to_agentevals)
BARE = GraderEntry(type="word_count", config=WordCountGrader, grade=_grade)  # every hook left at its default


@pytest.fixture
def register(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Registers ``GRADER`` of a throwaway module under ``word_count``: one line in GRADERS."""
    module = types.ModuleType("throwaway_word_count")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(registry.GRADERS, "word_count", f"{module.__name__}:GRADER")

    def use(entry: GraderEntry) -> None:
        module.GRADER = entry  # type: ignore[attr-defined]
        registry.entry.cache_clear()

    registry.entry.cache_clear()
    yield use
    registry.entry.cache_clear()


def test_lint_asks_the_graders_lint_hook(register: Any, tmp_path: Path) -> None:
    from agentsproof.formats.lint.checks import CaseView, FileView, check_file

    register(WORD_COUNT)
    graders = [WordCountGrader(type="word_count", max_words=0), DeterministicGrader(type="deterministic", checks=["Fix the TODO list"])]
    case = CaseView(field="tasks[0]", name="t", prompt="p", graders=graders)
    problems = [p for p in check_file(FileView("eval.yaml", tmp_path / "eval.yaml", [case])) if p.rule != "too-few-cases"]
    assert [(p.field, p.rule) for p in problems] == [
        ("tasks[0].graders[0].max_words", "impossible-check"),  # its own finding
        ("tasks[0].graders[0].no_todo", "impossible-check"),  # its needle paired with another grader's
    ]
    assert "the answer must contain 'Fix the TODO list' (tasks[0].graders[1].checks.mustContain[0]), which contains 'TODO'" in problems[1].message

    register(BARE)  # no lint hook: only the checks every grader gets
    problems = [p for p in check_file(FileView("eval.yaml", tmp_path / "eval.yaml", [case])) if p.rule != "too-few-cases"]
    assert problems == []


def test_convert_asks_the_graders_hook_or_says_it_is_left_out(register: Any) -> None:
    from agentsproof.interop.convert import _grader_to_asserts

    register(WORD_COUNT)
    warnings: list[str] = []
    spec = WordCountGrader(type="word_count", max_words=5, weight=2.0)
    assert _grader_to_asserts(spec, "tasks[0].graders[0]", "s", warnings) == [
        {"type": "javascript", "value": "output.split(/\\s+/).length <= 5", "weight": 2.0}
    ]
    assert warnings == ["tasks[0].graders[0]: word-count is an agentsproof extension"]

    register(BARE)
    warnings = []
    assert _grader_to_asserts(spec, "tasks[0].graders[0]", "s", warnings) == []
    assert warnings == ["tasks[0].graders[0]: a 'word_count' grader has no EVAL.yaml form; it is left out"]


async def test_the_oracle_grades_with_it_unless_its_entry_says_not(register: Any, tmp_path: Path) -> None:
    from agentsproof.executor.oracle import OracleTask, answer_failures, check_oracle
    from agentsproof.model.oracle import Oracle

    register(WORD_COUNT)
    task = OracleTask("t", "oracle", "Answer briefly.", [WordCountGrader(type="word_count", max_words=2)], Oracle(answer="far too many words"))
    out = await check_oracle(task, eval_dir=tmp_path, judge=None, threshold=1.0, timeout=None)
    assert out.failing == ["graders[0] (word_count): max_words '2': 4 words"] and out.skipped == []
    assert answer_failures("far too many words", task.graders) == []  # no grade_answer hook: not an instant grader

    from dataclasses import replace

    register(replace(WORD_COUNT, oracle_checked=False, grade_answer=_count))
    out = await check_oracle(task, eval_dir=tmp_path, judge=None, threshold=1.0, timeout=None)
    assert out.failing == [] and out.skipped == ["graders[0] (word_count)"]
    assert answer_failures("far too many words", task.graders) == ["graders[0] (word_count): max_words '2': 4 words"]


async def test_the_runner_grades_and_logs_it_through_its_entry(register: Any, scripted_server: Any) -> None:
    from dataclasses import replace

    from agentsproof.executor.runner import DualArmRunner, Scheduling
    from agentsproof.llm.openai_http import openai_client
    from agentsproof.model.items import EvalItem
    from agentsproof.targets.chat.target import ChatTarget

    item = EvalItem(id="s/t", name="t", kind="skill", source_path="SKILL.md", system_prompt="Be brief.", task_name="t", prompt="Say OK.",
                    graders=[WordCountGrader(type="word_count", max_words=3)], trials=1, timeout=30, threshold=0.5)
    for entry, logged in ((WORD_COUNT, True), (replace(WORD_COUNT, logged=False), False)):
        register(entry)
        client = openai_client(base_url=scripted_server.base_url, api_key="sk-test")
        try:
            run = await DualArmRunner({"chat": ChatTarget(client, "m")}, Scheduling(), judge=None).run_item(item)
        finally:
            await client.aclose()
        trial = run.with_arm.trials[0]
        assert trial.status == "scored", trial.error
        assert [(g.type, g.score) for g in trial.graders] == [("word_count", 1.0)]  # scored by its grade hook ("OK": 1 word)
        judge_lines = [e.text for e in trial.log if e.role == "judge"]
        assert judge_lines == (["word_count: score 1.00: 1 words"] if logged else [])


def test_regrade_rebuilds_the_workspace_for_it_when_its_entry_says_it_reads_one(register: Any) -> None:
    from dataclasses import replace

    from agentsproof.executor.regrade import _needs_workspace

    spec = WordCountGrader(type="word_count", max_words=3)
    register(WORD_COUNT)
    assert _needs_workspace([spec]) == []
    register(replace(WORD_COUNT, reads_workspace=True))
    assert _needs_workspace([spec]) == ["word_count"]
