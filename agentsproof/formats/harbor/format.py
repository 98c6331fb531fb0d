"""The Harbor task format: a folder with ``task.toml`` and ``instruction.md``, one item per task.

``agentsproof eval TASK_DIR`` runs one task; ``eval-all DIR`` every task folder below DIR
(its ``task.toml`` is what discovery finds). Each task is a case item:

- the prompt is ``instruction.md``; the target is ``--target`` (an agent: a Harbor task
  has no chat form);
- the environment is the task's ``environment/`` (its Dockerfile and build context, or
  ``[environment] docker_image``) with ``[environment]`` cpus, memory, storage, workdir,
  allow_internet and build_timeout_sec (:mod:`agentsproof.formats.harbor.task`);
- the one grader is ``verifier`` (``tests/`` copied to ``/tests`` after the agent, ``tests/test.sh``
  run there, the reward its score), with ``[verifier]`` timeout_sec, env and user; the trial's
  timeout is ``[agent] timeout_sec`` (``--timeout`` replaces it);
- ``solution/solve.sh`` is the oracle preflight: applied in a fresh container, then the
  verifier; the reward must be the maximum, 1;
- the skills (:mod:`agentsproof.formats.harbor.skills`): the with-arm installs the task's
  skill and its image keeps the Dockerfile's COPY of them; the baseline's image is built with
  the skill folders emptied. A task without skills runs its with-arm only.

The threshold is 1 (a task is passed when its reward is full; ``--threshold`` replaces it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentsproof.core.errors import InputError
from agentsproof.formats.base import ItemRequest, Loaded
from agentsproof.formats.harbor.task import INSTRUCTION_FILE, TASK_FILE, HarborTask, is_task_folder, read_task, task_folder
from agentsproof.model.environment import Environment
from agentsproof.model.items import EvalItem
from agentsproof.targets.registry import is_agent

if TYPE_CHECKING:
    from agentsproof.formats.lint.problems import Problem

DEFAULT_AGENT_TIMEOUT = 600.0
"""Harbor's default ``[agent] timeout_sec``."""
THRESHOLD = 1.0


def detect(path: Path) -> bool:
    """A Harbor task folder, or its ``task.toml`` beside an ``instruction.md``."""
    p = Path(path)
    if p.name == TASK_FILE and p.is_file():
        return is_task_folder(p.parent)
    return is_task_folder(p)


def discoverable(path: Path) -> bool:
    """eval-all finds a task by its ``task.toml`` (beside an ``instruction.md``)."""
    p = Path(path)
    return p.name == TASK_FILE and is_task_folder(p.parent)


def environment_of(task: HarborTask, empty_in_baseline: tuple[str, ...]) -> Environment:
    """The task's container environment: its Dockerfile and context (or its docker_image) and its limits."""
    from agentsproof.model.environment import DEFAULT_BUILD_TIMEOUT, DEFAULT_DISK_MB, DEFAULT_MEMORY_MB

    context = task.folder.resolve() / "environment"
    return Environment(
        source=task.source,
        field="environment",
        image=task.docker_image,
        dockerfile=task.dockerfile.resolve() if task.dockerfile is not None else None,
        context=context if task.dockerfile is not None else None,
        workdir=task.workdir,
        cpus=task.cpus,
        memory_mb=task.memory_mb if task.memory_mb is not None else DEFAULT_MEMORY_MB,
        disk_mb=task.storage_mb if task.storage_mb is not None else DEFAULT_DISK_MB,
        allow_internet=task.allow_internet,
        build_timeout=task.build_timeout if task.build_timeout is not None else DEFAULT_BUILD_TIMEOUT,
        baseline_empty=empty_in_baseline if task.dockerfile is not None else (),
    )


def _say_ignored(task: HarborTask) -> None:
    from agentsproof.core.notice import warn_once

    for key in task.ignored:
        warn_once(f"{task.source}: {key}: not a key agentsproof knows; ignored", key=("harbor", task.source, key))


