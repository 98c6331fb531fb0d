"""``lint --judge``: an LLM reviewer reads a file's skill, tasks and checks and flags

- **overfitting**: a rubric item or check that rewards the skill's own wording (its
  headings, phrases, vocabulary) instead of the outcome the task asks for, so the with-arm
  scores by echoing the skill rather than by doing better;
- **skill-not-needed**: a task any capable model does equally well without the skill, so
  it cannot show a difference.

Each finding names one field of the file (from the list the reviewer is given; any other
is dropped) and quotes its evidence. One JSON call per file through the judge machinery
(:func:`agentsproof.grading.judge.judge_json`: temperature 0, re-asked when unusable).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agentsproof.formats.lint.checks import FileView, skill_body
from agentsproof.formats.lint.problems import Problem
from agentsproof.grading.judge import Judge, judge_json

if TYPE_CHECKING:
    from agentsproof.model.graders import GraderSpec

MAX_SKILL_CHARS = 8000
MAX_FINDINGS = 50

SYSTEM = (
    "You review an eval before it is run. The eval measures whether a skill (instructions given to an AI agent) "
    "makes the agent better at tasks. Flag only real problems:\n"
    "- overfitting: a check or rubric item that rewards the skill's own wording (its headings, phrases, vocabulary, "
    "format quirks) rather than the outcome the task asks for; an answer could score by echoing the skill without doing the task better.\n"
    "- skill-not-needed: a task that a capable model would do just as well without the skill.\n"
    "Quote the evidence (the check's text and the skill's words it copies, or why the task does not need the skill). "
    'Reply with only JSON: {"findings": [{"field": <one of the given fields>, "kind": "overfitting"|"skill-not-needed", '
    '"evidence": "...", "fix": "..."}]}; an empty list when there is nothing to flag.'
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "field": {"type": "string"},
                    "kind": {"enum": ["overfitting", "skill-not-needed"]},
                    "evidence": {"type": "string"},
                    "fix": {"type": "string"},
                },
                "required": ["field", "kind", "evidence"],
            },
        }
    },
    "required": ["findings"],
}


def _describe(g: GraderSpec) -> dict[str, Any]:
    data: dict[str, Any] = g.model_dump(mode="json")
    data.pop("weight", None)
    return data


def review_prompt(view: FileView) -> tuple[str, list[str]]:
    """The reviewer's user message and the fields it may name."""
    fields: list[str] = []
    tasks = []
    for case in view.cases:
        fields.append(f"{case.field}.{case.prompt_field}")
        graders = []
        for j, g in enumerate(case.graders):
            at = case.grader_fields[j] if j < len(case.grader_fields) else f"{case.field}.graders[{j}]"
            if at not in fields:
                fields.append(at)
            graders.append({"field": at, **_describe(g)})
        tasks.append({"field": f"{case.field}.{case.prompt_field}", "name": case.name, "instruction": case.prompt, "checks": graders})
    skill = skill_body(view.skill_text)[:MAX_SKILL_CHARS]
    user = f"The skill:\n<<<\n{skill}\n>>>\n\nThe tasks and their checks (JSON):\n{json.dumps(tasks, indent=1)}\n\nFields you may name: {json.dumps(fields)}"
    return user, fields


async def review_file(judge: Judge, view: FileView) -> list[Problem]:
    """The judge's review of the file's tasks against the skill, as warnings (overfitting, skill not needed); none without cases or skill text."""
    if not view.cases or not view.skill_text.strip():
        return []
    user, fields = review_prompt(view)
    allowed = set(fields)

    def validate(obj: dict[str, Any]) -> list[dict[str, str]]:
        found = obj.get("findings")
        if not isinstance(found, list):
            raise ValueError("'findings' must be a list")
        out = []
        for f in found[:MAX_FINDINGS]:
            if not isinstance(f, dict) or f.get("kind") not in ("overfitting", "skill-not-needed"):
                raise ValueError("each finding needs kind 'overfitting' or 'skill-not-needed'")
            if not isinstance(f.get("evidence"), str) or not f["evidence"].strip():
                raise ValueError("each finding needs its evidence")
            if f.get("field") in allowed:  # a field we did not give is not a place in the file
                out.append({k: str(f.get(k) or "") for k in ("field", "kind", "evidence", "fix")})
        return out

    judge = Judge(judge.client, judge.model, timeout=judge.timeout, max_tokens=1500)
    findings, _usage, _raw = await judge_json(judge, SYSTEM, user, SCHEMA, validate)
    default_fix = {
        "overfitting": "check the outcome the task asks for, not the skill's wording",
        "skill-not-needed": "replace the task with one the skill changes the answer to",
    }
    return [
        Problem(
            view.file,
            f["field"],
            f["kind"],
            ("rewards the skill's wording, not the outcome" if f["kind"] == "overfitting" else "does not need the skill")
            + f" (reviewer's evidence: {' '.join(f['evidence'].split())[:400]})",
            " ".join(f["fix"].split())[:200] or default_fix[f["kind"]],
            "warning",
        )
        for f in findings
    ]
