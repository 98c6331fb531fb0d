"""Checks on a file's cases and their graders, the same for every format.

A format's adapter (:mod:`.lint`) turns its file into :class:`CaseView` values (where each
case and grader is in the file, its prompt, its workspace seed); the checks here find what
no model is needed to know: checks that cannot pass, graders with nothing to check,
missing or unreadable fixtures and scripts, duplicate names, too few cases, and
instructions that quote the skill. What a grader's config says is its own ``lint`` hook's
to tell (:mod:`agentsproof.grading.hooks`); here the facts of a case's graders are put
together (a text one must contain and another must not) and turned into problems.
"""

from __future__ import annotations

import os
import re
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentsproof.formats.lint.problems import MIN_CASES, Problem
from agentsproof.formats.lint.regexes import impossible
from agentsproof.grading.hooks import Finding, LintCase, LintFact, Needle, Patterns

if TYPE_CHECKING:
    from agentsproof.model.graders import GraderSpec

MAX_FIXTURE_FILES = 10_000
QUOTE_LINE_CHARS = 40
"""A skill line at least this long found verbatim in an instruction is a quote."""
QUOTE_TOTAL_CHARS = 120


@dataclass
class CaseView:
    """One case of a file as the checks see it: where it is, its prompt, its graders (and where each is) and its workspace seed."""

    field: str
    """Where the case is in the file, e.g. ``tasks[2]``."""
    name: str
    prompt: str
    graders: Sequence[GraderSpec]
    grader_fields: Sequence[str] = ()
    workspace: Path | None = None
    prompt_field: str = "instruction"


@dataclass
class FileView:
    """One eval file as the checks see it: its cases, the skill's text, and the words the file uses for them."""

    file: str
    path: Path
    cases: list[CaseView]
    skill_text: str = ""
    agent_mode: bool = False
    case_word: str = "task"
    cases_field: str = "tasks"
    """Where the file lists its cases (``tasks``, ``evals``, ``tests``)."""
    exact_fields: bool = True
    """False: the graders were built from the file's assertions, so a problem names the
    assertion list (``tests[0].assert``), not a grader's field inside it."""
    notes: list[Problem] = field(default_factory=list)


def check_file(view: FileView) -> list[Problem]:
    """Every problem found in ``view`` without a model: case names, too few cases, and each case's graders, fixtures and quotes of the skill."""
    out: list[Problem] = []
    out += _case_names(view)
    out += _too_few(view)
    seeds: set[Path] = set()
    for case in view.cases:
        out += _case(view, case)
        if case.workspace is not None and case.workspace not in seeds:
            seeds.add(case.workspace)
            out += _fixtures(view, case)
    if not view.exact_fields:
        out = [_coarse(view, p) for p in out]
    return out


def _coarse(view: FileView, p: Problem) -> Problem:
    from dataclasses import replace

    for case in view.cases:
        for at in case.grader_fields:
            if p.field.startswith(at + "."):
                return replace(p, field=at)
    return p


def _gfield(case: CaseView, j: int) -> str:
    if j < len(case.grader_fields):
        return case.grader_fields[j]
    return f"{case.field}.graders[{j}]"


def _case_names(view: FileView) -> list[Problem]:
    seen: dict[str, str] = {}
    out = []
    for case in view.cases:
        key = case.name.strip().casefold()
        if key in seen:
            out.append(
                Problem(
                    view.file,
                    f"{case.field}.name" if view.case_word == "task" else case.field,
                    "duplicate-case",
                    f"{case.name!r} is also the name of {seen[key]}",
                    "give every case its own name",
                )
            )
        else:
            seen[key] = case.field
    return out


def _too_few(view: FileView) -> list[Problem]:
    n = len(view.cases)
    if n >= MIN_CASES:
        return []
    word = "tasks" if view.case_word == "task" else "cases"
    at = "task" if n == 1 and view.cases[0].field == "task" else view.cases_field
    return [
        Problem(
            view.file,
            at,
            "too-few-cases",
            f"has {n} {view.case_word}{'s' if n != 1 else ''}; fewer than {MIN_CASES} cannot show the skill helps beyond one example",
            f"add {MIN_CASES - n} more {word} that need the skill in different ways (or accept the warning for a smoke test)",
            "warning",
        )
    ]


def _fold(text: str, sensitive: bool) -> str:
    return text if sensitive else text.casefold()


def _facts(view: FileView, case: CaseView, where: str, g: GraderSpec) -> Iterator[LintFact]:
    """What the grader's own lint hook says (:mod:`agentsproof.grading.hooks`); nothing for an unregistered type."""
    from agentsproof.grading.registry import find

    name = getattr(g, "type", "")
    found = find(name) if isinstance(name, str) else None  # a plugin's grader too
    hook = found.lint if found is not None else None
    if hook is not None:
        yield from hook(g, LintCase(where, view.path, view.agent_mode, case.workspace))


