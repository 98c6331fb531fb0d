"""An EVAL.yaml as runner items: one case per test, through the same engine as tc-eval.

The skill is ``--skill FILE``, else found as the reference lays skills out
(``skills/<name>/evals/EVAL.yaml`` → ``skills/<name>/SKILL.md``, or a SKILL.md beside the
file). With a skill, the with-arm gets it and the baseline arm does not; without one the
run is single-armed (the model, or the target, alone). ``execution.target`` (or
``target``) is a targets.yaml name, as ``--target`` is; the one ``providers`` entry is a
targets.yaml name or an agentv provider label (:mod:`agentsproof.formats.agentevals.providers`);
``default`` means the chat model unless a targets.yaml or .agentv/providers.yaml defines it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentsproof.core.errors import InputError
from agentsproof.formats.agentevals.asserts import build_graders
from agentsproof.formats.agentevals.negation import SCRIPT_TARGETS
from agentsproof.formats.agentevals.parse import EvalSuite, parse_suite
from agentsproof.targets.registry import CHAT, is_agent

if TYPE_CHECKING:
    from agentsproof.model.results import ItemResult


class HasItems(Protocol):
    """A run, or anything holding some of its items (``label_checks`` reads only ``items``)."""

    @property
    def items(self) -> Sequence[ItemResult]:
        """The items' results."""
        ...


EVAL_YAML_THRESHOLD = 0.8
"""agentv's pass mark for a test's score; also the default pass rate of a case."""
NAMES = ("EVAL.yaml", "EVAL.yml")


@dataclass
class LoadedSuite:
    """An EVAL.yaml read and validated: the suite, its skill (path and text) if one is found, and each test's graders."""

    suite: EvalSuite
    skill: tuple[Path, str] | None
    graders: dict[str, Any] = field(default_factory=dict)
    """Per test id: its :class:`~agentsproof.formats.agentevals.asserts.Builder`."""

    @property
    def name(self) -> str:
        """What the run is called: the file's ``name:``, else one from its path (``demo.eval.yaml`` → ``demo``, the skill's folder)."""
        return self.suite.name


def is_eval_yaml(path: Path) -> bool:
    """``EVAL.yaml``, ``*.eval.yaml``, or a YAML file with ``tests`` and no ``skill``/``agent``."""
    if path.is_dir():
        return False
    name = path.name
    if name in NAMES or name.lower().endswith((".eval.yaml", ".eval.yml")):
        return True
    if path.suffix.lower() == ".jsonl":  # agentv's tests one a line (formats/agentevals/cases.py)
        from agentsproof.formats.agentevals.cases import is_agentv_jsonl

        return is_agentv_jsonl(path)
    if path.suffix.lower() not in (".yaml", ".yml") or not path.is_file():
        return False
    from agentsproof.core.validation import read_yaml
    from agentsproof.formats.agentevals.parse import looks_like_eval_yaml

    return looks_like_eval_yaml(read_yaml(path))


def drop_duplicates(paths: list[Path]) -> list[Path]:
    """An evals.json beside an EVAL.yaml holds the same cases (the reference keeps both): the EVAL.yaml runs."""
    return [p for p in paths if not (p.name == "evals.json" and any((p.parent / n).is_file() for n in NAMES))]


def find_skill(path: Path, given: Path | None) -> tuple[Path, str] | None:
    """The skill an EVAL.yaml is for, as (path, text): ``--skill``, else the SKILL.md beside it or above its ``evals/`` folder; None when there is none."""
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_text

    if given is not None:
        if not Path(given).is_file():
            raise InputError(display(given), "--skill", "file not found")
        skill = Path(given)
    else:
        folder = path.resolve().parent
        near = [folder / "SKILL.md", folder.parent / "SKILL.md"] if folder.name == "evals" else [folder / "SKILL.md"]
        skill = next((p for p in near if p.is_file()), None)  # type: ignore[assignment]
        if skill is None:
            return None
    text = read_text(skill, source=display(skill), field="--skill" if given else None, max_bytes=MAX_SOURCE_FILE_BYTES, what="skill file")
    if not text.strip():
        raise InputError(display(skill), None, "the skill file is empty")
    return skill, text


