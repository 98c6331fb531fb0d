"""Files grader: what an agent trial left in its workspace.

Globs are relative to the workspace and never leave it: ``*`` and ``?`` stay within one
folder, ``**`` spans any number of folders, and wildcards match dot-files too. Every match
is resolved; a symlink leading outside the workspace (or a broken one, or a device or pipe)
is refused — the check fails with that as evidence and nothing outside is read. Symlinked
folders are not walked into. At most :data:`MAX_READ_BYTES` of a file are read.

A content check on a glob (mustContain, mustNotContain, regexMatch, json) must hold for
every file the glob matches and fails when it matches none. Score = passed checks / checks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from agentsproof.core.threads import to_thread
from agentsproof.core.units import human_size
from agentsproof.grading import regex
from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.grading.context import TrialContext
from agentsproof.grading.deterministic import _find, _snippet
from agentsproof.grading.hooks import LintCase, LintFact, Needle, Patterns, Presence, typed_assertion
from agentsproof.grading.workspace_files import Entry, Workspace
from agentsproof.model.graders import MAX_WEIGHT, FieldError, Strict, check_regexes, one_or_many, workspace_glob
from agentsproof.model.results import CheckResult, GraderResult


def _globs(items: list[str]) -> list[str]:
    out = []
    for i, item in enumerate(items):
        try:
            out.append(workspace_glob(item))
        except ValueError as exc:
            raise FieldError(f"[{i}]", str(exc)) from None
    return out


class FilesGrader(Strict):
    """Files the agent must (not) leave in its workspace, and what they must hold.

    Globs are relative to the workspace: ``*`` and ``?`` stay within one folder, ``**``
    spans folders, and wildcards match names starting with a dot too. A content check
    (mustContain, mustNotContain, regexMatch, json) on a glob holds for every file it
    matches, and fails when it matches none. Each string, pattern and glob is one check;
    the score is the share that passed.
    """

    type: Literal["files"]
    exists: list[str] = Field(default_factory=list, description="Globs that must each match at least one file or folder.")
    absent: list[str] = Field(default_factory=list, description="Globs that must match nothing.")
    mustContain: dict[str, list[str]] = Field(default_factory=dict, description="Per file (or glob): substrings it must contain.")
    mustNotContain: dict[str, list[str]] = Field(default_factory=dict, description="Per file (or glob): substrings it must not contain.")
    regexMatch: dict[str, list[str]] = Field(default_factory=dict, description="Per file (or glob): regexes that must match (re.search).")
    json_valid: list[str] = Field(default_factory=list, alias="json", description="Globs whose files must be valid JSON.")
    caseSensitive: bool = Field(False, strict=True, description="Match mustContain/mustNotContain case-sensitively.")
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")

    @field_validator("exists", "absent", mode="before")
    @classmethod
    def _glob_shorthand(cls, value: Any) -> Any:
        return one_or_many(value)

    @field_validator("exists", "absent")
    @classmethod
    def _check_globs(cls, items: list[str]) -> list[str]:
        return _globs(items)

    @field_validator("json_valid", mode="before")
    @classmethod
    def _json_forms(cls, value: Any) -> Any:
        # json: "out.json" | ["a.json", "b/*.json"] | {"out.json": "valid"}
        if isinstance(value, dict):
            for key, want in value.items():
                if want not in ("valid", True):
                    raise FieldError(f"[{key!r}]", "use 'valid' (the only JSON check)")
            return list(value)
        return one_or_many(value)

    @field_validator("json_valid")
    @classmethod
    def _json_globs(cls, items: list[str]) -> list[str]:
        return _globs(items)

    @field_validator("mustContain", "mustNotContain", "regexMatch", mode="before")
    @classmethod
    def _per_file_shorthand(cls, value: Any) -> Any:
        # {"summary.md": "revenue"} is shorthand for {"summary.md": ["revenue"]}.
        if isinstance(value, dict):
            return {key: one_or_many(checks) for key, checks in value.items()}
        return value

    @field_validator("mustContain", "mustNotContain", "regexMatch")
    @classmethod
    def _per_file(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for path, checks in value.items():
            try:
                key = workspace_glob(path)
            except ValueError as exc:
                raise FieldError(f"[{path!r}]", str(exc)) from None
            if not checks:
                raise FieldError(f"[{path!r}]", "is empty; give at least one string")
            for i, check in enumerate(checks):
                if not check:
                    raise FieldError(f"[{path!r}][{i}]", "is an empty string")
            if key in out:
                raise FieldError(f"[{path!r}]", f"names the same files as {key!r}; merge the two")
            out[key] = checks
        return out

    @field_validator("regexMatch")
    @classmethod
    def _compile(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for path, patterns in value.items():
            check_regexes(patterns, f"[{path!r}]")
        return value

    @model_validator(mode="after")
    def _has_checks(self) -> FilesGrader:
        if not (self.exists or self.absent or self.mustContain or self.mustNotContain or self.regexMatch or self.json_valid):
            raise FieldError("exists", "a files grader needs at least one check (exists, absent, mustContain, mustNotContain, regexMatch, json)")
        return self


MAX_READ_BYTES = 10 * 1024 * 1024
"""The most of one file a content check reads (and the largest file a json check parses)."""
_SHOWN = 5


def _listing(entries: list[Entry]) -> str:
    shown = ", ".join(e.shown() for e in entries[:_SHOWN])
    return shown + (f" and {len(entries) - _SHOWN} more" if len(entries) > _SHOWN else "")


def _exists(ws: Workspace, pattern: str) -> CheckResult:
    entries = ws.match(pattern)
    good = [e for e in entries if e.problem is None]
    if good:
        evidence = f"found {_listing(good)}"
    elif entries:
        evidence = f"{entries[0].rel} is {entries[0].problem}" + (f" (and {len(entries) - 1} more refused)" if len(entries) > 1 else "")
    else:
        evidence = ws.nothing(pattern)
    return CheckResult(kind="exists", target=pattern, passed=bool(good), evidence=evidence)


def _absent(ws: Workspace, pattern: str) -> CheckResult:
    entries = ws.match(pattern)
    evidence = f"found {_listing(entries)}" if entries else ws.nothing(pattern)
    return CheckResult(kind="absent", target=pattern, passed=not entries, evidence=evidence)


def _read(entry: Entry) -> tuple[str, bool]:
    """(the text of the file's first MAX_READ_BYTES, whether it was cut)."""
    with open(entry.resolved, "rb") as fh:
        data = fh.read(MAX_READ_BYTES + 1)
    return data[:MAX_READ_BYTES].decode("utf-8", errors="replace"), len(data) > MAX_READ_BYTES


def _cut_note(entry: Entry, cut: bool) -> str:
    return f" (only its first {human_size(MAX_READ_BYTES)} of {human_size(entry.size)} were read)" if cut else ""


# One per-file check: (entry, text, cut, what) -> (passed, evidence).
FileCheck = Callable[[Entry, str, bool, str], tuple[bool, str]]


def _contains(case_sensitive: bool, wanted: bool) -> FileCheck:
    """mustContain (``wanted``) or mustNotContain: the same search, the verdict turned round."""

    def check(e: Entry, text: str, cut: bool, needle: str) -> tuple[bool, str]:
        at = _find(text, needle, case_sensitive)
        if at >= 0:
            return wanted, f"{e.rel} contains {needle!r}: {_snippet(text, at, at + len(needle))}"
        return not wanted, f"{e.rel} does not contain {needle!r}{_cut_note(e, cut)}"

    return check


def _regex_match(e: Entry, text: str, cut: bool, pattern: str) -> tuple[bool, str]:
    found = regex.search(pattern, text)
    if found.error:
        return False, f"{e.rel}: not checked: {found.error}"
    if found.span is not None:
        return True, f"{e.rel} matches: {_snippet(text, *found.span)}"
    return False, f"{e.rel} has no match{_cut_note(e, cut)}"


def _no_constants(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _json_valid(e: Entry) -> tuple[bool, str]:
    with open(e.resolved, "rb") as fh:
        data = fh.read(MAX_READ_BYTES + 1)
    if len(data) > MAX_READ_BYTES:
        return False, f"{e.rel} is too big to check ({human_size(e.size)}; the limit is {human_size(MAX_READ_BYTES)})"
    try:
        json.loads(data.decode("utf-8-sig"), parse_constant=_no_constants)
    except (ValueError, RecursionError) as err:
        return False, f"{e.rel} is not valid JSON: {' '.join(str(err).split())[:200] or type(err).__name__}"
    return True, f"{e.rel} is valid JSON ({human_size(len(data))})"


def _over_files(ws: Workspace, pattern: str, count: int, evaluate: Callable[[Entry], list[tuple[bool, str]]]) -> list[list[tuple[bool, str]]]:
    """For each of ``count`` checks, its (passed, evidence) on every file ``pattern`` matches."""
    entries = ws.match(pattern)
    files = [e for e in entries if not e.is_dir]
    if not files:
        why = f"{pattern} matches only folders" if entries else ws.nothing(pattern)
        return [[(False, why)] for _ in range(count)]
    per_check: list[list[tuple[bool, str]]] = [[] for _ in range(count)]
    for e in files:
        if e.problem:
            outcome = [(False, f"{e.rel} is {e.problem}")] * count
        else:
            try:
                outcome = evaluate(e)
            except OSError as err:
                outcome = [(False, f"{e.rel} could not be read: {err.strerror or err}")] * count
        for results, result in zip(per_check, outcome, strict=True):
            results.append(result)
    return per_check


def _content(ws: Workspace, kind: str, pattern: str, items: list[str], check: FileCheck) -> list[CheckResult]:
    """One check per item, each over every file ``pattern`` matches (each file read once)."""

    def evaluate(e: Entry) -> list[tuple[bool, str]]:
        text, cut = _read(e)
        return [check(e, text, cut, item) for item in items]

    per_item = _over_files(ws, pattern, len(items), evaluate)
    return [CheckResult(kind=kind, target=f"{pattern}: {item}", **_summary(r)) for item, r in zip(items, per_item, strict=True)]


def _json(ws: Workspace, pattern: str) -> CheckResult:
    (results,) = _over_files(ws, pattern, 1, lambda e: [_json_valid(e)])
    return CheckResult(kind="json", target=pattern, **_summary(results))


def _summary(results: list[tuple[bool, str]]) -> dict[str, object]:
    failed = [ev for ok, ev in results if not ok]
    if len(results) == 1:
        return {"passed": not failed, "evidence": results[0][1]}
    if failed:
        shown = "; ".join(failed[:3]) + (f"; … {len(failed) - 3} more" if len(failed) > 3 else "")
        return {"passed": False, "evidence": f"{len(failed)} of {len(results)} files fail: {shown}"}
    shown = "; ".join(ev for _, ev in results[:3]) + ("; …" if len(results) > 3 else "")
    return {"passed": True, "evidence": f"all {len(results)} files pass: {shown}"}


def grade_files(spec: FilesGrader, ctx: TrialContext) -> GraderResult:
    """The ``files`` checks on the trial's workspace; errored when the trial has no workspace, it was replaced by a symlink, or it is gone."""
    if ctx.workspace is None:
        return GraderResult(type="files", weight=spec.weight, errored=True, error="the files grader needs an agent trial with a workspace")
    if ctx.workspace.is_symlink():
        return GraderResult(type="files", weight=spec.weight, errored=True, error="the trial's workspace was replaced by a symlink; not followed")
    if not ctx.workspace.is_dir():
        return GraderResult(type="files", weight=spec.weight, errored=True, error=f"the trial's workspace {ctx.workspace} is gone")
    ws = Workspace(ctx.workspace)
    checks = [_exists(ws, p) for p in spec.exists] + [_absent(ws, p) for p in spec.absent]
    cs = spec.caseSensitive
    for kind, table, check in (
        ("mustContain", spec.mustContain, _contains(cs, wanted=True)),
        ("mustNotContain", spec.mustNotContain, _contains(cs, wanted=False)),
        ("regexMatch", spec.regexMatch, _regex_match),
    ):
        for pattern, items in table.items():
            checks += _content(ws, kind, pattern, items, check)
    checks += [_json(ws, p) for p in spec.json_valid]
    score = sum(c.passed for c in checks) / len(checks)
    return GraderResult(type="files", weight=spec.weight, score=score, checks=checks)


async def grade(spec: FilesGrader, given: GradeInput) -> GraderResult:
    """The files grader's hook: its checks run on the trial's workspace, in a thread (file
    reads and Python-``re`` searches never hold the event loop)."""
    return await to_thread(grade_files, spec, given.context)


def lint(spec: FilesGrader, case: LintCase) -> Iterator[LintFact]:
    """Its texts per file, its patterns, the paths that must exist or be absent."""
    where = case.where
    for key, present in (("mustContain", True), ("mustNotContain", False)):
        for path, needles in getattr(spec, key).items():
            for i, n in enumerate(needles):
                yield Needle(("file", path), f"file {path!r}", present, n, spec.caseSensitive, f"{where}.{key}[{path!r}][{i}]")
    for path, patterns in spec.regexMatch.items():
        yield Patterns(f"{where}.regexMatch[{path!r}]", patterns)
    yield from (Presence(p, True, f"{where}.exists[{i}]") for i, p in enumerate(spec.exists))
    yield from (Presence(p, False, f"{where}.absent[{i}]") for i, p in enumerate(spec.absent))


GRADER = GraderEntry(type="files", config=FilesGrader, grade=grade, agent_only=True, lint=lint, to_agentevals=typed_assertion, reads_workspace=True)
