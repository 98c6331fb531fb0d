"""Skill-used grader: whether the agent loaded or read the skill, as its target reports."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.grading.context import TrialContext
from agentsproof.grading.hooks import ConvertCase
from agentsproof.model.graders import MAX_WEIGHT, Strict
from agentsproof.model.results import CheckResult, GraderResult


class SkillUsedGrader(Strict):
    """Whether the agent loaded or read the skill in the trial (``expected: false`` for
    "must not use it"). Errors when the target cannot tell. With ``skills`` (agentv's
    ``skill-used: <name>`` for a skill that is not the one under test): whether every one of
    them is among the skills the agent was seen loading (``expected: false``: none of them)."""

    type: Literal["skill_used"]
    expected: bool = Field(True, strict=True, description="true: the skill must be used; false: it must not be.")
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")
    skills: list[str] | None = Field(
        None, min_length=1, description="Skills named by name, checked against the skills the agent loaded (default: the skill under test)."
    )


def chat_skills(skill: Any, arm: str) -> list[str]:
    """The skills a model alone (a chat trial) "loaded": the one in its system prompt in the
    with-arm, else none; it has no way to load another."""
    return [skill.name] if skill is not None and arm == "with" and skill.kind != "agent" else []


def grade_named(spec: SkillUsedGrader, names: list[str], ctx: TrialContext) -> GraderResult:
    """agentv's meaning: the named skills among those the trial was seen loading (a model
    alone, offered no skill, loads none); errored when the target cannot tell."""
    if ctx.skills_invoked is None:
        return GraderResult(type="skill_used", weight=spec.weight, errored=True, error="the target cannot tell which skills were used")
    seen = ", ".join(ctx.skills_invoked) or "(none)"
    used = [n for n in names if n in ctx.skills_invoked]
    passed = len(used) == len(names) if spec.expected else not used
    target = f"{', '.join(map(repr, names))} {'used' if spec.expected else 'not used'}"
    check = CheckResult(kind="skill_used", target=target, passed=passed, evidence=f"skills the agent loaded: {seen}")
    return GraderResult(type="skill_used", weight=spec.weight, score=1.0 if passed else 0.0, checks=[check])


def grade_skill_used(spec: SkillUsedGrader, ctx: TrialContext) -> GraderResult:
    """Pass when the agent's use of the skill is what ``expected`` says; errored when the target cannot tell."""
    if spec.skills is not None:
        return grade_named(spec, spec.skills, ctx)
    if ctx.skill_used is None:
        return GraderResult(type="skill_used", weight=spec.weight, errored=True, error="the target cannot tell whether the skill was used")
    name = repr(ctx.skill_name) if ctx.skill_name else "the skill"
    evidence = f"the agent {'used' if ctx.skill_used else 'did not use'} {name}"
    passed = ctx.skill_used == spec.expected
    target = f"{name} {'used' if spec.expected else 'not used'}"
    check = CheckResult(kind="skill_used", target=target, passed=passed, evidence=evidence)
    return GraderResult(type="skill_used", weight=spec.weight, score=1.0 if passed else 0.0, checks=[check])


async def grade(spec: SkillUsedGrader, given: GradeInput) -> GraderResult:
    """The skill_used grader's hook: the trial's record of whether the skill was used."""
    return grade_skill_used(spec, given.context)


def to_agentevals(spec: SkillUsedGrader, case: ConvertCase) -> list[Any]:
    """One EVAL.yaml ``skill-used`` (or ``not-skill-used``) assertion naming the skill."""
    value: Any = case.skill if spec.skills is None else spec.skills[0] if len(spec.skills) == 1 else spec.skills
    return [{"type": "skill-used" if spec.expected else "not-skill-used", "value": value, **case.weight}]


GRADER = GraderEntry(
    type="skill_used",
    config=SkillUsedGrader,
    grade=grade,
    agent_only=True,
    to_agentevals=to_agentevals,
    oracle_checked=False,  # a reference command loads no skill
)
