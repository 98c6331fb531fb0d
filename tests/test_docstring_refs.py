"""Every dotted ``agentsproof.…`` name and every ``package/module.py`` path that a docstring,
comment or doc page points at must exist: a module that moved leaves no stale pointer."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "agentsproof"
DOTTED = re.compile(r"(?<![\w./\"'-])(agentsproof(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
PATHLIKE = re.compile(
    r"(?<![\w./-])(?:agentsproof/)?((?:core|model|llm|stats|targets|grading|report|executor|formats|interop|commands|generator|server|cli|sdk)/[\w/]*\.py)\b(?:::(\w+))?"
)


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _sources() -> list[Path]:
    docs = sorted((REPO / "docs").glob("*.md")) + [REPO / "CONTRIBUTING.md", REPO / "README.md"]
    return sorted(PACKAGE.rglob("*.py")) + docs


def _refs() -> list[tuple[str, str]]:
    from agentsproof.core.entrypoints import GROUPS  # entry-point group names, not modules

    out = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(REPO))
        for m in DOTTED.finditer(text):
            name = m.group(1).rstrip(".")
            if name.startswith("agentsproof.") and not name.endswith(("_", ".py")) and name not in GROUPS.values():
                out.append((rel, name))
        for m in PATHLIKE.finditer(text):
            out.append((rel, m.group(1) + (f"::{m.group(2)}" if m.group(2) else "")))
    return sorted(set(out))


def test_every_pointer_at_a_module_or_name_resolves():
    missing = []
    for where, ref in _refs():
        if ".py" in ref:
            file, _, name = ref.partition("::")
            found = next((p for p in (PACKAGE / file, REPO / file) if p.is_file()), None)
            if found is None or (name and not re.search(rf"^\s*(?:async def|def|class) {name}\b|^\s*{name}\b\s*[:=]", found.read_text(encoding="utf-8"), re.M)):
                missing.append(f"{where}: {ref}")
        elif not _resolves(ref):
            missing.append(f"{where}: {ref}")
    assert not missing, "stale pointers:\n" + "\n".join(missing)


@pytest.mark.parametrize("ref, ok", [("agentsproof.core.scrub.clip", True), ("agentsproof.formats.evalfile", False), ("agentsproof.core.scrub.nope", False)])
def test_the_resolver_tells_a_moved_module_from_a_present_one(ref, ok):
    assert _resolves(ref) is ok
