"""Eval-file models (eval.yaml v1/v2) and their loader.

Validation is strict: unknown keys, wrong types, bad regexes, non-positive weights and
missing skill/agent files are all :class:`~agentsproof.core.errors.InputError`, which the CLI
prints as one line naming the file and the field, with exit code 30.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentsproof.core.errors import InputError
from agentsproof.core.validation import format_validation_error, read_yaml
from agentsproof.formats.activation_config import ActivationConfig
from agentsproof.grading.registry import GRADER_TYPES, GraderConfig
from agentsproof.model.environment import Environment, EnvironmentSpec
from agentsproof.model.graders import FieldError
from agentsproof.model.graders import Strict as _Strict
from agentsproof.model.items import DEFAULT_THRESHOLD, DEFAULT_TIMEOUT, DEFAULT_TRIALS
from agentsproof.model.oracle import Oracle

MAX_TIMEOUT = 86_400.0
"""One day: longer per-trial timeouts are a typo, not a plan."""
MAX_REPLY_TOKENS = 1_000_000
"""A larger ``defaults.max_tokens`` is a typo: no model replies at that length."""
AGENT_MAX_TOKENS_WARNING = "defaults.max_tokens caps chat replies only; an agent target sets its own limits, so it is ignored here"


class Defaults(_Strict):
    """``defaults:``: trials, timeout, threshold and reply cap for every task."""

    trials: int = Field(DEFAULT_TRIALS, ge=1, le=1000, strict=True, description="Trials per arm.")
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0, le=MAX_TIMEOUT, strict=True, allow_inf_nan=False, description="Seconds per trial.")
    threshold: float = Field(DEFAULT_THRESHOLD, ge=0, le=1, strict=True, allow_inf_nan=False, description="Pass rate required in the with-skill arm.")
    max_tokens: int | None = Field(
        None,
        ge=1,
        le=MAX_REPLY_TOKENS,
        strict=True,
        description="Reply cap (tokens) of every chat call of the agent under test, in both arms (not the judge's). Default: the provider's own.",
    )


class Execution(_Strict):
    """How a trial runs: one chat call (the default) or a real agent (a target)."""

    mode: Literal["chat", "agent"] = "chat"
    target: str | None = Field(None, min_length=1, description="A target from targets.yaml (or the built-in 'copilot').")

    @model_validator(mode="after")
    def _target_for_agents(self) -> Execution:
        if self.mode == "agent" and self.target is None:
            raise FieldError("target", "mode 'agent' needs a target name (e.g. 'copilot', or one from targets.yaml)")
        if self.mode == "chat" and self.target is not None:
            raise FieldError("mode", "a target runs an agent; set 'mode: agent' (or drop 'target')")
        return self


MAX_TURNS = 20
"""Follow-up messages a task may list."""


class UserConfig(_Strict):
    """A simulated user (played by the judge model) who answers each reply of a multi-turn trial."""

    persona: str = Field(min_length=1, description="Who the user is and how they talk.")
    goal: str = Field(min_length=1, description="What the user wants; they say DONE once they have it.")
    max_turns: int = Field(3, ge=1, le=MAX_TURNS, strict=True, description="Follow-up messages at most.")


class JudgeConfig(_Strict):
    """``judge: {gold: FILE, kappa_floor, combine}``: the gold set the run measures its judge on
    (``judge-check``), and how a judge panel (``judge_models``) combines its verdicts."""

    gold: str | None = Field(None, min_length=1, description="A judge-check gold set (JSON Lines), relative to the yaml.")
    combine: Literal["mean", "majority"] = Field(
        "mean", description="A judge panel (judge_models): scores by mean or median; pass/fail and preferences by majority."
    )
    kappa_floor: float = Field(0.6, ge=-1, le=1, strict=False, allow_inf_nan=False, description="Warn when Cohen's kappa is below this.")


class TaskConfig(_Strict):
    """One task: the instruction (and follow-ups), its graders and its own workspace or oracle."""

    name: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    turns: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list,
        max_length=MAX_TURNS,
        description="Follow-up user messages, sent one after another in the same session after the instruction (a multi-turn trial).",
    )
    user: UserConfig | None = Field(None, description="A simulated user who answers each reply (after turns:, if any).")
    graders: list[GraderConfig] = Field(min_length=1)
    workspace: str | None = Field(
        None,
        min_length=1,
        description="A folder (relative to the yaml) copied into this task's trial workspaces (agent trials); default: the top-level workspace.",
    )
    oracle: Oracle | None = Field(None, description="A reference solution every grader of this task must accept (default: the eval's oracle).")

    @model_validator(mode="after")
    def _turns_exist(self) -> TaskConfig:
        most = 1 + len(self.turns) + (self.user.max_turns if self.user is not None else 0)
        for i, g in enumerate(self.graders):
            turn = getattr(g, "turn", None)
            if isinstance(turn, int) and turn > most:
                has = "one user message (no turns: or user:)" if most == 1 else f"at most {most} user messages (the instruction, turns: and user: max_turns)"
                raise FieldError(f"graders[{i}].turn", f"turn {turn}, but the task has {has}")
        return self


MAX_TASKS = 200


class SkillEvalConfig(_Strict):
    """One eval.yaml. Exactly one of ``skill`` and ``agent`` is set."""

    version: Literal["1", "2"] = "2"
    skill: str | None = None
    agent: str | None = None
    name: str | None = Field(None, description="Display name; defaults to the skill/agent folder name.")
    description: str | None = None
    defaults: Defaults = Field(default_factory=Defaults)
    execution: Execution = Field(default_factory=Execution)
    workspace: str | None = Field(None, min_length=1, description="A folder (relative to the yaml) copied into every trial's workspace.")
    environment: EnvironmentSpec | None = Field(None, description="A Docker image every agent trial runs in, a fresh container each (docs/environments.md).")
    oracle: Oracle | None = Field(None, description="A reference solution every grader must accept, checked before the trials (tasks may give their own).")
    judge: JudgeConfig | None = Field(None, description="The judge's gold set: the report carries its measured agreement.")
    judge_models: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, min_length=2, max_length=9, description="A judge panel: every judge verdict is asked of each model and combined."
    )
    task: TaskConfig | None = None
    tasks: list[TaskConfig] | None = Field(
        None,
        max_length=MAX_TASKS,
        description="Several tasks: each is a case of the same item (version 2: all of them; version 1: the first, unless --all-tasks).",
    )
    activation: ActivationConfig | None = Field(
        None, description="Prompts that should / should not load the skill (agentsproof activation; docs/activation.md)."
    )

    @field_validator("version", mode="before")
    @classmethod
    def _version_str(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(int(value)) if float(value).is_integer() else str(value)
        return value

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str | None) -> str | None:
        from agentsproof.core.safepath import name_problem

        why = name_problem(value) if value is not None else None
        if why is not None:  # it names the folder an agent target stages the skill in
            raise ValueError(f"{why} (a skill's name is one folder name: no '/', '\\', '..' or control characters)")
        return value

    @model_validator(mode="after")
    def _shape(self) -> SkillEvalConfig:
        if (self.skill is None) == (self.agent is None):
            raise FieldError(
                "skill/agent",
                "both are set; keep one" if self.skill is not None else "set one: 'skill: SKILL.md' or 'agent: <name>.md'",
            )
        if self.task is not None and self.tasks is not None:
            raise FieldError("tasks", "give either one 'task' or a 'tasks' list, not both")
        if self.task is None and self.tasks is None:
            if self.version == "2":
                raise FieldError("task", "required field is missing (or give a 'tasks' list)")
            raise FieldError("tasks", "version 1 needs a 'tasks' list")
        if self.tasks is not None:
            if not self.tasks:
                raise FieldError("tasks", "is empty; give at least one task")
            seen: dict[str, int] = {}
            for i, t in enumerate(self.tasks):
                if t.name in seen:
                    raise FieldError(f"tasks[{i}].name", f"{t.name!r} is also the name of tasks[{seen[t.name]}]; task names must be unique")
                seen[t.name] = i
        return self

    @property
    def kind(self) -> str:
        """``skill`` or ``agent``: what the file evaluates."""
        return "skill" if self.skill is not None else "agent"

    @property
    def source(self) -> str:
        """The ``skill:`` or ``agent:`` file as written."""
        return self.skill if self.skill is not None else self.agent  # type: ignore[return-value]

    @property
    def primary_task(self) -> TaskConfig:
        """The ``task``, or the first of ``tasks``."""
        if self.task is not None:
            return self.task
        assert self.tasks
        return self.tasks[0]

    def run_tasks(self, all_tasks: bool = False) -> list[TaskConfig]:
        """The tasks that become cases: every task of a version 2 ``tasks`` list; of a
        version 1 file only the first (its documented meaning) unless ``all_tasks``."""
        if self.tasks is None:
            return [self.primary_task]
        if self.version == "1" and not all_tasks:
            return [self.tasks[0]]
        return list(self.tasks)

    def task_field(self, index: int) -> str:
        """Where task ``index`` is in the file, for error messages."""
        return "task" if self.task is not None else f"tasks[{index}]"


def parse_eval_config(data: Any, source: str) -> SkillEvalConfig:
    """The validated eval.yaml; InputError naming the field of the first problem otherwise."""
    if not isinstance(data, dict):
        raise InputError(source, None, "expected a YAML mapping at the top level")
    try:
        return SkillEvalConfig.model_validate(data)
    except ValidationError as exc:
        field, msg = format_validation_error(exc, GRADER_TYPES)
        raise InputError(source, field, msg) from None


class LoadedEval(BaseModel):
    """An eval.yaml after validation, with its skill/agent file resolved and read."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    config: SkillEvalConfig
    source_path: Path
    source_text: str
    system_prompt: str = ""
    """The with-arm prompt: SKILL.md plus its folder's files, or an agent's body
    (see :mod:`agentsproof.model.skillfolder`); empty means ``source_text``."""
    warnings: list[str] = []
    """E.g. declared tools that cannot run in a chat trial."""
    workspace: Path | None = None
    """The resolved ``workspace:`` folder, copied into every trial's workspace."""
    task_workspaces: dict[int, Path] = {}
    """Resolved per-task ``workspace:`` folders, by index in ``tasks`` (they replace the top-level one)."""
    judge_gold: Path | None = None
    """The resolved ``judge.gold`` file."""
    environment: Environment | None = None
    """The resolved ``environment:`` (Dockerfile and context confined to the eval's tree)."""

    @property
    def kind(self) -> str:
        """``skill`` or ``agent``: what the file evaluates."""
        return self.config.kind

    def seed_folders(self) -> tuple[Path, ...]:
        """What in the skill's folder belongs to the eval, not the skill: every workspace seed
        (top-level and per task) and every ``script:`` grader file beside the eval file."""
        seeds = [*([self.workspace] if self.workspace else []), *self.task_workspaces.values(), *environment_paths(self.environment)]
        return tuple(dict.fromkeys([*seeds, *grader_scripts(self.config, self.path)]))

    @property
    def name(self) -> str:
        """The eval's name: ``name:``, else its folder's (the skill's, for ``<skill>/evals/eval.yaml``)."""
        if self.config.name:
            return self.config.name
        # evals/<plugin>/skills/<name>/eval.yaml -> <name>; an eval.yaml given by a
        # relative path has the resolved folder's name (never an empty name);
        # skills/<name>/evals/eval.yaml (beside the skill's SKILL.md) -> <name>.
        folder = self.path.resolve().parent
        if folder.name == "evals" and (folder.parent / "SKILL.md").is_file():
            folder = folder.parent
        return folder.name or self.path.stem


