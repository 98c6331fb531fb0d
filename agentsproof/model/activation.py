"""Activation suites: prompts that should, and should not, make an agent load a skill.

A suite belongs to one skill of a plugin (eval.yaml ``activation:``, or EVAL.yaml tests
graded ``skill-used`` / ``not-skill-used``). Every prompt is run with all of the plugin's
skills installed, and the target reports which skills the agent loaded
(``TrialRecord.skills_invoked``); :mod:`agentsproof.stats.activation` scores that.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentsproof.model.items import SkillFile

SHOULD_TYPES = ("explicit", "implicit", "contextual")
"""Kinds of prompt that should load the skill: it is named; the task is described; the
context (files, earlier turns, the situation) makes it the right one."""
SHOULD_NOT_TYPES = ("negative", "near-miss")
"""Kinds of prompt that should not: unrelated; close to the skill's territory but not in it
(often a sibling skill's task)."""
DEFAULT_SHOULD_TYPE = "implicit"
DEFAULT_SHOULD_NOT_TYPE = "negative"
DEFAULT_MIN_RECALL = 0.8
"""``--ci`` fails a skill whose recall (share of its should prompts that loaded it) is below this."""
DEFAULT_MIN_PRECISION = 0.8
"""``--ci`` fails a skill whose precision (share of its loads that were wanted) is below this."""


@dataclass(frozen=True)
class ActivationPrompt:
    """One prompt of a suite and whether it should load the skill."""

    text: str
    expect: bool
    """True: should load the suite's skill; False: should not (a dormancy contract)."""
    type: str
    """One of :data:`SHOULD_TYPES` or :data:`SHOULD_NOT_TYPES`."""


@dataclass
class ActivationSuite:
    """One skill's prompts, from the eval file ``source``, with the recall and precision ``--ci`` asks of it."""

    skill: SkillFile
    prompts: list[ActivationPrompt] = field(default_factory=list)
    source: str = ""
    """The eval file the suite came from, as shown to the user."""
    min_recall: float = DEFAULT_MIN_RECALL
    min_precision: float = DEFAULT_MIN_PRECISION

    @property
    def should(self) -> list[ActivationPrompt]:
        """The prompts that should load the skill, in order."""
        return [p for p in self.prompts if p.expect]

    @property
    def should_not(self) -> list[ActivationPrompt]:
        """The prompts that should not load the skill, in order."""
        return [p for p in self.prompts if not p.expect]


@dataclass
class ActivationTrial:
    """One run of one prompt: which skills loaded (None and an ``error`` when it errored)."""

    skill: str
    """The suite the prompt belongs to."""
    prompt: ActivationPrompt
    index: int
    fired: list[str] | None
    error: str | None = None
    latency_s: float = 0.0
    cost_usd: float | None = None
    offered: str | None = None
    """How the target offered the skills (e.g. staged as Claude Code skills), when it says."""
