"""One path's lint problems, in whatever format it is (eval.yaml, EVAL.yaml, evals.json,
targets.yaml, or a folder of them).

The format's own loader runs first: it stops at the first problem it finds (one line, the
same as a run would print), which lint reports with a fix, then loads the file again with
that field taken out to find the next (:mod:`.every`), so that one run shows them all.
What loads is then checked case by case (:mod:`.checks`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import InputError
from agentsproof.formats.lint.checks import FileView, check_file
from agentsproof.formats.lint.problems import Problem, fix_for

if TYPE_CHECKING:
    from agentsproof.formats.base import Loaded

TARGETS_NAMES = ("targets.yaml", "targets.yml")
MAX_FILES = 2000


def _loader_problem(err: InputError, fallback: str) -> Problem:
    rule, fix = fix_for(err.message)
    return Problem(err.source or fallback, err.field or "", rule, err.message, fix)


def kind_of(path: Path) -> str:
    """``targets``, or the name of the format the formats registry detects ``path`` in for
    ``lint`` (``eval.yaml``, ``EVAL.yaml``, ``evals.json``, ``promptfoo``, an installed one)."""
    from agentsproof.formats import registry

    if path.name in TARGETS_NAMES:
        return "targets"
    return registry.detect(path, "lint").name


def _lint_view(kind: str) -> Callable[[Path, str, Loaded | None], FileView] | None:
    """The format's ``lint_view(path, src, loaded=None)`` hook, when lint checks its cases
    (:mod:`.views` builds the view); None: lint runs its loader only and says so."""
    from agentsproof.formats import registry

    hook = getattr(registry.get(kind), "lint_view", None)
    return hook if callable(hook) else None


def _checked(kind: str) -> bool:
    return _lint_view(kind) is not None


def _own_lint(kind: str) -> Callable[[Path], list[Problem]] | None:
    """The format's own ``lint(path)``, when it has one (its checks need no case view)."""
    from agentsproof.formats import registry

    own = getattr(registry.get(kind), "lint", None)
    return own if callable(own) else None


def _unchecked(path: Path, kind: str, src: str) -> list[Problem]:
    """A format lint has no case checks for: its loader runs (what it refuses is a problem),
    then one warning says that its cases were not checked."""
    from agentsproof.formats import registry
    from agentsproof.formats.base import ItemRequest

    registry.get(kind).load(path, ItemRequest())
    return [
        Problem(
            src,
            "",
            "unchecked-format",
            f"lint does not check this format yet: {kind} (it loads)",
            "run it to see its cases, or write it as an eval.yaml to have them checked",
            "warning",
        )
    ]


def lint_path(path: Path) -> list[Problem]:
    """Every problem of ``path`` (a file, or every eval file and targets.yaml below a folder).
    InputError (exit 30) only when ``path`` itself cannot be linted: it does not exist, is not
    a regular file or cannot be read, is a JSONL dataset, or is a folder with nothing lint
    reads. A file found below a folder that cannot be read is one of its problems instead."""
    from agentsproof.core.inputs import display

    if not path.exists() and not path.is_symlink():
        raise InputError(display(path), None, "not found")
    if path.is_dir():
        files = discover(path)
        if not files:
            raise InputError(display(path), None, "has no eval.yaml, EVAL.yaml, evals.json or targets.yaml below it")
        return [p for f in files for p in lint_file(f)]
    from agentsproof.formats.agentevals.cases import is_agentv_jsonl

    if path.suffix.lower() == ".jsonl" and not is_agentv_jsonl(path):  # agentv's tests one a line are linted as an EVAL.yaml
        raise InputError(display(path), None, "lint reads eval.yaml, EVAL.yaml, evals.json and targets.yaml files, not JSONL datasets")
    if not path.is_file():  # a FIFO, socket or device (or a link to one): nothing lint can check, as a missing path
        raise InputError(display(path), None, "is not a regular file (a FIFO, socket or device); give an eval file or a folder")
    if not os.access(path, os.R_OK):
        raise InputError(display(path), None, "cannot be read (permission denied); make it readable")
    return lint_file(path)


def discover(folder: Path) -> list[Path]:
    """The files below ``folder`` that lint checks (every format eval-all discovers, plus targets.yaml files)."""
    from agentsproof.formats import registry

    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") or d == ".agentsproof")
        dirnames[:] = [d for d in dirnames if d not in ("node_modules", "runs", "__pycache__")]
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if name in TARGETS_NAMES or registry.discoverable(p) or (name.endswith(".json") and name == "evals.json"):
                found.append(p)
                if len(found) >= MAX_FILES:
                    return found
    owned = registry.owned_folders(found)  # a Harbor task's own files are checked with it, not alone
    return [p for p in found if not any(p.parent != o and p.is_relative_to(o) for o in owned)]


def lint_file(path: Path) -> list[Problem]:
    """Every problem lint finds in one file: each error its loader refuses (:mod:`.every`:
    the refused field taken out, the file loaded again), then the notes and case checks of
    what loads."""
    from agentsproof.core.inputs import display

    src = display(path)
    kind: str | None = None
    try:
        kind = kind_of(path)
        if kind == "targets":
            return lint_targets(path, src)
        own = _own_lint(kind)
        if own is not None:  # a format that checks itself (a Harbor task folder)
            return own(path)
        return _attempt(path, kind, src)
    except InputError as err:
        first = err
    data = None if kind is None or kind == "targets" or _own_lint(kind) is not None else _parsed_data(path)
    if data is None or kind is None:
        return [_loader_problem(first, src)]
    from agentsproof.formats.lint.every import every_error, parse_field

    errors, found, red = every_error(path, src, data, first, lambda: _attempt(path, str(kind), src))
    problems = [_loader_problem(e, src) for e in errors]
    for p in found or []:
        at = parse_field(p.field)
        if p.rule == "unchecked-format" or p.file == src and at is not None and red.follows(red.original(at)):
            continue  # the file does not load; about what was taken out (a case left with too few checks, too few cases)
        problems.append(replace(p, field=red.original_text(p.field), message=red.original_text(p.message)))
    return problems


