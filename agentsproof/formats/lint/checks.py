"""Checks on a file's cases and their graders, the same for every format.

A format's adapter (:mod:`.lint`) turns its file into :class:`CaseView` values (where each
case and grader is in the file, its prompt, its workspace seed); the checks here find what
no model is needed to know: checks that cannot pass, graders with nothing to check,
missing or unreadable fixtures and scripts, duplicate names, too few cases, and
instructions that quote the skill.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentsproof.formats.lint.problems import MIN_CASES, Problem
from agentsproof.formats.lint.regexes import impossible

MAX_FIXTURE_FILES = 10_000
QUOTE_LINE_CHARS = 40
"""A skill line at least this long found verbatim in an instruction is a quote."""
QUOTE_TOTAL_CHARS = 120


@dataclass
class CaseView:
    field: str
    """Where the case is in the file, e.g. ``tasks[2]``."""
    name: str
    prompt: str
    graders: Sequence[Any]
    grader_fields: Sequence[str] = ()
    workspace: Path | None = None
    prompt_field: str = "instruction"


@dataclass
class FileView:
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
            out.append(Problem(view.file, f"{case.field}.name" if view.case_word == "task" else case.field, "duplicate-case",
                               f"{case.name!r} is also the name of {seen[key]}", "give every case its own name"))
        else:
            seen[key] = case.field
    return out


def _too_few(view: FileView) -> list[Problem]:
    n = len(view.cases)
    if n >= MIN_CASES:
        return []
    word = "tasks" if view.case_word == "task" else "cases"
    at = "task" if n == 1 and view.cases[0].field == "task" else view.cases_field
    return [Problem(view.file, at, "too-few-cases", f"has {n} {view.case_word}{'s' if n != 1 else ''}; fewer than {MIN_CASES} cannot show the skill helps beyond one example",
                    f"add {MIN_CASES - n} more {word} that need the skill in different ways (or accept the warning for a smoke test)", "warning")]


def _fold(text: str, sensitive: bool) -> str:
    return text if sensitive else text.casefold()


def _case(view: FileView, case: CaseView) -> Iterator[Problem]:
    f = view.file
    contains: dict[Any, list[tuple[str, bool, str]]] = {}  # by turn: (needle, case sensitive, field)
    excludes: dict[Any, list[tuple[str, bool, str]]] = {}
    per_file: dict[str, dict[str, list[tuple[str, bool, str]]]] = {"mustContain": {}, "mustNotContain": {}}
    exists: dict[str, str] = {}
    absent: dict[str, str] = {}
    total_weight = 0.0
    for j, g in enumerate(case.graders):
        where = _gfield(case, j)
        kind = getattr(g, "type", "")
        total_weight += float(getattr(g, "weight", 1.0) or 0.0)
        if kind == "deterministic":
            cs = g.checks.caseSensitive
            contains.setdefault(g.turn, []).extend((n, cs, f"{where}.checks.mustContain[{i}]") for i, n in enumerate(g.checks.mustContain))
            excludes.setdefault(g.turn, []).extend((n, cs, f"{where}.checks.mustNotContain[{i}]") for i, n in enumerate(g.checks.mustNotContain))
            yield from _regexes(f, f"{where}.checks.regexMatch", g.checks.regexMatch)
        elif kind == "files":
            for key in ("mustContain", "mustNotContain"):
                for path, needles in getattr(g, key).items():
                    per_file[key].setdefault(path, []).extend((n, g.caseSensitive, f"{where}.{key}[{path!r}][{i}]") for i, n in enumerate(needles))
            for path, patterns in g.regexMatch.items():
                yield from _regexes(f, f"{where}.regexMatch[{path!r}]", patterns)
            exists.update({p: f"{where}.exists[{i}]" for i, p in enumerate(g.exists)})
            absent.update({p: f"{where}.absent[{i}]" for i, p in enumerate(g.absent)})
        elif kind == "tool_calls":
            yield from _tool_calls(f, where, g)
        elif kind == "llm_rubric" and not g.rubric.strip():
            yield Problem(f, f"{where}.rubric", "empty-grader", "is blank: the judge has nothing to score", "write what a good answer does, or remove the grader")
        elif kind == "assertions" and not any(a.strip() for a in g.assertions):
            yield Problem(f, f"{where}.assertions", "empty-grader", "are all blank: the judge has nothing to check", "write the assertions, or remove the grader")
        elif kind == "script":
            yield from _script(view, case, where, g)
    if case.graders and total_weight <= 0:
        yield Problem(f, f"{case.field}.graders", "zero-weight", "the weights sum to zero: every score would be 0/0", "give at least one grader a positive weight")
    for turn, needles in contains.items():  # a reply of one turn is also in 'all' of them
        banned = excludes.get(turn, []) + (excludes.get("all", []) if turn != "all" else [])
        yield from _conflicts(f, needles, banned, "the answer" if turn is None else "the replies (turn: all)" if turn == "all" else f"the reply of turn {turn}")
    for path, needles in per_file["mustContain"].items():
        yield from _conflicts(f, needles, per_file["mustNotContain"].get(path, []), f"file {path!r}")
    for glob, at in exists.items():
        if glob in absent:
            yield Problem(f, absent[glob], "impossible-check", f"{glob!r} must exist ({at}) and be absent", "keep one of the two")
    yield from _quotes(view, case)


def _conflicts(f: str, contains: list[tuple[str, bool, str]], excludes: list[tuple[str, bool, str]], what: str) -> Iterator[Problem]:
    for needle, cs_a, at_a in contains:
        for bad, cs_b, at_b in excludes:
            sensitive = cs_a and cs_b
            if _fold(bad, sensitive) in _fold(needle, sensitive):
                same = _fold(bad, sensitive) == _fold(needle, sensitive)
                msg = (f"{what} must contain {needle!r} ({at_a}) and must not contain it" if same
                       else f"{what} must contain {needle!r} ({at_a}), which contains {bad!r} that it must not contain")
                yield Problem(f, at_b, "impossible-check", msg + ": no answer can pass both", "remove one of the two checks")


def _regexes(f: str, where: str, patterns: Sequence[str]) -> Iterator[Problem]:
    for i, pattern in enumerate(patterns):
        reason = impossible(pattern)
        if reason:
            yield Problem(f, f"{where}[{i}]", "impossible-regex", f"{pattern!r} can never match: {reason}", "correct the pattern so that some text matches it")


def _tool_calls(f: str, where: str, g: Any) -> Iterator[Problem]:
    banned = set(g.must_not_call)
    for key in ("must_call", "sequence"):
        for i, name in enumerate(getattr(g, key)):
            if name in banned:
                yield Problem(f, f"{where}.{key}[{i}]", "impossible-check", f"{name!r} must be called and is in must_not_call", "remove it from one of the two")
    need = max(len(set(g.must_call)), len(g.sequence))
    if g.max_steps is not None and need > g.max_steps:
        yield Problem(f, f"{where}.max_steps", "impossible-check", f"{g.max_steps} steps cannot hold the {need} calls must_call/sequence require", f"raise max_steps to at least {need}")


INTERPRETERS = ("python", "python3", "sh", "bash", "node", "pytest")


def _run_file(run: str | list[str]) -> str | None:
    """The script a ``run:`` command runs with an interpreter (``python3 check.py``), if any."""
    import shlex

    try:
        argv = shlex.split(run) if isinstance(run, str) else list(run)
    except ValueError:
        return None
    if len(argv) >= 2 and Path(argv[0]).name in INTERPRETERS and not argv[1].startswith("-"):
        target = argv[1]
        if Path(target).suffix in (".py", ".sh", ".bash", ".js", ".mjs", ".cjs") and not Path(target).is_absolute() and "$" not in target:
            return target
    return None


def _script(view: FileView, case: CaseView, where: str, g: Any) -> Iterator[Problem]:
    if g.script is None:
        rel = _run_file(g.run) if g.run is not None else None
        if rel is not None and view.agent_mode and not (case.workspace is not None and (case.workspace / rel).is_file()):
            yield Problem(view.file, f"{where}.run", "missing-file",
                          f"runs {rel!r} in the workspace, and the workspace seed has no such file: the grader fails unless the agent writes it",
                          "add it to the workspace: folder, or use 'script:' with the file beside the eval file")
        return
    beside = view.path.parent / g.script
    seeded = case.workspace / g.script if case.workspace is not None else None
    found = beside if beside.is_file() else seeded if seeded is not None and seeded.is_file() else None
    if found is None:
        places = f"beside {view.path.name}" + (f" or in the workspace folder {case.workspace.name}/" if case.workspace else " (and the eval has no workspace: folder)")
        yield Problem(view.file, f"{where}.script", "missing-file", f"{g.script!r} is not {places}", "add the script there or correct the path")
    elif not os.access(found, os.R_OK):
        yield Problem(view.file, f"{where}.script", "unreadable-file", f"{g.script!r} cannot be read", f"make {found.name} readable (chmod +r)")


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
                    yield Problem(view.file, where, "bad-fixture", f"{rel!r} is a symlink to {'nothing' if not target.exists() else 'outside the folder'}; it is not copied into the workspace",
                                  "replace the link with the file itself")
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
            return text[end + 4:]
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
            view.file, f"{case.field}.{case.prompt_field}", "quotes-skill",
            f"quotes the skill ({len(quoted)} line(s), {total} characters, e.g. {first[:60]!r}): the without-arm gets the skill through the prompt",
            "describe the task, not the skill's text", "warning",
        )
