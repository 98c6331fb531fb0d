"""Turn loaded eval files into runner items."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from agentsproof.core.errors import InputError
from agentsproof.formats.eval_yaml.models import AGENT_MAX_TOKENS_WARNING, LoadedEval
from agentsproof.grading.assertions import AssertionsGrader
from agentsproof.grading.llm_rubric import LLMRubricGrader
from agentsproof.grading.registry import GraderConfig
from agentsproof.model.items import Case, EvalItem
from agentsproof.targets.registry import is_agent

if TYPE_CHECKING:
    from agentsproof.formats.eval_yaml.models import UserConfig
    from agentsproof.model.items import SimulatedUser, SkillFile

ASSERTION_WEIGHT_WITH_RUBRIC = 0.7
RUBRIC_WEIGHT_WITH_ASSERTIONS = 0.3


def sha256_text(text: str) -> str:
    """The SHA-256 of ``text`` (UTF-8), in hex: how an item records the source it ran."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def warn_once(ev: LoadedEval) -> None:
    """Each of the item's warnings on stderr once per process (they are also in its result)."""
    from agentsproof.core.notice import warn_once as say

    for w in ev.warnings:
        say(f"{ev.kind}s/{ev.name}: {w}", key=("eval.yaml", ev.kind, ev.name, w))


def check_graders_fit(graders: list[GraderConfig], agent: bool, source: str, field: str) -> None:
    """Graders that read an agent's workspace or skill loading need an agent trial."""
    if agent:
        return
    from agentsproof.grading.registry import entry

    for i, g in enumerate(graders):
        if entry(g.type).agent_only:
            raise InputError(
                source,
                f"{field}[{i}].type",
                f"a {g.type!r} grader grades an agent trial; set 'execution: {{mode: agent, target: NAME}}' or run with --target NAME",
            )


def skill_file(name: str, kind: str, text: str, source: Path, seeds: tuple[Path, ...] = ()) -> SkillFile:
    """The with-arm's skill as agent targets install it: a folder's SKILL.md brings the
    folder's other files (not the workspace seed, eval files or dot-files)."""
    from agentsproof.model.items import SkillFile
    from agentsproof.model.skillfolder import folder_files

    files: tuple[tuple[str, Path], ...] = ()
    if kind == "skill" and source.name == "SKILL.md":
        files = tuple((f.rel, f.path) for f in folder_files(source.parent, exclude=seeds))
    return SkillFile(name=name, kind=kind, text=text, source_path=source, files=files)


