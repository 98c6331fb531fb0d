"""Skill-used grader: whether the agent loaded or read the skill, as its target reports."""

from __future__ import annotations

from agentsproof.model.evalfile import SkillUsedGrader
from agentsproof.grading.context import TrialContext
from agentsproof.model.results import CheckResult, GraderResult


def grade_skill_used(spec: SkillUsedGrader, ctx: TrialContext) -> GraderResult:
    if ctx.skill_used is None:
        return GraderResult(
            type="skill_used", weight=spec.weight, errored=True, error="the target cannot tell whether the skill was used"
        )
    name = repr(ctx.skill_name) if ctx.skill_name else "the skill"
    evidence = f"the agent {'used' if ctx.skill_used else 'did not use'} {name}"
    passed = ctx.skill_used == spec.expected
    target = f"{name} {'used' if spec.expected else 'not used'}"
    check = CheckResult(kind="skill_used", target=target, passed=passed, evidence=evidence)
    return GraderResult(type="skill_used", weight=spec.weight, score=1.0 if passed else 0.0, checks=[check])
