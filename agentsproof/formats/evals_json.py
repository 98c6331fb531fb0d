"""evals.json: hand-authored test cases (``agentsproof tc-eval evals.json``), one item per case."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from agentsproof.core.errors import InputError
from agentsproof.core.validation import format_validation_error
from agentsproof.formats.base import ItemRequest, Loaded
from agentsproof.formats.eval_yaml.items import case_graders, seed_digest, sha256_text, skill_file, workspace_name
from agentsproof.model.items import EvalItem
from agentsproof.model.tc_eval import MAX_FILE_BYTES, LoadedCase, LoadedTCEval, TCEvalConfig
from agentsproof.targets.registry import CHAT, is_agent

if TYPE_CHECKING:
    from agentsproof.formats.lint.checks import FileView


def load_tc_eval(path: str | Path) -> LoadedTCEval:
    """Read and validate an evals.json with its skill and attached files; InputError naming the field otherwise."""
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_json_file, read_text

    p = Path(path)
    src = display(p)
    if not p.exists() and not p.is_symlink():
        raise InputError(src, None, "file not found")
    if p.is_dir():
        raise InputError(src, None, "is a directory, expected an evals.json file")
    from agentsproof.formats.skill_creator import folded_notes, normalise, trigger_entries

    data = read_json_file(p)
    if trigger_entries(data) is not None:
        raise InputError(
            src,
            None,
            "is a skill-creator trigger-eval set ({query, should_trigger}); it runs as an activation suite: `agentsproof activation` on this file (docs/activation.md)",
        )
    norm = normalise(data, p)
    data = norm.data
    if not isinstance(data, dict):
        raise InputError(src, None, "expected a JSON object at the top level (or skill-creator's list of cases in a skill's evals/ folder)")
    graded = [c for i, c in enumerate(data.get("evals") or []) if i not in norm.trigger_only] if isinstance(data.get("evals"), list) else None
    if graded is not None and norm.trigger_only:
        if not graded:
            raise InputError(
                src, "evals", "every case only says whether the skill should load (should_trigger); run it with `agentsproof activation` on this file"
            )
        data = {**data, "evals": graded}
    try:
        cfg = TCEvalConfig.model_validate(data)
    except ValidationError as exc:
        field, msg = format_validation_error(exc)
        raise InputError(src, field, msg) from None

    skill, skill_notes = _skill_file(cfg.skill_name, p, src)
    from agentsproof.core.notice import note_once

    for line in folded_notes([*norm.notes, *skill_notes]):
        note_once(f"{src}: {line}")
    skill_text = read_text(skill, source=src, field="skill_name", max_bytes=MAX_SOURCE_FILE_BYTES, what="skill file")
    if not skill_text.strip():
        raise InputError(src, "skill_name", f"{cfg.skill_name!r} is empty")

    cases: list[LoadedCase] = []
    for i, case in enumerate(cfg.evals):
        contents: list[tuple[str, str]] = []
        paths: list[Path] = []
        error = None
        for j, rel in enumerate(case.files):
            field = f"evals[{i}].files[{j}]"
            try:
                target = _attached(rel, p, skill, field, src)
                for name, text, where in _read_attached(rel, target, src, field):
                    contents.append((name, text))
                    paths.append(where)
            except InputError as err:  # one case's missing fixture errors that case, not the file
                if not _one_case_problem(err):
                    raise
                error = f"{field}: {err.message}"
                note_once(f"{src}: {error}; case {case.id} errors (its trials are errored with this reason), the others run")
                break
        cases.append(LoadedCase(case=case, file_contents=contents, file_paths=paths, error=error))
    triggers = [(prompt, st) for _, prompt, st in norm.triggers]
    # a case with neither assertions nor expected_output runs (seed 000's weight rule: "neither: score always
    # 1.0"); its outputs are shown side by side, and lint warns that it cannot show a difference
    return LoadedTCEval(path=p, config=cfg, skill_path=skill, skill_text=skill_text, cases=cases, triggers=triggers)


MAX_FOLDER_FILES = 50
"""How many files a fixture that is a folder attaches at most (the rest are named in the error)."""


def _one_case_problem(err: InputError) -> bool:
    """A fixture that is missing or cannot be read: that case's problem (a path that leads out of
    the eval's folder, or a FIFO, socket or device, stays the file's error: it is never read)."""
    return any(w in err.message for w in ("not found", "cannot read", "bytes", "not UTF-8", "not valid UTF-8", "no files"))


def _read_attached(rel: str, target: Path, src: str, field: str) -> list[tuple[str, str, Path]]:
    """The (name, text) pairs a fixture attaches: the file, or every regular file below a folder
    (skill-creator attaches a folder's files; sorted, symlinks skipped, at most
    :data:`MAX_FOLDER_FILES`), named by their path below it."""
    from agentsproof.core.inputs import read_text

    if not target.is_dir():
        return [(rel, read_text(target, source=src, field=field, max_bytes=MAX_FILE_BYTES, what="attached file"), target)]
    found = sorted(
        f for f in target.rglob("*") if f.is_file() and not f.is_symlink() and not any(part.is_symlink() for part in f.parents if part.is_relative_to(target))
    )
    if not found:
        raise InputError(src, field, f"folder {rel!r} has no files to attach")
    if len(found) > MAX_FOLDER_FILES:
        raise InputError(src, field, f"folder {rel!r} holds {len(found)} files, over the {MAX_FOLDER_FILES} a fixture attaches; name the files")
    base = rel.rstrip("/")
    return [
        (f"{base}/{f.relative_to(target).as_posix()}", read_text(f, source=src, field=field, max_bytes=MAX_FILE_BYTES, what="attached file"), f) for f in found
    ]


SEARCH_LEVELS = 3
"""How many folders above the evals.json's own a skill named by ``skill_name`` is looked for."""


