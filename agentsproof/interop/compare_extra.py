"""``compare`` additions: configuration warnings, ``--last N`` over a runs folder, and any
input format (see :mod:`agentsproof.interop.compare_inputs`)."""

from __future__ import annotations

from pathlib import Path

from agentsproof.core.errors import InputError
from agentsproof.model.results import RunResult
from agentsproof.stats.compare import Comparison, compare_runs


def config_warnings(before: RunResult, after: RunResult) -> list[str]:
    """Each ``--config`` key that differs between the runs; a note when neither recorded one."""
    b = before.settings.get("config") or {}
    a = after.settings.get("config") or {}
    if not b and not a:
        return ["no configuration recorded in either run (--config KEY=VALUE): a setting change cannot be told from a regression"]
    if not b or not a:
        side = "before" if not b else "after"
        return [f"configuration recorded only in one run (none {side}); keys: {', '.join(sorted(a or b))}"]
    out = []
    for key in sorted(set(b) | set(a)):
        if b.get(key) != a.get(key):
            bv = repr(b[key]) if key in b else "(not set)"
            av = repr(a[key]) if key in a else "(not set)"
            out.append(f"configuration differs: {key}: {bv} before, {av} after")
    return out


def compare_any(before: Path, after: Path, alpha: float) -> Comparison:
    """``compare`` of two runs in any input format it reads, with the configuration warnings added."""
    from agentsproof.interop.compare_inputs import load_any

    b, a = load_any(before), load_any(after)
    cmp = compare_runs(b, a, alpha, str(before), str(after))
    cmp.warnings += config_warnings(b, a)
    return cmp


def last_runs(folder: Path, n: int) -> tuple[Path, Path]:
    """The newest run in ``folder`` (any depth) and the run ``n - 1`` before it of the same
    report, from the ``history/<UTC time>/`` copies every run keeps."""
    from agentsproof.core.inputs import display

    if not folder.is_dir():
        raise InputError(display(folder), "--last", "is not a folder of runs (default: runs/)")
    copies = [p for p in folder.rglob("history/*/*.json") if p.is_file()]
    if not copies:
        raise InputError(display(folder), "--last", "holds no saved runs (history/<time>/*.json)")

    def key(p: Path) -> tuple[str, float]:
        return (p.parent.name, p.stat().st_mtime)

    folders = sorted({p.parent.parent.parent for p in copies})  # one per plugin (report folder)
    if len(folders) > 1:  # several plugins: ask which, never pick one silently
        names = sorted({f"{p.parent.parent.parent.name}/{p.name}" for p in copies})
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        raise InputError(
            display(folder),
            "--last",
            f"holds runs of {len(folders)} plugins ({shown}); give the folder of one "
            f"(compare --last {n} {display(folders[0])}) or two files (compare BEFORE AFTER)",
        )
    newest = max(copies, key=key)
    report = newest.parent.parent  # <report folder>/history
    same = sorted((p for p in copies if p.parent.parent == report and p.name == newest.name), key=key)
    if len(same) < n:
        raise InputError(display(report.parent / newest.name), "--last", f"has {len(same)} saved run(s); {n} are needed")
    return same[-n], same[-1]