def _attempt(path: Path, kind: str, src: str) -> list[Problem]:
    if kind == "evals.json":
        from agentsproof.formats.skill_creator import read_trigger_file

        if read_trigger_file(path) is not None:  # skill-creator's trigger evals: an activation suite
            return _trigger_evals(path, src)
    if not _checked(kind):
        return _unchecked(path, kind, src)
    view = _view(path, kind, src)
    read_as = _evals_json_notes(path, src) if kind == "evals.json" else []
    return [*read_as, *view.notes, *check_file(view)]


def _trigger_evals(path: Path, src: str) -> list[Problem]:
    """skill-creator's trigger evals: its skill must be found (InputError otherwise); one
    warning says how it runs."""
    from agentsproof.formats.trigger_evals import trigger_suites

    suite = trigger_suites(path).suites[0]
    return [
        Problem(
            src,
            "",
            "read-as",
            f"skill-creator trigger evals: an activation suite of {suite.skill.name!r} ({len(suite.should)} should, {len(suite.should_not)} should not)",
            "run it with `agentsproof activation` (or tc-eval / tune-description) on this file",
            "warning",
        )
    ]


def _evals_json_notes(path: Path, src: str) -> list[Problem]:
    """What an evals.json's loader reads differently or ignores (skill-creator's keys that change
    nothing measured, a list of cases, should_trigger cases): one warning each, as the run's notes."""
    from agentsproof.formats.skill_creator import normalise

    data = _parsed_data(path)
    if data is None:
        return []
    out = []
    for line in normalise(data, path).notes:
        field, sep, message = line.partition(": ")
        if not sep or " " in field:
            field, message = "", line
        out.append(Problem(src, field, "read-as", message, "nothing to change unless it should count; see docs/interop.md", "warning"))
    return out


def _parsed_data(path: Path) -> Any:
    """The file's parse (JSON for ``*.json``, else YAML), None when it does not parse."""
    from agentsproof.core.inputs import read_json_file, read_yaml_file

    try:
        return read_json_file(path) if path.suffix.lower() == ".json" else read_yaml_file(path)
    except InputError:
        return None


def check_loaded(loaded: Loaded) -> list[Problem]:
    """The case checks of a file a run has loaded, from what the load read and validated
    (the file is not read again). None for a format lint has no case checks for (a JSONL
    dataset, a promptfoo config)."""
    from agentsproof.core.inputs import display

    src = display(loaded.path)
    try:
        if not _checked(loaded.format):  # a format without a lint_view hook
            return []
        view = _view(loaded.path, loaded.format, src, loaded)
    except InputError:
        return []
    return check_file(view)


def loaded_views(path: Path) -> list[FileView]:
    """The eval files of ``path`` that load, as lint's views (for the --judge review)."""
    from agentsproof.core.inputs import display

    files = discover(path) if path.is_dir() else [path]
    out = []
    for f in files:
        try:
            kind = kind_of(f)
            if kind != "targets" and _checked(kind):
                out.append(_view(f, kind, display(f)))
        except InputError:
            continue
    return out


def _view(path: Path, kind: str, src: str, loaded: Loaded | None = None) -> FileView:
    """The format's own view of its cases (its ``lint_view`` hook, :mod:`.views`)."""
    hook = _lint_view(kind)
    assert hook is not None, kind
    return hook(path, src, loaded)


def lint_targets(path: Path, src: str) -> list[Problem]:
    """A targets.yaml: valid entries, and command targets whose program and ``{here}`` files exist."""
    from agentsproof.core.inputs import read_yaml_file
    from agentsproof.targets.config import parse_targets

    defs = parse_targets(read_yaml_file(path), src, path.resolve().parent)
    here = path.resolve().parent
    out: list[Problem] = []
    for name, d in defs.items():
        command = getattr(d.spec, "command", None)
        if getattr(d.spec, "type", "") != "command" or not command:
            continue
        for i, arg in enumerate(command):
            if "{here}" in arg:
                rel = arg.replace("{here}", str(here))
                if not Path(rel).exists():
                    out.append(
                        Problem(
                            src,
                            f"{name}.command[{i}]",
                            "missing-file",
                            f"{arg!r}: {Path(rel).name!r} is not beside the targets.yaml",
                            "add the file or correct the path",
                        )
                    )
        program = command[0]
        if "{" in program or "$" in program:
            continue
        if "/" in program:
            target = (here / program) if not Path(program).is_absolute() else Path(program)
            if not target.exists():
                out.append(Problem(src, f"{name}.command[0]", "missing-file", f"{program!r} does not exist", "install the agent or correct the path"))
        elif shutil.which(program) is None:
            out.append(
                Problem(src, f"{name}.command[0]", "missing-program", f"{program!r} is not on PATH", f"install {program} (or give its full path)", "warning")
            )
    return out