def _skill_file(ref: str, p: Path, src: str) -> tuple[Path, list[str]]:
    """``skill_name``: a file beside the JSON, else (skill-creator's ``<skill>/evals/evals.json``)
    the skill's name, meaning the SKILL.md above the evals/ folder; else, for a name, the
    ``<name>/SKILL.md`` (or ``skills/<name>/SKILL.md``) in the JSON's folder or one of the
    :data:`SEARCH_LEVELS` folders above it (evals kept apart from their skills)."""
    from agentsproof.core.inputs import confined, display

    folder = p.resolve().parent
    above = folder.parent / "SKILL.md"
    is_name = "/" not in ref and "\\" not in ref and not ref.lower().endswith((".md", ".txt"))
    if is_name:
        if folder.name == "evals" and above.is_file():
            # skill-creator's layout: the SKILL.md above evals/ is the skill; skill_name is its label
            names = _names(above)
            if ref in names:
                return above, []
            return above, [
                f"skill_name: {ref!r} is a label here; the skill is the SKILL.md above this evals/ folder ({display(above)}, named {sorted(names)[0]!r})"
            ]
        found = _named_skill(ref, folder)
        if found is not None:
            return found, []
    skill = confined(ref, p, "skill_name")
    if not skill.exists():
        hint = "; a skill's name works from <skill>/evals/evals.json with the SKILL.md above it, or names a <name>/SKILL.md near it" if is_name else ""
        raise InputError(src, "skill_name", f"file {ref!r} not found (looked in {display(p.parent)}){hint}")
    return skill, []