def load_task(path: Path, request: ItemRequest) -> tuple[HarborTask, EvalItem, Loaded]:
    """The task, its item and the Loaded a one-task run uses; InputError naming file and key."""
    from agentsproof.core.inputs import display, safe_name
    from agentsproof.formats.eval_yaml.items import seed_digest, sha256_text, skill_file
    from agentsproof.formats.harbor.skills import find_skills
    from agentsproof.grading.verifier import DEFAULT_TIMEOUT, VerifierGrader
    from agentsproof.model.items import BASELINE_SYSTEM_PROMPT

    task = read_task(path)
    _say_ignored(task)
    if not request.target or not is_agent(request.target):
        raise InputError(
            "command line",
            "--target",
            f"{display(task.folder)} is a Harbor task: an agent runs it in its container; give --target (claude-code, codex, copilot, or a targets.yaml name)",
        )
    found = find_skills(task.folder / "environment", task.dockerfile, task.skills_dir, task.source)
    skills = [skill_file(safe_name(s.name, fallback="skill"), "skill", _read_skill(s.skill_file), s.skill_file) for s in found.skills]
    grader = VerifierGrader(
        type="verifier",
        timeout=task.verifier_timeout if task.verifier_timeout is not None else DEFAULT_TIMEOUT,
        env=task.verifier_env,
        user=task.verifier_user,
    )
    name = safe_name(task.name, fallback="task")
    note = found.note()
    item = EvalItem(
        id=f"case-{name}",
        name=name,
        kind="case",
        source_path=str(task.toml.resolve()),
        system_prompt=skills[0].text if len(skills) == 1 else BASELINE_SYSTEM_PROMPT,  # several: installed, none privileged
        task_name=name,
        prompt=task.instruction,
        graders=[grader],
        trials=request.case_trials(),
        timeout=request.timeout if request.timeout is not None else (task.agent_timeout or DEFAULT_AGENT_TIMEOUT),
        threshold=request.threshold if request.threshold is not None else THRESHOLD,
        eval_path=str(task.toml.resolve()),
        source_sha256=sha256_text(task.instruction),
        warnings=(note,) if note else (),
        target=request.target,
        workspace_sha=seed_digest(task.folder),
        skill=skills[0] if skills else None,
        with_skills=tuple(skills) if len(skills) > 1 else (),
        environment=environment_of(task, found.empty_in_baseline),
    )
    loaded = Loaded(
        format="harbor",
        path=task.toml,
        items=[item],
        name=name,
        report="tc-eval",
        plugin=name,
        settings={"trials": item.trials, "threshold": item.threshold, "timeout": item.timeout},
        skill_path=skills[0].source_path if skills else None,
        single_arm=not skills,
    )
    return task, item, loaded


def _read_skill(path: Path) -> str:
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_text

    text = read_text(path, source=display(path), field=None, max_bytes=MAX_SOURCE_FILE_BYTES, what="skill file")
    if not text.strip():
        raise InputError(display(path), None, "is empty; a skill needs its instructions")
    return text


def load(path: Path, request: ItemRequest) -> Loaded:
    """A Harbor task folder as one item, with its oracle preflight when it has ``solution/solve.sh``."""
    task, item, loaded = load_task(path, request)
    if task.solution is not None:
        from agentsproof.formats.harbor.oracle import oracle_plan

        loaded.oracle_plan = oracle_plan(task, item)
    return loaded


@dataclass(frozen=True)
class HarborFormat:
    """The Harbor task format (Terminal-Bench 2.0, SkillsBench)."""

    name: str = "harbor"
    owns_folder: bool = True
    """eval-all runs a task folder as one item: eval files below it (a skill's evals/) are not its own evals."""

    def detect(self, path: Path) -> bool:
        """A task folder (or its task.toml)."""
        return detect(path)

    def discoverable(self, path: Path) -> bool:
        """A task.toml beside an instruction.md."""
        return discoverable(path)

    def load(self, path: Path, request: ItemRequest) -> Loaded:
        """The task as one case item."""
        return load(task_folder(Path(path)), request)

    def lint(self, path: Path) -> list[Problem]:
        """``agentsproof lint``'s checks of the task folder (agentsproof.formats.lint.harbor)."""
        from agentsproof.formats.lint.harbor import lint_task

        return lint_task(path)


FORMAT = HarborFormat()

__all__ = ["FORMAT", "INSTRUCTION_FILE", "TASK_FILE", "detect", "discoverable", "load", "load_task"]
