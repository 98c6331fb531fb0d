"""The pairwise judge: which of two answers to the same request is better?

A judge sees the with-skill and the baseline answer side by side, labelled A and B, and
answers ``A``, ``B`` or ``tie``. It is asked twice, with the order swapped; the verdict
is an answer only when both calls name the same answer, otherwise a tie (a judge that
prefers whichever answer comes first therefore produces ties, not wins). The schema is a
string enum, which every provider can constrain — the embedded model's grammar included.

A judge panel (eval.yaml ``judge_models``) asks each model both orders; each model's
verdict is reconciled as above, and the pair's verdict is the panel's majority of them
(:func:`agentsproof.grading.judge.combine_verdicts`: the verdict most models gave, a tie
for first place is a tie). One model failing errors the pair, as it errors a panel's score.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from agentsproof.grading.base import GraderEntry
from agentsproof.grading.judge import Judge, JudgeError, combine_verdicts, judge_json, verdict_text
from agentsproof.model.graders import Strict
from agentsproof.model.results import Usage


class PairwiseGrader(Strict):
    """A judge sees the with- and without-skill answers to the same prompt side by side and
    picks the better one or a tie, asked twice with the order swapped (disagreement = tie).
    Not part of the trial score: the report shows the with-arm preference rate."""

    type: Literal["pairwise"]
    criteria: str | None = Field(None, min_length=1, description="What makes an answer better (default: which answer serves the request better).")


PAIRWISE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "better": {"type": "string", "enum": ["A", "B", "tie"]},
    },
    "required": ["reasoning", "better"],
}

PAIRWISE_SYSTEM = (
    "You compare two AI assistant answers to the same request. Judge only what the answers contain; "
    "neither the order nor the length of an answer makes it better. Reply with a JSON object: a short "
    '\'reasoning\' string, then \'better\': "A", "B" or "tie" when neither is clearly better.'
)
DEFAULT_CRITERIA = "Which answer serves the user's request better: correct, complete and useful for this request."


def _validate(obj: dict[str, Any]) -> tuple[str, str]:
    value = obj.get("better")
    if not isinstance(value, str) or value.strip().upper() not in ("A", "B", "TIE"):
        raise ValueError('\'better\' must be "A", "B" or "tie"')
    v = value.strip().upper()
    return ("tie" if v == "TIE" else v), verdict_text(obj.get("reasoning", ""))


def _pairwise_prompt(task: str, criteria: str, first: str, second: str) -> str:
    return (
        f"## Request given to both assistants\n{task}\n\n## What makes an answer better\n{criteria}\n\n"
        f"## Answer A\n<<<A\n{first}\nA>>>\n\n## Answer B\n<<<B\n{second}\nB>>>\n\nWhich answer is better?"
    )


@dataclass
class PairVerdict:
    """One pairwise judgement of the two arms' answers (both orders asked): the winner, or why there is none."""

    winner: str | None
    """'with', 'without' or 'tie'; None when a call errored."""
    disagreement: bool = False
    """A tie that comes from disagreement: the two orders named different answers — with a
    panel, a tie other than every model answering tie both ways."""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    reasoning: str = ""
    model: str | None = None
    """The panel model this verdict is from (None: the run's single judge, or the panel's verdict)."""
    members: tuple[PairVerdict, ...] = ()
    """A panel's verdict: each model's own verdict, in ``judge_models`` order."""

    @property
    def split(self) -> bool:
        """A panel's models did not all reach the same verdict."""
        return len({m.winner for m in self.members}) > 1


async def judge_pair(judge: Judge, spec: PairwiseGrader, task: str, with_answer: str, without_answer: str) -> PairVerdict:
    """Both orders; agreement is a verdict, disagreement a tie."""
    criteria = spec.criteria or DEFAULT_CRITERIA
    picks: list[str] = []
    usage, calls, notes = Usage(), 0, []
    for first, second, labels in ((with_answer, without_answer, ("with", "without")), (without_answer, with_answer, ("without", "with"))):
        try:
            (better, reasoning), u, raw = await judge_json(judge, PAIRWISE_SYSTEM, _pairwise_prompt(task, criteria, first, second), PAIRWISE_SCHEMA, _validate)
        except JudgeError as err:
            return PairVerdict(None, error=str(err), usage=usage, calls=calls + 1)
        usage, calls = usage + u, calls + len(raw)
        picks.append("tie" if better == "tie" else labels[0 if better == "A" else 1])
        notes.append(reasoning)
    agree = picks[0] == picks[1]
    winner = picks[0] if agree else "tie"
    return PairVerdict(winner, disagreement=not agree, usage=usage, calls=calls, reasoning=" | ".join(notes)[:600])


async def judge_pair_panel(judge: Judge, models: tuple[str, ...], spec: PairwiseGrader, task: str, with_answer: str, without_answer: str) -> PairVerdict:
    """Each panel model asked both orders (:func:`judge_pair`), their verdicts combined by majority."""
    members = await asyncio.gather(
        *(judge_pair(dataclasses.replace(judge, model=m, panel=(), tally=None), spec, task, with_answer, without_answer) for m in models)
    )
    members = [dataclasses.replace(v, model=m) for m, v in zip(models, members, strict=True)]
    usage = Usage()
    for v in members:
        usage = usage + v.usage
    calls = sum(v.calls for v in members)
    failed = next((v for v in members if v.error is not None), None)
    if failed is not None:
        return PairVerdict(None, error=f"judge model {failed.model}: {failed.error}", usage=usage, calls=calls, members=tuple(members))
    winner, _ = combine_verdicts([v.winner for v in members], "majority")
    genuine_tie = all(v.winner == "tie" and not v.disagreement for v in members)
    return PairVerdict(winner, disagreement=winner == "tie" and not genuine_tie, usage=usage, calls=calls, members=tuple(members))


GRADER = GraderEntry(type="pairwise", config=PairwiseGrader, grade=None, judged=True, per_pair=True)
"""Judged per pair after both arms ran (:mod:`agentsproof.executor.pairwise`), not per trial."""