def _names(skill_md: Path) -> set[str]:
    """What a SKILL.md answers to: its folder's name and its frontmatter ``name``."""
    from agentsproof.model.skillfolder import frontmatter_name

    try:
        declared = frontmatter_name(skill_md.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        declared = None
    return {skill_md.parent.name} | ({declared} if declared else set())


def _named_skill(ref: str, folder: Path) -> Path | None:
    """The skill named ``ref`` near ``folder``: ``<d>/SKILL.md`` answering to that name (its
    folder or frontmatter ``name``), ``<d>/<ref>/SKILL.md`` or ``<d>/skills/<ref>/SKILL.md``,
    for ``folder`` and the folders above it, nearest first."""
    if ref in (".", "..") or not ref.strip():
        return None
    for d in [folder, *folder.parents][: SEARCH_LEVELS + 1]:
        own = d / "SKILL.md"  # the evals.json inside the skill folder, evals/ or not
        if own.is_file() and not own.is_symlink() and ref in _names(own):
            return own.resolve()
        for candidate in (d / ref / "SKILL.md", d / "skills" / ref / "SKILL.md", *_agent_skill_dirs(d, ref)):
            if candidate.is_file() and not candidate.is_symlink():
                return candidate.resolve()
    return None


AGENT_SKILL_DIRS = (".agents/skills", ".claude/skills", ".github/skills", ".codex/skills")
"""Where agents install skills in a project (agentv's examples keep them so, in the project
or its ``workspace/`` template): a skill named by ``skill_name`` is looked for there too."""


def _agent_skill_dirs(d: Path, ref: str) -> list[Path]:
    return [base / sub / ref / "SKILL.md" for base in (d, d / "workspace") for sub in AGENT_SKILL_DIRS]


def _attached(rel: str, p: Path, skill: Path, field: str, src: str) -> Path:
    """A case's file: relative to the JSON (or the skill folder above its evals/), else, for
    a skill found elsewhere by its name, relative to that skill's folder (skill-creator's
    "relative to skill root"), confined to it."""
    from agentsproof.core.inputs import confined, display, eval_root

    target = confined(rel, p, field)
    root = eval_root(p)
    if not target.exists() and root != p.resolve().parent:  # skill-creator: relative to the skill folder
        alt = (root / rel).resolve()
        target = alt if alt.is_relative_to(root.resolve()) and alt.exists() else target
    if not target.exists() and skill.name == "SKILL.md" and skill.parent != root:
        target = confined(rel, skill, field)  # refuses a path out of the skill folder
    if not target.exists():
        tail = _by_tail(rel, p, root)
        if tail is not None:
            from agentsproof.core.notice import note_once

            note_once(f"{src}: {field}: {rel!r} is not there; read {display(tail)}, the same path below this eval's folder")
            return tail
        raise InputError(src, field, f"file {rel!r} not found")
    return target


def _by_tail(rel: str, p: Path, root: Path) -> Path | None:
    """A fixture written relative to a folder above the skill (``<repo>/evals/fixtures/x`` from a
    repository checked out under another name): the longest tail of ``rel`` that exists below
    the eval's own folder or the skill folder, never outside them."""
    parts = [x for x in rel.replace("\\", "/").split("/") if x not in ("", ".")]
    if ".." in parts:
        return None
    folder = p.resolve().parent
    for k in range(1, len(parts)):
        for base in (folder, root.resolve()):
            cand = (base / "/".join(parts[k:])).resolve()
            if cand.is_relative_to(root.resolve()) and cand.exists():
                return cand
    return None


def items_from_tc_eval(tc: LoadedTCEval, *, trials: int, threshold: float, timeout: float, target: str | None = None) -> list[EvalItem]:
    """One item per case; with ``target`` (an agent) each case's files land in the workspace."""

    sha = sha256_text(tc.skill_text)
    agent = target is not None and is_agent(target)
    items = []
    for lc in tc.cases:
        case = lc.case
        files = tuple((workspace_name(rel), text.encode("utf-8")) for rel, text in lc.file_contents) if agent else ()
        prompt = lc.full_prompt()
        if agent:
            prompt = case.prompt
            if files:
                prompt += "\n\nFiles in your working directory: " + ", ".join(name for name, _ in files)
        items.append(
            EvalItem(
                id=f"case-{case.id}",
                name=case.name or f"case {case.id}",
                kind="case",
                source_path=str(tc.skill_path),
                system_prompt=tc.skill_text,
                task_name=f"case-{case.id}",
                prompt=prompt,
                graders=case_graders(case.expected_output, case.assertions),
                trials=trials,
                timeout=timeout,
                threshold=threshold,
                eval_path=str(tc.path.resolve()),
                source_sha256=sha,
                target=target if agent and target is not None else CHAT,
                workspace_files=files,
                workspace_sha=seed_digest(None, files) if agent else "",
                load_error=lc.error,
                skill=skill_file(
                    tc.skill_path.parent.name if tc.skill_path.name == "SKILL.md" else tc.skill_path.stem,
                    "skill",
                    tc.skill_text,
                    tc.skill_path,
                )
                if agent
                else None,
            )
        )
    return items


def tc_eval_name(tc: LoadedTCEval) -> str:
    """What a tc-eval report is called: the evals file's stem, unless that is the generic
    ``evals`` — then the skill (its folder, for a SKILL.md) so two skills' reports differ."""
    stem = tc.path.stem
    if stem.lower() != "evals":
        return stem
    skill = tc.skill_path
    return skill.parent.name if skill.name.lower() == "skill.md" else skill.stem


class EvalsJson:
    """The evals.json format (skill-creator's, run by ``tc-eval``): one item per case."""

    name = "evals.json"

    def detect(self, path: Path) -> bool:
        """A ``.json`` file."""
        return path.suffix.lower() == ".json"

    def discoverable(self, path: Path) -> bool:
        """skill-creator's layout: ``<skill>/evals/evals.json`` (beside the skill's SKILL.md or not: one
        that does not load is listed by ``eval-all`` with its error, never skipped in silence), or
        the evals kept apart from the skills, ``evals/<skill>/evals.json``."""
        return path.name == "evals.json" and "evals" in (path.parent.name, path.parent.parent.name)

    def load(self, path: Path, request: ItemRequest) -> Loaded:
        """One item per case (``--skill`` is refused: the file names its skill in ``skill_name``)."""
        if request.skill is not None:
            raise InputError("command line", "--skill", "is for a JSONL dataset or an EVAL.yaml; an evals.json names its skill in skill_name")
        import dataclasses

        tc = load_tc_eval(path)
        trials, threshold, timeout = request.case_trials(), request.case_threshold(), request.case_timeout()
        items = items_from_tc_eval(tc, trials=trials, threshold=threshold, timeout=timeout, target=request.target)
        name = tc_eval_name(tc)
        if request.in_plugin:
            prefix = name + "/"
            items = [dataclasses.replace(it, id=prefix + it.id, name=prefix + it.name) for it in items]
        settings = {"trials": trials, "threshold": threshold, "timeout": timeout}
        return Loaded(self.name, Path(path), items, name, settings=settings, skill_path=tc.skill_path)

    def lint_view(self, path: Path, src: str, loaded: Loaded | None = None) -> FileView:
        """``agentsproof lint``'s view of its cases (:mod:`agentsproof.formats.lint.views`)."""
        from agentsproof.formats.lint.views import CaseFields, cases_view

        return cases_view(loaded or self.load(path, ItemRequest()), src, CaseFields("evals", "assertions", "prompt"))


FORMAT = EvalsJson()
