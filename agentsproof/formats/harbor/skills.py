"""A Harbor task's skills: which folders hold them, and what the baseline's image is built without.

SkillsBench keeps a task's skills in ``environment/skills/<name>/SKILL.md`` and its
Dockerfile ``COPY``s that folder into every agent's skill folder (``/root/.claude/skills``,
``.codex``, ``.agents``, ``.gemini``, ...), so an image built from the task as it is shows
them to any agent. agentsproof's protocol is SkillsBench's own comparison with a paired
design: the with-arm's image is built from the context as it is (the skills where the
Dockerfile puts them) and the target installs the task's skill where it loads skills; the
baseline's image is built from the same Dockerfile with each skill source folder of the
context replaced by an empty folder (:attr:`agentsproof.model.environment.Environment.baseline_empty`),
so every ``COPY skills ...`` copies nothing.

The skill source folders are ``environment/skills/`` and every context folder a ``COPY``
or ``ADD`` puts into an agent's skill folder or into ``[environment] skills_dir``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from agentsproof.core.errors import InputError

SKILLS_FOLDER = "skills"
"""``environment/skills/``: SkillsBench's place for a task's skills."""
AGENT_SKILL_DIRS = re.compile(r"(^|/)\.(claude|codex|agents|gemini|opencode|goose|factory|github|copilot|cursor|qwen|kiro|windsurf)/skills?(/|$)")
"""A container path that is an agent's skill folder (or inside one)."""
MAX_DOCKERFILE_BYTES = 1_000_000


@dataclass(frozen=True)
class TaskSkill:
    """One skill folder of the task (``<source>/<name>/SKILL.md``)."""

    name: str
    skill_file: Path


@dataclass
class TaskSkills:
    """What a task's arms get: its skills, and the context folders the baseline's image lacks."""

    skills: list[TaskSkill] = field(default_factory=list)
    empty_in_baseline: tuple[str, ...] = ()
    """Context paths (POSIX, relative to ``environment/``) emptied in the baseline's build."""
    copied_to: tuple[str, ...] = ()
    """The container folders the Dockerfile copies them into (for the report's note)."""

    def note(self) -> str:
        """How each arm got or lost its skills, one line for the report."""
        if not self.skills:
            return ""
        names = ", ".join(s.name for s in self.skills)
        baked = f", and copied by the task's Dockerfile into {', '.join(self.copied_to)}" if self.copied_to else ""
        lost = ", ".join(f"environment/{p}/" for p in self.empty_in_baseline)
        without = f"baseline: image built with {lost} emptied, so no skill reaches it" if lost else "baseline: no skill installed"
        return f"skills ({names}): with-arm: {'each ' if len(self.skills) > 1 else ''}installed by the target{baked}; {without}"


def _logical_lines(text: str) -> list[str]:
    out: list[str] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        out.append(current + line)
        current = ""
    if current:
        out.append(current)
    return out


def copies(dockerfile_text: str) -> list[tuple[list[str], str]]:
    """Every ``COPY``/``ADD`` from the build context: (its sources, its destination);
    ``--from=`` copies (another stage or image) are left out."""
    found: list[tuple[list[str], str]] = []
    for line in _logical_lines(dockerfile_text):
        head, _, rest = line.partition(" ")
        if head.upper() not in ("COPY", "ADD"):
            continue
        rest = rest.strip()
        flags = []
        while rest.startswith("--"):
            flag, _, rest = rest.partition(" ")
            flags.append(flag)
            rest = rest.strip()
        if any(f.startswith("--from") for f in flags):
            continue
        if rest.startswith("["):
            try:
                parts = json.loads(rest)
            except ValueError:
                continue
            if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
                continue
        else:
            parts = rest.split()
        if len(parts) >= 2:
            found.append((parts[:-1], parts[-1]))
    return found


def _context_path(src: str) -> str | None:
    """A COPY source as a context path (``./skills/`` → ``skills``); None for a URL or a glob."""
    if "://" in src or any(c in src for c in "*?["):
        return None
    parts = [p for p in PurePosixPath(src.lstrip("/")).parts if p not in (".", "")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _skill_dirs(folder: Path) -> list[TaskSkill]:
    if not folder.is_dir() or folder.is_symlink():
        return []
    out = []
    for sub in sorted(folder.iterdir()):
        if sub.name.startswith(".") or sub.is_symlink() or not sub.is_dir():
            continue
        if (sub / "SKILL.md").is_file() and not (sub / "SKILL.md").is_symlink():
            out.append(TaskSkill(sub.name, sub / "SKILL.md"))
    if not out and (folder / "SKILL.md").is_file():  # the folder is one skill
        out.append(TaskSkill(folder.name, folder / "SKILL.md"))
    return out


def find_skills(environment: Path, dockerfile: Path | None, skills_dir: str | None, src: str) -> TaskSkills:
    """The task's skills (``environment/skills/`` and what the Dockerfile copies into an
    agent's skill folder or ``skills_dir``) and what the baseline's build must empty."""
    from agentsproof.core.inputs import display, read_text

    sources: dict[str, None] = {}
    dests: dict[str, None] = {}
    if dockerfile is not None:
        text = read_text(dockerfile, source=display(dockerfile), field=None, max_bytes=MAX_DOCKERFILE_BYTES, what="Dockerfile")
        for srcs, dest in copies(text):
            into_skills = AGENT_SKILL_DIRS.search(dest) is not None or (skills_dir is not None and dest.rstrip("/") == skills_dir)
            for s in srcs:
                rel = _context_path(s)
                if into_skills and (rel is None or not (environment / rel).is_dir()):
                    raise InputError(
                        display(dockerfile),
                        None,
                        f"COPY {s} {dest}: copies what is not a folder of the build context into a skill folder, so the baseline's image "
                        "cannot be built without it; copy a folder of skills (COPY skills /root/.claude/skills)",
                    )
                if rel is None:
                    continue
                if into_skills or rel == SKILLS_FOLDER:
                    sources[rel] = None
                    dests[dest.rstrip("/")] = None
    if (environment / SKILLS_FOLDER).is_dir():
        sources.setdefault(SKILLS_FOLDER, None)
    skills: list[TaskSkill] = []
    seen: set[str] = set()
    for rel in sources:
        for skill in _skill_dirs(environment / rel):
            if skill.name not in seen:
                seen.add(skill.name)
                skills.append(skill)
    if skills_dir is not None and not skills:
        raise InputError(
            src,
            "environment.skills_dir",
            f"{skills_dir!r} gets no skill folder from environment/ (no COPY into it of a folder of <name>/SKILL.md); the with-arm has nothing to install",
        )
    emptied = tuple(rel for rel in sources if (environment / rel).is_dir())
    return TaskSkills(skills=skills, empty_in_baseline=emptied, copied_to=tuple(dests))
