"""The ``echo`` target: a tiny agent that answers with the prompt, in a workspace.

It needs no settings, so ``--target echo`` (or ``execution: {mode: agent, target: echo}``)
runs it without a targets.yaml; a targets.yaml entry may set ``prefix``::

    shouty:
      type: echo
      prefix: "ECHO:"

With the skill installed (the with-arm) it answers with the skill's first line instead:
enough to see both arms differ in a report.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import Field

from agentsproof.plugin import Strict, Target, TrialInput, TrialRecord


class EchoTargetSpec(Strict):
    """Its targets.yaml entry."""

    type: Literal["echo"]
    prefix: str = Field("", description="Put before every answer.")


class EchoTarget(Target):
    kind = "echo"
    spec_model = EchoTargetSpec
    uses_workspace = True

    def __init__(self, name: str, spec: EchoTargetSpec, shown: EchoTargetSpec | None = None, *, model: str | None = None,
                 source: str = "targets.yaml"):
        # the constructor every target kind has (agentsproof.targets.base.TargetFactory)
        self.name = name
        self.spec = spec
        self.shown = shown or spec

    async def run(self, trial: TrialInput) -> TrialRecord:
        t0 = time.perf_counter()
        text = trial.prompt
        if trial.skill is not None:
            body = trial.skill.text
            if body.startswith("---"):  # the skill's frontmatter (name, description)
                body = body.split("---", 2)[-1]
            lines = [line.strip() for line in body.splitlines() if line.strip() and not line.startswith("#")]
            text = lines[0] if lines else text
        answer = f"{self.spec.prefix} {text}".strip()
        if trial.workspace is not None:
            (trial.workspace / "answer.txt").write_text(answer + "\n", encoding="utf-8")
        return TrialRecord(answer=answer, latency_s=time.perf_counter() - t0, skill_used=trial.skill is not None)

    def describe(self) -> dict[str, Any]:
        return {"target": self.name, "target_type": self.kind, "prefix": self.shown.prefix}
