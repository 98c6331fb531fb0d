"""What a grader may look at besides the final answer."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from agentsproof.model.environment import TrialEnvironment
from agentsproof.model.results import FileRecord, ToolCall, Usage


@dataclass
class TrialContext:
    """One trial as graders see it."""

    answer: str
    workspace: Path | None = None
    """The trial's workspace (agent trials), still on disk while graders run."""
    files: list[FileRecord] = field(default_factory=list)
    """Files the agent created, changed or deleted."""
    trajectory: list[ToolCall] = field(default_factory=list)
    skill_used: bool | None = None
    skill_name: str = ""
    skills_invoked: list[str] | None = None
    """The skills the agent was seen loading, in order (None: the target cannot tell)."""
    replies: list[str] = field(default_factory=list)
    """The reply to each user message, in order (a multi-turn trial; graders with ``turn:``
    pick theirs); empty: none recorded, every turn is ``answer`` (an oracle's)."""
    timeout: float | None = None
    """The trial's timeout in seconds (a script grader's own timeout is capped by it)."""
    eval_dir: Path | None = None
    """The eval file's folder: script graders find their ``script:`` there (env
    ``AGENTSPROOF_EVAL_DIR``), where the agent cannot see it."""
    environment: TrialEnvironment | None = None
    """The trial's container, still running while graders run (the item has an
    ``environment:``): graders that run commands on the workspace run them there, in
    ``environment.workdir``; ``workspace`` holds a copy of it taken after the agent finished."""
    usage: Usage | None = None
    """The tokens the trial's target reported (None: not recorded, an oracle's)."""
    latency_s: float | None = None
    """How long the target took, in seconds (None: not recorded)."""
    llm_calls: int | None = None
    """The model calls the trial made (a chat trial: one per turn); None: not counted (agents)."""
    cost_usd: float | None = None
    """What the trial cost, in USD, when the target or the price table tells (None: unknown)."""


JUDGE_FILE_CHARS = 2_000
"""Text files up to this many characters are shown to judges whole (else their preview)."""
JUDGE_FILES_MAX = 30


def judged_response(answer: str, ctx: TrialContext) -> str:
    """What a rubric or assertion judge reads: the answer, then (agent trials) the files the
    agent produced, with the text of small text files, so "wrote a bar chart image file"
    can be judged with evidence."""
    made = [f for f in ctx.files if f.status != "deleted"]
    if ctx.workspace is None or not made:
        return answer
    from agentsproof.core.units import human_size

    lines = [answer, "", "## Files the assistant created or changed in its workspace"]
    for rec in made[:JUDGE_FILES_MAX]:
        lines.append(f"- {rec.path} ({human_size(rec.size)}{', binary' if rec.preview is None else ''})")
    if len(made) > JUDGE_FILES_MAX:
        lines.append(f"- … and {len(made) - JUDGE_FILES_MAX} more")
    for rec in made[:JUDGE_FILES_MAX]:
        if rec.preview is None:
            continue
        text = rec.preview
        if rec.size <= JUDGE_FILE_CHARS:
            with contextlib.suppress(OSError):  # unreadable now: the preview stands
                text = (ctx.workspace / rec.path).read_text(encoding="utf-8", errors="replace")[:JUDGE_FILE_CHARS]
        cut = "" if rec.size <= len(text.encode("utf-8")) else "\n[… cut]"
        lines += ["", f"### {rec.path}", "```", text.rstrip("\n") + cut, "```"]
    return "\n".join(lines)
