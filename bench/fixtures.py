"""What several benches build: a plugin of skills whose evals share one shape."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def write_plugin(root: Path, name: str, skills: int, cases: int, trials: int, *, skill_text: Callable[[int], str],
                 instruction: Callable[[int, int], str], grader: str) -> Path:
    """``root/name`` with ``skills`` skills (``skill_text(i)``), each with an eval of ``cases``
    tasks (``instruction(k, i)``, graded by the one-line YAML ``grader``) at ``trials`` per case."""
    plugin = root / name
    for i in range(skills):
        d = plugin / "skills" / f"skill-{i:02d}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(skill_text(i), encoding="utf-8")
        tasks = "\n".join(
            f"  - name: case-{k}\n    instruction: {instruction(k, i)}\n    graders:\n      - {grader}"
            for k in range(cases)
        )
        (d / "eval.yaml").write_text(
            f'version: "2"\nskill: SKILL.md\ndefaults: {{trials: {trials}, timeout: 60, threshold: 0.5}}\ntasks:\n{tasks}\n',
            encoding="utf-8",
        )
    return plugin