def seed_digest(folder: Path | None, files: tuple[tuple[str, bytes], ...] = ()) -> str:
    """A digest of what every trial's workspace starts with (journal fingerprint)."""
    h = hashlib.sha256()
    if folder is not None:
        from agentsproof.isolation.workspace import snapshot

        for rel, (size, digest) in sorted(snapshot(folder).files.items()):
            h.update(f"{rel}\0{size}\0{digest}\n".encode("utf-8", "surrogatepass"))
    for rel, data in files:
        h.update(rel.encode("utf-8", "surrogatepass") + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()[:16]


def item_from_eval(
    ev: LoadedEval,
    *,
    trials: int | None = None,
    threshold: float | None = None,
    target: str | None = None,
    all_tasks: bool = False,
) -> EvalItem:
    """One runner item; ``target`` (``--target``) overrides the file's ``execution``.

    Several tasks (a version 2 ``tasks:`` list, or a version 1 list with ``all_tasks``)
    become the item's cases; ``trials`` is then per case, and the item runs
    trials × cases per arm (see :class:`~agentsproof.model.items.Case`).
    """
    from agentsproof.core.inputs import display

    warn_once(ev)
    cfg = ev.config
    tasks = cfg.run_tasks(all_tasks)
    task = tasks[0]
    name = target or (cfg.execution.target if cfg.execution.mode == "agent" else None) or "chat"
    agent = is_agent(name)
    src = display(ev.path)
    for i, t in enumerate(tasks):
        check_graders_fit(list(t.graders), agent, src, f"{cfg.task_field(i)}.graders")
    if not agent and ev.workspace is not None:
        raise InputError(src, "workspace", "a workspace is for agent trials; set 'execution: {mode: agent, target: NAME}' or run with --target NAME")
    if not agent and ev.environment is not None:
        raise InputError(src, "environment", "an environment is for agent trials; set 'execution: {mode: agent, target: NAME}' or run with --target NAME")
    if not agent and ev.task_workspaces:
        i = min(ev.task_workspaces)
        raise InputError(
            src, f"tasks[{i}].workspace", "a workspace is for agent trials; set 'execution: {mode: agent, target: NAME}' or run with --target NAME"
        )
    seeds = [ev.task_workspaces.get(i, ev.workspace) if agent else None for i in range(len(tasks))]
    cases = tuple(Case(t.name, t.instruction, list(t.graders), seeds[i], tuple(t.turns), _user(t.user)) for i, t in enumerate(tasks)) if len(tasks) > 1 else ()
    per_case = trials if trials is not None else cfg.defaults.trials
    warnings = tuple(w for w in ev.warnings if not agent or "chat trial" not in w)
    if agent and cfg.defaults.max_tokens is not None:
        warnings += (AGENT_MAX_TOKENS_WARNING,)  # execution: {mode: agent}, or --target
    workspace_sha = ""
    if agent:
        workspace_sha = seed_digest(ev.workspace)
        if ev.task_workspaces:
            workspace_sha = sha256_text(workspace_sha + "".join(f"|{i}:{seed_digest(p)}" for i, p in sorted(ev.task_workspaces.items())))[:16]
    return EvalItem(
        id=f"{ev.kind}s/{ev.name}",
        name=ev.name,
        kind=ev.kind,
        source_path=str(ev.source_path),
        system_prompt=ev.system_prompt or ev.source_text,
        task_name=task.name,
        prompt=task.instruction,
        graders=list(task.graders),
        trials=per_case * max(1, len(cases)),
        judge_gold=str(ev.judge_gold) if ev.judge_gold is not None else None,
        judge_kappa_floor=cfg.judge.kappa_floor if cfg.judge is not None else 0.6,
        judge_models=tuple(cfg.judge_models or ()),
        judge_combine=cfg.judge.combine if cfg.judge is not None else "mean",
        timeout=cfg.defaults.timeout,
        threshold=threshold if threshold is not None else cfg.defaults.threshold,
        eval_path=str(ev.path.resolve()),
        source_sha256=sha256_text(ev.system_prompt or ev.source_text),
        warnings=warnings,
        max_tokens=None if agent else cfg.defaults.max_tokens,
        target=name,
        workspace_seed=seeds[0],
        turns=tuple(task.turns),
        user=_user(task.user),
        workspace_sha=workspace_sha,
        skill=skill_file(ev.name, ev.kind, ev.source_text, ev.source_path, ev.seed_folders()) if agent else None,
        cases=cases,
        environment=ev.environment,
    )


def _user(cfg: UserConfig | None) -> SimulatedUser | None:
    """A task's ``user:`` as the runner's :class:`~agentsproof.model.items.SimulatedUser`."""
    from agentsproof.model.items import SimulatedUser

    return None if cfg is None else SimulatedUser(persona=cfg.persona, goal=cfg.goal, max_turns=cfg.max_turns)


def case_graders(expected_output: str | None, assertions: list[str]) -> list[GraderConfig]:
    """The spec's weight rule: 0.7/0.3 when both, 1.0 when one, no graders (score 1.0) when neither."""
    graders: list[GraderConfig] = []
    both = bool(assertions) and expected_output is not None
    if assertions:
        graders.append(AssertionsGrader(type="assertions", assertions=assertions, weight=ASSERTION_WEIGHT_WITH_RUBRIC if both else 1.0))
    if expected_output is not None:
        rubric = (
            "Score how well the response delivers the expected output described below. 1.0 = fully delivers it, "
            "0.5 = partly, 0 = not at all.\n\nExpected output:\n" + expected_output
        )
        graders.append(LLMRubricGrader(type="llm_rubric", rubric=rubric, weight=RUBRIC_WEIGHT_WITH_ASSERTIONS if both else 1.0))
    return graders


def workspace_name(rel: str) -> str:
    """Where an attached file lands in an agent's workspace: its path as written, or its
    name when the path climbs out of the eval's folder (``../data/x.csv`` → ``x.csv``)."""
    parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    return "/".join(parts) if ".." not in parts else parts[-1]


def plugin_name_for_eval(path: Path) -> str:
    """evals/<plugin>/skills/<skill>/eval.yaml -> <plugin>; else the eval's folder parent name."""
    parts = path.resolve().parts
    for marker in ("skills", "agents"):
        if marker in parts[:-1]:
            idx = len(parts) - 1 - parts[::-1].index(marker)
            if idx >= 1:
                return parts[idx - 1]
    return path.resolve().parent.name


def plugin_name_for_dir(directory: Path) -> str:
    """The plugin a folder of evals belongs to: the parent of a ``skills``/``agents`` folder, else the folder's own name."""
    d = directory.resolve()
    if d.name in ("skills", "agents") and d.parent.name:
        return d.parent.name
    return d.name
