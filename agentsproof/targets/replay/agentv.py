"""agentv's ``replay`` providers as replay targets (:mod:`agentsproof.targets.replay.target`).

agentv defines one in ``.agentv/providers.yaml`` (``{id: replay, label, source_target,
fixtures | transcripts, suite}``) or its older ``.agentv/targets.yaml`` (``{name, provider:
replay, ...}``), in the eval's folder or a folder above it. A label naming such an entry (and
no targets.yaml target) runs as our ``replay`` target: its recording's path is read relative
to that file's folder and must stay inside the project; ``suite`` and ``source_target``
select the records as agentv selects them. Other keys (``eval_path``, ``variant``,
``execution_traces`` …) are not read: a note says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.core.notice import note_once
from agentsproof.targets.base import TargetDef

KNOWN = {"id", "provider", "label", "name", "source_target", "fixtures", "transcripts", "suite"}


def _is_replay(entry: dict[str, Any], name: str) -> bool:
    kind = entry.get("provider", entry.get("id"))
    label = entry.get("label", entry.get("name"))
    return isinstance(kind, str) and kind.split(":", 1)[0].strip().lower() == "replay" and label == name


def replay_target(name: str, near: Path | None) -> TargetDef | None:
    """A replay target for agentv's ``replay`` entry ``name`` near the eval file; None when there is none."""
    from agentsproof.core.inputs import display
    from agentsproof.core.project import resolve_ref
    from agentsproof.targets.base import agentv_entries
    from agentsproof.targets.replay.target import ReplayTargetSpec

    if near is None:
        return None
    for file, i, entry in agentv_entries(near):
        if not _is_replay(entry, name):
            continue
        src = display(file)
        at = f"[{i}]"
        source = entry.get("source_target")
        if not isinstance(source, str) or not source.strip():
            raise InputError(src, f"{at}.source_target", "a replay provider names the target whose runs were recorded")
        paths: dict[str, str] = {}
        for key in ("fixtures", "transcripts"):
            if entry.get(key) is not None:
                if not isinstance(entry[key], str):
                    raise InputError(src, f"{at}.{key}", "must be a path to a JSONL file")
                paths[key] = str(resolve_ref(entry[key], file, f"{at}.{key}"))
        if len(paths) != 1:
            raise InputError(src, at, "a replay provider needs exactly one replay source: fixtures or transcripts")
        suite = entry.get("suite")
        spec = ReplayTargetSpec(type="replay", source_target=source, suite=suite if isinstance(suite, str) else None, **paths)
        note_once(f"{src}: {at}: {name!r} is agentv's replay provider: its recorded runs of {source!r} are replayed, no model is called")
        other = sorted(str(k) for k in entry if k not in KNOWN)
        if other:
            note_once(f"{src}: {at}: {', '.join(other)} not read by agentsproof")
        return TargetDef(name=name, spec=spec, source=src, folder=None)
    return None
