"""Lint of an eval.yaml ``activation:`` suite: what makes it unable to measure triggering.

- a prompt listed under both ``should`` and ``should_not`` (it can never be scored right);
- the same prompt twice in one list (it counts twice in precision and recall);
- fewer than :data:`MIN_ACTIVATION_PROMPTS` prompts on a side (the interval spans most of
  0–1, so no floor can be checked);
- a ``should`` prompt that holds the whole description (it measures copying, not triggering).

Prompts are compared case-folded with whitespace collapsed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agentsproof.formats.lint.problems import Problem

if TYPE_CHECKING:
    from agentsproof.formats.activation_config import ActivationConfig

MIN_ACTIVATION_PROMPTS = 5
MIN_DESCRIPTION_CHARS = 20


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def check_activation(file: str, cfg: ActivationConfig, description: str = "") -> list[Problem]:
    """The problems of an ``activation:`` suite (see the module's list); ``description`` is the skill's."""
    out: list[Problem] = []
    seen: dict[str, dict[str, int]] = {"should": {}, "should_not": {}}
    for side in ("should", "should_not"):
        for i, entry in enumerate(getattr(cfg, side)):
            key = _norm(entry.prompt)
            at = f"activation.{side}[{i}]"
            if key in seen[side]:
                out.append(
                    Problem(
                        file,
                        at,
                        "duplicate-prompt",
                        f"is the same prompt as activation.{side}[{seen[side][key]}]",
                        "remove one, or make it a different request",
                    )
                )
            else:
                seen[side][key] = i
    for key, i in seen["should_not"].items():
        if key in seen["should"]:
            out.append(
                Problem(
                    file,
                    f"activation.should_not[{i}]",
                    "contradictory-prompt",
                    f"is also activation.should[{seen['should'][key]}]: the same prompt cannot both load the skill and not",
                    "keep it on one side only",
                )
            )
    for side, word in (("should", "should"), ("should_not", "should not")):
        n = len(getattr(cfg, side))
        if 0 < n < MIN_ACTIVATION_PROMPTS:
            out.append(
                Problem(
                    file,
                    f"activation.{side}",
                    "too-few-prompts",
                    f"has {n} prompt{'s' if n != 1 else ''} that {word} load the skill; fewer than {MIN_ACTIVATION_PROMPTS} leave "
                    "the interval too wide to check a floor",
                    f"add {MIN_ACTIVATION_PROMPTS - n} more, varied (explicit, implicit, contextual{', near-miss' if side == 'should_not' else ''})",
                    "warning",
                )
            )
    desc = _norm(description)
    if len(desc) >= MIN_DESCRIPTION_CHARS:
        for i, entry in enumerate(cfg.should):
            if desc in _norm(entry.prompt):
                out.append(
                    Problem(
                        file,
                        f"activation.should[{i}]",
                        "prompt-copies-description",
                        "holds the skill's whole description: it measures copying, not whether the skill fires",
                        "write the request as a user would, in their own words",
                        "warning",
                    )
                )
    return out