def _case(view: FileView, case: CaseView) -> Iterator[Problem]:
    f = view.file
    contains: dict[tuple[str, Hashable], list[Needle]] = {}  # by place (an answer's turn, a file), each in the order first seen
    excludes: dict[tuple[str, Hashable], list[Needle]] = {}
    exists: dict[str, str] = {}
    absent: dict[str, str] = {}
    total_weight = 0.0
    for j, g in enumerate(case.graders):
        total_weight += float(getattr(g, "weight", 1.0) or 0.0)
        for fact in _facts(view, case, _gfield(case, j), g):
            if isinstance(fact, Finding):
                yield Problem(f, fact.field, fact.rule, fact.message, fact.fix, fact.severity)
            elif isinstance(fact, Patterns):
                yield from _regexes(f, fact.field, fact.patterns)
            elif isinstance(fact, Needle):
                (contains if fact.present else excludes).setdefault(fact.scope, []).append(fact)
            else:
                (exists if fact.exists else absent)[fact.glob] = fact.field
    if not case.graders:  # it runs (score 1.0 in both arms, its outputs side by side) but cannot show a difference
        yield Problem(
            f,
            case.field,
            "nothing-to-check",
            "has nothing to check: it scores 1.0 in both arms, so it cannot show a difference (its outputs are shown side by side)",
            "give it an assertion or an expected output, or keep it to read the outputs",
            "warning",
        )
    if case.graders and total_weight <= 0:
        yield Problem(
            f, f"{case.field}.graders", "zero-weight", "the weights sum to zero: every score would be 0/0", "give at least one grader a positive weight"
        )
    for scope in sorted(contains, key=lambda s: s[0]):  # answers before files; stable: each in the order first seen
        needles = contains[scope]
        banned = excludes.get(scope, []) + (excludes.get(needles[0].within, []) if needles[0].within is not None else [])
        yield from _conflicts(f, needles, banned, needles[0].label)
    for glob, at in exists.items():
        if glob in absent:
            yield Problem(f, absent[glob], "impossible-check", f"{glob!r} must exist ({at}) and be absent", "keep one of the two")
    yield from _quotes(view, case)


def _conflicts(f: str, contains: list[Needle], excludes: list[Needle], what: str) -> Iterator[Problem]:
    for a in contains:
        needle, cs_a, at_a = a.text, a.case_sensitive, a.field
        for b in excludes:
            bad, cs_b, at_b = b.text, b.case_sensitive, b.field
            sensitive = cs_a and cs_b
            if _fold(bad, sensitive) in _fold(needle, sensitive):
                same = _fold(bad, sensitive) == _fold(needle, sensitive)
                msg = (
                    f"{what} must contain {needle!r} ({at_a}) and must not contain it"
                    if same
                    else f"{what} must contain {needle!r} ({at_a}), which contains {bad!r} that it must not contain"
                )
                yield Problem(f, at_b, "impossible-check", msg + ": no answer can pass both", "remove one of the two checks")


def _regexes(f: str, where: str, patterns: Sequence[str]) -> Iterator[Problem]:
    for i, pattern in enumerate(patterns):
        reason = impossible(pattern)
        if reason:
            yield Problem(f, f"{where}[{i}]", "impossible-regex", f"{pattern!r} can never match: {reason}", "correct the pattern so that some text matches it")


def _fixtures(view: FileView, case: CaseView) -> Iterator[Problem]:
    """Every file of a workspace seed folder must be readable, and no symlink may leave it."""
    seed = case.workspace
    assert seed is not None
    root = seed.resolve()
    count = 0
    for dirpath, dirnames, filenames in os.walk(seed):
        for name in [*dirnames, *filenames]:
            count += 1
            if count > MAX_FIXTURE_FILES:
                return
            p = Path(dirpath) / name
            rel = p.relative_to(seed).as_posix()
            where = f"{case.field}.workspace" if case.field else "workspace"
            if p.is_symlink():
                target = p.resolve()
                if not target.is_relative_to(root) or not target.exists():
                    yield Problem(
                        view.file,
                        where,
                        "bad-fixture",
                        f"{rel!r} is a symlink to {'nothing' if not target.exists() else 'outside the folder'}; it is not copied into the workspace",
                        "replace the link with the file itself",
                    )
            elif p.is_file() and not os.access(p, os.R_OK):
                yield Problem(view.file, where, "unreadable-file", f"fixture {rel!r} cannot be read", "make it readable (chmod +r) or remove it")
            elif p.is_dir() and not os.access(p, os.R_OK | os.X_OK):
                yield Problem(view.file, where, "unreadable-file", f"fixture folder {rel!r} cannot be listed", "make it readable (chmod +rx)")


_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().casefold()


def skill_body(text: str) -> str:
    """The skill without its front matter."""
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            return text[end + 4 :]
    return text


def _quotes(view: FileView, case: CaseView) -> Iterator[Problem]:
    if not view.skill_text or not case.prompt:
        return
    prompt = _norm(case.prompt)
    quoted = [ln for ln in {_norm(line) for line in skill_body(view.skill_text).splitlines()} if len(ln) >= QUOTE_LINE_CHARS and ln in prompt]
    total = sum(len(q) for q in quoted)
    if quoted and (total >= QUOTE_TOTAL_CHARS or len(quoted) >= 2):
        first = max(quoted, key=len)
        yield Problem(
            view.file,
            f"{case.field}.{case.prompt_field}",
            "quotes-skill",
            f"quotes the skill ({len(quoted)} line(s), {total} characters, e.g. {first[:60]!r}): the without-arm gets the skill through the prompt",
            "describe the task, not the skill's text",
            "warning",
        )
