"""Other tools' eval files read as the EVAL.yaml they mean (waza, skillgrade).

A format of this kind turns its file into an EVAL.yaml mapping (:class:`Translation`): the
same mapping ``agentsproof convert --to EVAL.yaml`` writes, and the one a run loads, through
the EVAL.yaml parser and assertion builder (:mod:`agentsproof.formats.agentevals`). What the
file says that changes nothing measured is a note; what one case needs and cannot have (a
grader no offline tool runs, an agent's grader in a chat run) errors that case, with the
reason in each of its trials, and the other cases run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.formats.base import ItemRequest, Loaded
from agentsproof.targets.registry import is_agent


@dataclass
class Translation:
    """A file of another tool as an EVAL.yaml mapping, with its skill and what was read differently."""

    data: dict[str, Any]
    """The EVAL.yaml mapping (its paths relative to the source file's folder)."""
    skill: tuple[Path, str] | None
    """The skill under test (path, text); None: single-armed."""
    notes: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    """Per test id: why that case cannot run (its trials are errored with it)."""
    timeout: float | None = None
    """The file's own seconds per trial (``--timeout`` wins)."""
    dests: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per test id: where an attached file lands in an agent's workspace (skillgrade's ``dest``),
    by the path it is attached as."""
    name: str | None = None


def as_map(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def load_yaml_mapping(path: Path) -> dict[str, Any] | None:
    """``path`` parsed as YAML when it is a ``.yaml``/``.yml`` mapping; None otherwise (never raises)."""
    if path.suffix.lower() not in (".yaml", ".yml") or not path.is_file():
        return None
    from agentsproof.core.validation import read_yaml

    try:
        data = read_yaml(path)
    except (InputError, OSError, ValueError, RecursionError):  # the loader that reads it says why
        return None
    return data if isinstance(data, dict) else None


def _empty_builder(src: str, path: Path, test: Any, skill: str | None, at: str) -> Any:
    from agentsproof.formats.agentevals.asserts import Builder

    return Builder(src, path, test, skill, at)


def load_translation(fmt: str, path: Path, tr: Translation, request: ItemRequest, after: Callable[[Any], None] | None = None, say: bool = True) -> Loaded:
    """The translated file's cases as items, as an EVAL.yaml's are built (one item per test)."""
    from agentsproof.core.inputs import display
    from agentsproof.core.notice import note_once
    from agentsproof.formats.agentevals.asserts import build_graders
    from agentsproof.formats.agentevals.items import LoadedSuite, _target, find_skill, label_checks, skill_name, suite_items
    from agentsproof.formats.agentevals.parse import parse_suite

    src = display(path)
    suite = parse_suite(tr.data, path)
    skill = find_skill(path, request.skill) if request.skill is not None else tr.skill
    loaded = LoadedSuite(suite=suite, skill=skill)
    target = _target(loaded, request.target, request.targets_file)
    errors = dict(tr.errors)
    for i, test in enumerate(suite.tests):
        at = f"tests[{i}]"
        try:
            built = build_graders(src, path, test, skill_name(skill), at)
        except InputError as err:  # a grader of this case it cannot build: the case errors
            errors.setdefault(test.id, f"{err.field}: {err.message}" if err.field else err.message)
            built = _empty_builder(src, path, test, skill_name(skill), at)
        if built.needs_agent and not is_agent(target):
            errors.setdefault(test.id, f"task {test.id!r} has a grader of an agent's trial (tool calls, files, skills loaded); run with --target NAME")
            built.needs_agent = None
        loaded.graders[test.id] = built
    for line in tr.notes if say else ():
        note_once(f"{src}: {line}")
    for tid, why in errors.items() if say else ():
        note_once(f"{src}: task {tid!r} errors (its trials are errored with the reason), the others run: {why}")
    trials = request.trials or suite.repeat or 1
    timeout = request.timeout if request.timeout is not None else tr.timeout or request.case_timeout()
    prefix = loaded.name + "/" if request.in_plugin else ""
    items = suite_items(
        loaded, trials=trials, threshold=request.threshold, timeout=timeout, target=request.target, targets_file=request.targets_file, prefix=prefix
    )
    items = [
        _placed(dataclasses.replace(it, load_error=errors.get(test.id) or it.load_error), tr.dests.get(test.id))
        for it, test in zip(items, suite.tests, strict=True)
    ]
    settings = {"trials": trials, "threshold": items[0].threshold if items else None, "timeout": timeout, "eval_yaml": src}

    def label(run: Any) -> None:
        label_checks(loaded, run, prefix=prefix)
        if after is not None:
            after(run)

    return Loaded(
        fmt, Path(path), items, tr.name or loaded.name, settings=settings, single_arm=skill is None, skill_path=skill[0] if skill else None, after=label
    )


def _placed(item: Any, dests: dict[str, str] | None) -> Any:
    """An agent item's attached files at the places the file names (``dest``), the prompt's
    list of them to match."""
    if not dests or not item.workspace_files:
        return item
    from agentsproof.formats.eval_yaml.items import seed_digest, workspace_name

    moved = {workspace_name(k): v for k, v in dests.items()}
    files = tuple((moved.get(name, name), data) for name, data in item.workspace_files)
    before = "\n\nFiles in your working directory: " + ", ".join(n for n, _ in item.workspace_files)
    prompt = item.prompt
    if prompt.endswith(before):
        prompt = prompt[: -len(before)] + "\n\nFiles in your working directory: " + ", ".join(n for n, _ in files)
    return dataclasses.replace(item, workspace_files=files, prompt=prompt, workspace_sha=seed_digest(item.workspace_seed, files))


def lint_translation(fmt: str, path: Path, translate: Callable[[Path], Translation]) -> list[Any]:
    """``agentsproof lint`` of a translated file: what its loader refuses (an error), each note
    and each case that would error (warnings), then the case checks of its items."""
    from agentsproof.core.inputs import display
    from agentsproof.formats.lint.checks import CaseView, FileView, check_file
    from agentsproof.formats.lint.problems import Problem

    src = display(path)
    try:
        tr = translate(path)
        loaded = load_translation(fmt, path, tr, ItemRequest(), say=False)
    except InputError as err:
        return [Problem(src, err.field or "", "invalid", err.message, "fix the field named", "error")]
    problems = [Problem(src, "", "read-as", n, "nothing to change unless it should count; see docs/interop.md", "warning") for n in tr.notes]
    cases = []
    for i, item in enumerate(loaded.items):
        if item.load_error:
            problems.append(
                Problem(
                    src,
                    f"tasks[{i}]",
                    "case-errors",
                    f"this task errors when run (the others run): {item.load_error}",
                    "see the reason; a grader of an agent's trial needs --target",
                    "warning",
                )
            )
        at = f"tasks[{i}]"
        cases.append(
            CaseView(
                field=at,
                name=item.task_name,
                prompt=item.prompt,
                graders=list(item.graders),
                grader_fields=[f"{at}.graders" for _ in item.graders],
                workspace=item.workspace_seed,
                prompt_field="instruction",
            )
        )
    skill = "" if loaded.single_arm or not loaded.items else loaded.items[0].system_prompt
    view = FileView(src, path, cases, skill_text=skill, case_word="task", cases_field="tasks", exact_fields=False)
    return [*problems, *check_file(view)]


def find_skill_md(folder: Path, name: str | None, levels: int = 3) -> Path | None:
    """A SKILL.md for ``name`` near ``folder``: ``folder``'s own, ``skills/<name>``,
    ``.agents/skills/<name>``, ``.claude/skills/<name>``, ``<name>/``, in ``folder`` and up to
    ``levels`` folders above, nearest first (never through a symlink)."""
    start = folder.resolve()
    for d in [start, *start.parents][: levels + 1]:
        cands = [d / "SKILL.md"]
        if name:
            cands += [d / sub / name / "SKILL.md" for sub in ("skills", ".agents/skills", ".claude/skills", ".github/skills")] + [d / name / "SKILL.md"]
        for c in cands:
            if c.is_file() and not c.is_symlink():
                if c == d / "SKILL.md" and name and d != start and not _answers(c, name):
                    continue  # a SKILL.md further up that is another skill's
                return c
    return None


def _answers(skill_md: Path, name: str) -> bool:
    from agentsproof.model.skillfolder import frontmatter_name

    try:
        declared = frontmatter_name(skill_md.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False
    return name in {skill_md.parent.name, declared}


def read_skill(path: Path) -> tuple[Path, str]:
    """(path, text) of a SKILL.md; InputError naming it when it cannot be read or is empty."""
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_text

    text = read_text(path, source=display(path), field=None, max_bytes=MAX_SOURCE_FILE_BYTES, what="skill file")
    if not text.strip():
        raise InputError(display(path), None, "the skill file is empty")
    return path, text


class TranslatedFormat:
    """The input format of another tool's ``eval.yaml`` that runs as the EVAL.yaml it means
    (waza's, skillgrade's): ``looks_like`` tells the file apart from ours and the other
    tools' (an ``eval.yaml`` is discovered by each; the load detects whose it is),
    ``translate`` reads it into a :class:`Translation`."""

    commands = ("eval", "tc-eval", "eval-all", "lint")

    def __init__(self, name: str, looks_like: Callable[[dict[str, Any] | None], bool], translate: Callable[[Path], Translation]) -> None:
        self.name = name
        self._looks_like = looks_like
        self._translate = translate

    def detect(self, path: Path) -> bool:
        """A YAML mapping that is this tool's."""
        return self._looks_like(load_yaml_mapping(path))

    def discoverable(self, path: Path) -> bool:
        """An ``eval.yaml`` (agentsproof's own discovers it too; the load detects whose it is)."""
        return path.name in ("eval.yaml", "eval.yml")

    def load(self, path: Path, request: ItemRequest) -> Loaded:
        """One item per task, as an EVAL.yaml's tests (single-armed when no skill is found)."""
        return load_translation(self.name, path, self._translate(path), request)

    def lint(self, path: Path) -> list[Any]:
        """What lint says of the file (its own checks, as a case format's)."""
        return lint_translation(self.name, path, self._translate)