def skill_name(skill: tuple[Path, str] | None) -> str | None:
    """The skill's name: its folder's for a SKILL.md, else the file's stem (None without a skill)."""
    if skill is None:
        return None
    p = skill[0]
    return p.resolve().parent.name if p.name == "SKILL.md" else p.stem


def load_suite(path: Path, skill: Path | None = None) -> LoadedSuite:
    """Read and validate an EVAL.yaml, find its skill and build every test's graders; InputError naming the field otherwise."""
    from agentsproof.core.inputs import display
    from agentsproof.core.validation import read_yaml
    from agentsproof.formats.agentevals.cases import is_agentv_jsonl, jsonl_suite

    suite = parse_suite(jsonl_suite(path) if is_agentv_jsonl(path) else read_yaml(path), path)
    found = find_skill(path, skill)
    loaded = LoadedSuite(suite=suite, skill=found)
    for i, test in enumerate(suite.tests):
        loaded.graders[test.id] = build_graders(display(path), path, test, skill_name(found), f"{suite.tests_key}[{i}]")
    return loaded


def _target(loaded: LoadedSuite, cfg_target: str | None, targets_file: Path | None) -> str:
    """The run's target name: --target, else the file's, else chat."""
    from agentsproof.core.inputs import display
    from agentsproof.targets.config import find_target

    if cfg_target:
        return cfg_target
    name, where = loaded.suite.target, loaded.suite.target_field
    if name is None:
        return CHAT
    try:
        find_target(name, loaded.suite.path, targets_file)
    except InputError as err:
        if err.source is not None:  # a file that defines it is wrong (a targets.yaml, an agentv replay entry): that, not "unknown"
            raise
        from agentsproof.formats.agentevals.providers import find_providers_file, resolve_label, say_once

        found = find_providers_file(loaded.suite.path)
        if name == "default" and found is None:
            return CHAT  # agentv's name for "the model you configured"
        # execution.target names a provider label too (agentv's examples say `target: llm`,
        # its older ones `gemini_base` from a .agentv/targets.yaml not in the project): with
        # no providers file it runs as the configured model, said once (--target picks another)
        if where is None:
            raise InputError(display(loaded.suite.path), where, err.message) from None
        resolved = resolve_label(name, loaded.suite.path, display(loaded.suite.path), where)
        say_once(display(loaded.suite.path), resolved.note)
        return resolved.target
    return name


