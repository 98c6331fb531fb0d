"""What the runner runs: items (one skill, agent or case to evaluate) and their cases.

Every input format turns its files into :class:`EvalItem` values (see
:mod:`agentsproof.formats`); the runner, the targets and the graders read nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentsproof.model.environment import Environment
from agentsproof.model.graders import GraderSpec
from agentsproof.model.results import Arm
from agentsproof.model.setup import SetupCommand

DEFAULT_TRIALS = 1
DEFAULT_TIMEOUT = 300.0
"""Seconds per trial."""
DEFAULT_THRESHOLD = 0.6
"""Pass rate the with-skill arm needs."""

BASELINE_SYSTEM_PROMPT = "You are a helpful assistant."
"""The without-arm's system prompt: a generic assistant, the same for every item."""


@dataclass
class SkillFile:
    """The with-arm's skill or agent as a file an agent can load (e.g. ``SKILL.md``)."""

    name: str
    """The skill/agent name, e.g. ``csv-summary`` (safe as a path segment)."""
    kind: str
    """``skill`` or ``agent``."""
    text: str
    """The file's text as the eval read it (front matter included)."""
    source_path: Path | None = None
    """The skill's own file."""
    files: tuple[tuple[str, Path], ...] = ()
    """The skill folder's other files to install beside it: (path relative to the skill
    folder, the file). Chosen when the eval is loaded (the rule of
    :func:`agentsproof.model.skillfolder.folder_files`, without the eval's workspace seed);
    empty for an agent or a skill file that is not a folder's SKILL.md."""


@dataclass(frozen=True)
class SimulatedUser:
    """A user played by the judge model in a multi-turn trial (eval.yaml ``user:``)."""

    persona: str
    goal: str
    max_turns: int = 3
    """Follow-up messages it may send at most."""


@dataclass(frozen=True)
class Case:
    """One task of an item: trial ``i`` of each arm runs case ``i % len(cases)``, so the
    two arms' trial ``i`` always answer the same prompt (see ``EvalItem.case_at``)."""

    name: str
    prompt: str
    graders: Sequence[GraderSpec]
    workspace_seed: Path | None = None
    turns: tuple[str, ...] = ()
    """Follow-up user messages, sent one after another in the same session after ``prompt``."""
    user: SimulatedUser | None = None
    """After ``turns``, a simulated user who answers each reply (None: no more turns)."""


@dataclass
class EvalItem:
    """What the runner needs to know about one skill/agent eval or tc-eval case."""

    id: str
    name: str
    kind: str  # skill | agent | case
    source_path: str
    system_prompt: str
    task_name: str
    prompt: str
    graders: Sequence[GraderSpec]
    trials: int
    timeout: float
    threshold: float
    eval_path: str | None = None
    source_sha256: str = ""
    warnings: tuple[str, ...] = ()
    """E.g. declared tools that cannot run in a chat trial (copied to ItemResult.warnings)."""
    target: str = "chat"
    """The target that runs its trials: 'chat' (one chat call) or a targets.yaml name."""
    model: str | None = None
    """A chat item's own model (promptfoo's several providers); None: the run's model."""
    workspace_seed: Path | None = None
    """A folder copied into every trial's workspace (agent targets)."""
    workspace_files: tuple[tuple[str, bytes], ...] = ()
    """(relative path, bytes) written into every trial's workspace (tc-eval ``files``)."""
    workspace_sha: str = ""
    """A digest of the seed folder and files (part of the journal fingerprint)."""
    skill: SkillFile | None = None
    """The skill/agent as a file, for agent targets to install in the with-arm."""
    arms: tuple[Arm, ...] = ("with", "without")
    """The arms to run; ``("with",)`` for a single-arm run (``--baseline none``); with
    ``"plugin"`` also the arm that installs every skill of ``plugin_skills``."""
    plugin_skills: tuple[SkillFile, ...] = ()
    """Every skill/agent of the item's plugin, the item's own included (the plugin arm)."""
    with_skills: tuple[SkillFile, ...] = ()
    """Several skills the with-arm installs together (a Harbor task's ``environment/skills/``);
    empty: just ``skill``."""
    turns: tuple[str, ...] = ()
    """The one case's follow-up user messages (a multi-turn trial); see :class:`Case`."""
    user: SimulatedUser | None = None
    """The one case's simulated user; see :class:`Case`."""
    cases: tuple[Case, ...] = ()
    """Several tasks (eval.yaml ``tasks:``): ``trials`` counts trials per arm over all cases.
    Empty: one case, the item's own ``prompt`` and ``graders``."""
    judge_gold: str | None = None
    """eval.yaml ``judge: {gold: FILE}``: the gold set the judge is measured on after the run."""
    judge_kappa_floor: float = 0.6
    """Below this Cohen's kappa on ``judge_gold`` the item's report warns."""
    judge_models: tuple[str, ...] = ()
    """eval.yaml ``judge_models``: a judge panel for this item's judged graders."""
    judge_combine: str = "mean"
    max_tokens: int | None = None
    """eval.yaml ``defaults.max_tokens``: the reply cap of the chat target's calls (both
    arms; not the judge's). None: the provider's own."""
    temperature: float | None = None
    """A promptfoo provider's ``config.temperature``: the chat target's sampling temperature
    for this item (both arms; not the judge's). None: the target's own."""
    body: dict[str, Any] | None = None
    """A promptfoo provider's (and prompt's) ``config`` fields sent in the chat target's request body as
    given (``response_format``, ``seed``, ``stop`` …; both arms; not the judge's). None: none."""
    transform: tuple[str, ...] = ()
    """A program run on every trial's answer before it is graded (promptfoo's ``options.transform``): it reads
    ``{"output", "context"}`` as JSON on stdin and prints ``{"result": …}``; run confined. Empty: none."""
    target_def: Any = None
    """The definition of ``target`` when the eval file itself defines it (a promptfoo provider that is a
    program: a ``TargetDef``); None: looked up in targets.yaml."""
    environment: Environment | None = None
    """eval.yaml ``environment:`` (or a Harbor task's): every trial runs in a fresh container
    of this image (see :mod:`agentsproof.isolation.container`); None: on the host."""
    setup: tuple[SetupCommand, ...] = ()
    """Programs run around every agent trial in its workspace (agentv's set-up and hooks;
    :mod:`agentsproof.model.setup`)."""
    load_error: str | None = None
    """A problem of this case alone found while loading (a fixture that is missing): each of its
    trials is errored with it, never run, and the file's other cases run."""

    def case_at(self, index: int) -> Case:
        """The case trial ``index`` runs (round robin, so a batch of trials covers the cases evenly)."""
        if not self.cases:
            return Case(self.task_name, self.prompt, self.graders, self.workspace_seed, self.turns, self.user)
        return self.cases[index % len(self.cases)]