APART_LAYOUTS = (
    "layouts that work: the eval.yaml beside the skill (skills/<name>/eval.yaml with 'skill: SKILL.md'), "
    "or in a folder of its own with a copy of the skill, as eval-generate writes (evals/<plugin>/skills/<name>/)"
)
"""What the refusal of a skill or agent outside the eval's folder suggests instead."""


def load_eval(path: str | Path, *, live_source: bool = False) -> LoadedEval:
    """Read, validate and resolve one eval.yaml (or the eval.yaml inside a given folder).
    ``live_source``: the skill/agent file is the source eval-generate copied it from
    (:mod:`agentsproof.formats.copies`), not the copy beside the eval."""
    p = Path(path)
    if p.is_dir():
        inside = [p / name for name in ("eval.yaml", "eval.yml") if (p / name).is_file()]
        if not inside:
            raise InputError(str(p), None, "is a directory with no eval.yaml in it (run a whole plugin with `agentsproof eval-all`)")
        p = inside[0]
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, confined, display, read_text

    src = display(p)
    cfg = parse_eval_config(read_yaml(p), src)
    field = cfg.kind
    try:
        source = confined(cfg.source, p, field)
    except InputError as err:
        if err.source != src or err.field != field or not err.message.endswith("(it leads out of it)"):
            raise
        raise InputError(src, field, f"{err.message}; {APART_LAYOUTS}") from None
    from agentsproof.core.inputs import eval_root

    root = eval_root(p)
    if live_source:
        from agentsproof.formats.copies import SIDECAR
        from agentsproof.formats.copies import live_source as recorded_source

        live = recorded_source(p.parent, cfg.source)
        if live is None:
            raise InputError(src, field, f"--live-source: no recorded source for {cfg.source!r} (eval-generate writes it in {SIDECAR} beside the eval)")
        source, root = live, live.parent
    if not source.exists():
        raise InputError(src, field, f"file {cfg.source!r} not found (looked in {display(p.parent)}); {APART_LAYOUTS}")
    text = read_text(source, source=src, field=field, max_bytes=MAX_SOURCE_FILE_BYTES, what=f"{field} file")
    if not text.strip():
        raise InputError(src, field, f"{cfg.source!r} is empty")
    from agentsproof.model.skillfolder import item_prompt

    workspace = None
    if cfg.workspace is not None:
        from agentsproof.isolation.workspace import check_seed_folder

        workspace = check_seed_folder(confined(cfg.workspace, p, "workspace"), src, "workspace")
    task_workspaces: dict[int, Path] = {}
    for i, task in enumerate(cfg.tasks or []):
        if task.workspace is not None:
            from agentsproof.isolation.workspace import check_seed_folder

            where = f"tasks[{i}].workspace"
            task_workspaces[i] = check_seed_folder(confined(task.workspace, p, where), src, where)
    # workspace seeds and grader scripts are the eval's material, not part of the skill (nor of its prompt)
    environment = resolve_environment(cfg.environment, p) if cfg.environment is not None else None
    seeds = tuple(dict.fromkeys([*([workspace] if workspace else []), *task_workspaces.values(), *grader_scripts(cfg, p), *environment_paths(environment)]))
    built = item_prompt(cfg.kind, source, text, root=root, exclude=seeds)
    warnings = list(built.warnings)
    if cfg.execution.mode == "agent":
        # tools the skill declares do run in an agent trial: that warning is for chat trials only
        warnings = [w for w in warnings if "chat trial" not in w]
    judge_gold = None
    if cfg.judge is not None and cfg.judge.gold is not None:
        judge_gold = confined(cfg.judge.gold, p, "judge.gold")
        if not judge_gold.is_file():
            raise InputError(src, "judge.gold", f"file {cfg.judge.gold!r} not found (looked in {display(p.parent)})")
    oracles = [("oracle", cfg.oracle), *((f"{cfg.task_field(i)}.oracle", t.oracle) for i, t in enumerate(cfg.tasks or ([cfg.task] if cfg.task else [])))]
    for where, oracle in oracles:
        if oracle is not None and oracle.script is not None:  # a link beside the eval leading to /bin/sh is refused too
            confined(oracle.script, p, f"{where}.script")
    return LoadedEval(
        path=p,
        config=cfg,
        source_path=source,
        source_text=text,
        system_prompt=built.system_prompt,
        warnings=warnings,
        workspace=workspace,
        task_workspaces=task_workspaces,
        judge_gold=judge_gold,
        environment=environment,
    )


def resolve_environment(spec: EnvironmentSpec, path: Path) -> Environment:
    """``environment:`` with its Dockerfile and context confined to the eval's tree and checked."""
    from agentsproof.model.environment import resolve_confined

    return resolve_confined(spec, path)


def environment_paths(env: Environment | None) -> list[Path]:
    """The environment's Dockerfile and context: the eval's material, not the skill's."""
    if env is None:
        return []
    return [p for p in (env.context, env.dockerfile) if p is not None]


def grader_scripts(cfg: SkillEvalConfig, path: Path) -> list[Path]:
    """The ``script:`` files of the eval's script graders that sit beside the eval file."""
    out = []
    for task in cfg.tasks or ([cfg.task] if cfg.task else []):
        for g in task.graders:
            script = getattr(g, "script", None) if g.type == "script" else None
            if script and (path.parent / script).is_file():
                out.append((path.parent / script).resolve())
    return out
