"""skill-creator's trigger evals (``[{query, should_trigger}]``, or an evals.json's
``should_trigger`` cases) as an activation suite of their skill, for ``agentsproof
activation FILE``, ``tune-description FILE`` and ``tc-eval FILE``; the file's shapes are read
by :mod:`agentsproof.formats.skill_creator`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentsproof.formats.skill_creator import activation_prompts, read_json


def trigger_skill(path: Path) -> Path:
    """The SKILL.md a trigger-eval file is about: its ``skill_name`` (an evals.json's rules,
    :func:`agentsproof.formats.evals_json._skill_file`), else the SKILL.md above its
    ``evals/`` folder or beside it; InputError naming the file otherwise."""
    from agentsproof.core.errors import InputError
    from agentsproof.core.inputs import display
    from agentsproof.formats.evals_json import _skill_file

    src = display(path)
    data = read_json(path)
    name = data.get("skill_name") if isinstance(data, dict) else None
    if isinstance(name, str) and name.strip():
        skill, notes = _skill_file(name, path, src)
        from agentsproof.core.notice import note_once

        for line in notes:
            note_once(f"{src}: {line}")
        return skill
    folder = path.resolve().parent
    for cand in (folder.parent / "SKILL.md" if folder.name == "evals" else None, folder / "SKILL.md"):
        if cand is not None and cand.is_file():
            return cand
    raise InputError(
        src,
        "skill_name",
        'no skill for these trigger evals: keep the file in <skill>/evals/ (or beside its SKILL.md), or wrap it as {"skill_name": NAME, "evals": [...]}',
    )


def trigger_suites(path: Path) -> Any:
    """A trigger-eval file as ``agentsproof activation`` runs it: a
    :class:`~agentsproof.formats.activation.PluginSuites` of its skill (with every skill of the
    skill's plugin installed, when it is in one) and one suite of its prompts."""
    from agentsproof.core.errors import InputError
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_text
    from agentsproof.formats.activation import PluginSuites, plugin_skills_for
    from agentsproof.formats.eval_yaml.items import skill_file
    from agentsproof.model.activation import DEFAULT_SHOULD_NOT_TYPE, DEFAULT_SHOULD_TYPE, ActivationPrompt, ActivationSuite

    prompts = activation_prompts(path)
    if not prompts:
        raise InputError(display(path), None, "has no trigger evals ({query, should_trigger} entries, or evals.json cases with should_trigger)")
    source = trigger_skill(path)
    skills = plugin_skills_for(source)
    if skills is None:
        text = read_text(source, source=display(source), field=None, max_bytes=MAX_SOURCE_FILE_BYTES, what="skill file")
        name = source.parent.name if source.name == "SKILL.md" else source.stem
        skills = [skill_file(name, "skill", text, source)]
    own = next((s for s in skills if Path(s.source_path or "").resolve() == source.resolve()), skills[0])
    seen: set[tuple[str, bool]] = set()
    made = []
    for text, expect in prompts:
        if (text, expect) in seen or not text.strip():
            continue
        seen.add((text, expect))
        made.append(ActivationPrompt(text, expect, DEFAULT_SHOULD_TYPE if expect else DEFAULT_SHOULD_NOT_TYPE))
    suite = ActivationSuite(skill=own, prompts=made, source=display(path))
    return PluginSuites(
        name=own.name,
        plugin_dir=source.parent,
        skills=[s for s in skills if s.kind == "skill"],
        suites=[suite],
        agents=[s for s in skills if s.kind != "skill"],
    )
