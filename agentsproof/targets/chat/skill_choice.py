"""How the chat target simulates an agent choosing skills (activation suites, the plugin arm).

A chat call has no skills to load, so the chat target plays the part an agent's skill tool
plays (Copilot's ``skill`` tool, Claude Code's ``Skill``): the system message lists every
installed skill's name and description in an ``<available_skills>`` catalogue and offers a
``skill`` tool; the model "calls" it by answering with ``{"skill": "<name>"}`` (or
``{"skill": null}`` to go on without one; any other reply, or a name that is not installed,
errors the trial with the reason, never counted as "no skill loaded"). Only the name and description are shown, never the
body, as a real agent shows them. A chosen skill's text then comes back as the tool's result
and the model answers with it (skipped when the trial grades nothing: an activation prompt).

This is a simulation: a real agent sees its own system prompt, other tools and the
conversation so far, may load a skill later in a task, or several; here the choice is one
structured reply at the start. Activation measured this way tells how well a description
separates a skill from its siblings for that model; measure the agent itself with an agent
target (``copilot``, ``command``) for its real loading path.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentsproof.core.errors import TargetError
from agentsproof.core.scrub import clip
from agentsproof.model.items import BASELINE_SYSTEM_PROMPT, SkillFile
from agentsproof.model.skillfolder import split_frontmatter

SKILL_TOOL = "skill"
CHOICE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"skill": {"type": ["string", "null"], "description": "The skill to load, or null for none."}},
    "required": ["skill"],
    "additionalProperties": False,
}
MAX_DESCRIPTION_CHARS = 1024


def description_of(skill: SkillFile) -> str:
    """A skill's ``description:`` (front matter), else its first non-heading line, bounded."""
    meta, body = split_frontmatter(skill.text)
    text = meta.get("description") if isinstance(meta.get("description"), str) else ""
    if not text:
        text = next((ln.strip() for ln in body.splitlines() if ln.strip() and not ln.startswith("#")), "")
    text = " ".join(str(text).split())
    return text[:MAX_DESCRIPTION_CHARS]


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def catalogue(skills: list[SkillFile]) -> str:
    """The ``<available_skills>`` block: one ``<skill>`` with ``<name>`` and ``<description>`` each."""
    rows = [f"<skill>\n<name>{_escape(s.name)}</name>\n<description>{_escape(description_of(s))}</description>\n</skill>" for s in skills]
    return "<available_skills>\n" + "\n".join(rows) + "\n</available_skills>"


def choice_system(skills: list[SkillFile], base: str = BASELINE_SYSTEM_PROMPT) -> str:
    """The system message of the choosing call (``base``: the arm's own system prompt)."""
    return (
        f"{base}\n\n"
        f"You have a `{SKILL_TOOL}` tool. A skill is a set of instructions for one kind of task; calling the tool "
        "loads that skill's instructions into the conversation. Load a skill only when the user's request is the "
        "kind of task its description names; otherwise answer without one.\n\n"
        f"{catalogue(skills)}\n\n"
        'Before answering, reply with only a JSON object: {"skill": "<name>"} to call the tool with that skill, '
        'or {"skill": null} to answer without a skill.'
    )


def loaded_message(skill: SkillFile) -> str:
    """The tool's result: the chosen skill's text, as the next message of the conversation."""
    return f"The `{SKILL_TOOL}` tool loaded the skill {skill.name!r}:\n\n{skill.text}\n\nNow answer the user's request."


_OBJECT = re.compile(r"\{.*\}", re.S)


def parse_choice(text: str, names: list[str]) -> str | None:
    """The skill the reply chose, or None for ``{"skill": null}``; a reply that is not a valid
    choice (not a JSON object with ``skill``, not a name, a name not installed) raises
    :class:`TargetError`: the trial is errored with that reason, never counted as "no skill"."""
    try:
        obj = json.loads(text)
    except ValueError:
        found = _OBJECT.search(text or "")
        try:
            obj = json.loads(found.group(0)) if found else None
        except ValueError:
            obj = None
    if not isinstance(obj, dict) or "skill" not in obj:
        raise _invalid(f"the reply was not a JSON object with 'skill': {clip(' '.join(str(text or '').split()), 80)!r}")
    choice = obj["skill"]
    if choice is None or (isinstance(choice, str) and choice.strip().lower() in ("", "none", "null")):
        return None
    if not isinstance(choice, str):
        raise _invalid(f"the model's choice was not a name: {clip(json.dumps(choice, default=str), 80)}")
    if choice.strip() not in names:
        raise _invalid(f"the model chose {clip(choice.strip(), 80)!r}, which is not an installed skill ({clip(', '.join(names), 200)})")
    return choice.strip()


def _invalid(why: str) -> TargetError:
    return TargetError(f"invalid simulated skill choice: {why}", kind="malformed")