def suite_items(
    loaded: LoadedSuite,
    *,
    trials: int,
    threshold: float | None,
    timeout: float,
    target: str | None,
    targets_file: Path | None = None,
    prefix: str = "",
) -> list[Any]:
    """One runner item per test; single-armed when there is no skill."""
    from agentsproof.core.inputs import MAX_ATTACHED_FILE_BYTES, display, read_text
    from agentsproof.formats.eval_yaml.items import seed_digest, sha256_text, skill_file, workspace_name
    from agentsproof.model.items import BASELINE_SYSTEM_PROMPT, EvalItem

    suite, skill = loaded.suite, loaded.skill
    name = _target(loaded, target, targets_file)
    agent = is_agent(name)
    from agentsproof.formats.agentevals.providers import say_once

    for note in suite.notes:
        say_once(display(suite.path), note)
    seed = suite.workdir if agent else None
    if suite.environment is not None and not agent:
        say_once(display(suite.path), "environment (docker): a container for an agent's trials; the model alone runs without one (run with --target NAME)")
    if suite.setup and not agent:
        say_once(
            display(suite.path),
            f"{', '.join(sorted({c.label.split(':')[0] for c in suite.setup}))}: set-up for an agent's workspace; "
            "the model alone has no workspace, so it is not run (run with --target NAME to run it before every trial)",
        )
    src = display(suite.path)
    prompt_sys = skill[1] if skill else BASELINE_SYSTEM_PROMPT
    items = []
    for i, test in enumerate(suite.tests):
        built = loaded.graders[test.id]
        if test.load_error:
            say_once(src, f"test {test.id!r} errors (its trials are errored with the reason), the others run: {test.load_error}")
        if built.needs_agent and not agent:
            raise InputError(
                src,
                built.needs_agent,
                "a skill-used or files check grades an agent trial; set execution.target to an agent (targets.yaml) or run with --target NAME",
            )
        texts = [
            (rel, read_text(p, source=src, field=f"{suite.tests_key}[{i}].input", max_bytes=MAX_ATTACHED_FILE_BYTES, what="attached file"))
            for rel, p in test.files
        ]
        files = tuple((workspace_name(rel), t.encode("utf-8")) for rel, t in texts) if agent else ()
        prompt = test.prompt
        if agent and files:
            prompt += "\n\nFiles in your working directory: " + ", ".join(n for n, _ in files)
        elif texts:
            prompt += "\n\nAttached files:" + "".join(f"\n\n--- {rel} ---\n{t.rstrip()}\n--- end of {rel} ---" for rel, t in texts)
        transform: tuple[str, ...] = ()
        load_error = test.load_error
        if test.transform is not None:  # agentv's output transform: formats/agentevals/transform.py
            from agentsproof.formats.agentevals.transform import transform_argv

            context = {"vars": test.vars, "prompt": {"raw": prompt}, "metadata": test.raw.get("metadata")}
            try:
                transform = transform_argv(src, test.transform[0], test.transform[1], suite.path, context)
            except InputError as err:  # this test's trials error with the reason; the others run
                load_error = load_error or str(err)
        item = EvalItem(
            id=f"{prefix}case-{test.id}",
            name=f"{prefix}{test.id}",
            kind="case",
            source_path=str(skill[0]) if skill else str(suite.path),
            system_prompt=prompt_sys,
            task_name=test.id,
            prompt=prompt,
            graders=list(built.graders),
            trials=trials,
            timeout=timeout,
            threshold=threshold if threshold is not None else suite.threshold if suite.threshold is not None else EVAL_YAML_THRESHOLD,
            eval_path=str(suite.path.resolve()),
            source_sha256=sha256_text(prompt_sys),
            target=name,
            workspace_seed=seed,
            workspace_files=files,
            workspace_sha=seed_digest(seed, files) if agent else "",
            turns=test.turns,
            setup=tuple(dataclasses.replace(c, test_id=test.id) for c in suite.setup) if agent else (),
            load_error=load_error,
            transform=transform,
            environment=suite.environment if agent else None,
            skill=skill_file(skill_name(skill) or "skill", "skill", skill[1], skill[0]) if agent and skill else None,
        )
        items.append(item if skill else dataclasses.replace(item, arms=("with",)))
    return items


def label_checks(loaded: LoadedSuite, run: HasItems, prefix: str = "") -> None:
    """Name each check after its assertion (its ``metric``, or its type) in the report."""
    by_id = {f"{prefix}case-{t.id}": loaded.graders[t.id].labels for t in loaded.suite.tests}
    for item in run.items:
        labels = by_id.get(item.id)
        if labels is None:
            continue
        for arm in (item.with_arm, item.without_arm):
            for trial in arm.trials:
                for label, g in zip(labels, trial.graders, strict=False):  # an errored trial may have fewer
                    for c in g.checks:
                        if label in SCRIPT_TARGETS:
                            c.target = SCRIPT_TARGETS[label]
                        if label not in ("criteria", "rubrics", c.kind):
                            c.kind = f"{label}: {c.kind}" if not c.kind.startswith(label) else c.kind
