"""agentv's provider labels (``providers: [llm]``) → an agentsproof target.

agentv names providers by *label* and defines them in ``.agentv/providers.yaml`` (in the
eval's folder or any folder above it), promptfoo-shaped: a list of ``{id, label, config}``
(or ``{providers: [...]}``), where ``id`` is the kind (``azure``, ``openai``,
``copilot-cli`` …) and the settings sit under ``config`` or beside ``id``.

A label resolves, in this order:

1. a targets.yaml target of that name (``--targets``, beside the eval, ``.agentsproof/``);
2. the ``.agentv/providers.yaml`` entry with that label: an LLM kind runs as the
   configured model (``--model`` / ``AGENTSPROOF_MODEL``), a kind a target kind names in its
   ``agentv_ids`` (``copilot-cli`` …) as that built-in target; a ``cli`` entry was found before
   this, as a command target (:mod:`agentsproof.targets.command.agentv`, through the targets
   lookup), a ``replay`` entry as a replay target (:mod:`agentsproof.targets.replay.agentv`);
   any other kind is an error naming the entry (define a targets.yaml target instead);
3. no providers.yaml at all: the label is the configured model, as ``default`` is.

Each resolution that is not a plain targets.yaml match is said once on stderr.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.core.notice import note_once

PROVIDERS_FILE = Path(".agentv") / "providers.yaml"
LLM_KINDS = frozenset(
    {
        "azure",
        "azure-openai",
        "openai",
        "anthropic",
        "gemini",
        "google",
        "vertex",
        "openrouter",
        "ollama",
        "litellm",
        "bedrock",
        "mistral",
        "groq",
        "deepseek",
        "xai",
        "together",
        "llm",
        "mock",
    }
)


@dataclass(frozen=True)
class Resolved:
    """Where an agentv provider label leads, and what to say about it."""

    target: str
    """``chat`` (the configured model) or a target name."""
    note: str | None
    """What to tell the user once (None: a plain targets.yaml match)."""


def find_providers_file(near: Path) -> Path | None:
    """The nearest ``.agentv/providers.yaml`` in the eval's folder or a folder above it; None when there is none."""
    folder = near.resolve().parent
    for parent in [folder, *folder.parents]:
        candidate = parent / PROVIDERS_FILE
        if candidate.is_file():
            return candidate
    return None


def _entries(data: Any, src: str) -> list[dict[str, Any]]:
    if isinstance(data, dict) and "providers" in data:
        data = data["providers"]
    if not isinstance(data, list):
        raise InputError(src, "providers" if isinstance(data, dict) else None, "expected a list of providers (id, label, config)")
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"].strip():
            raise InputError(src, f"[{i}].id", "each provider needs an id (its kind: openai, azure, copilot-cli …)")
    return data


def _kind(provider_id: str) -> str:
    """promptfoo ids may carry a model: ``openai:gpt-4o`` → ``openai``."""
    return provider_id.split(":", 1)[0].strip().lower()


def resolve_label(label: str, eval_path: Path, src: str, where: str) -> Resolved:
    """What a ``providers`` label not defined in any targets.yaml runs as."""
    from agentsproof.core.inputs import display
    from agentsproof.core.validation import read_yaml

    file = find_providers_file(eval_path)
    if file is None:
        return Resolved(
            "chat",
            f"{where} {label!r}: no targets.yaml target or .agentv/providers.yaml defines it, so it runs as the configured model (--model / AGENTSPROOF_MODEL)",
        )
    fsrc = display(file)
    entries = _entries(read_yaml(file), fsrc)
    match = next(((i, e) for i, e in enumerate(entries) if e.get("label") == label), None)
    if match is None:
        match = next(((i, e) for i, e in enumerate(entries) if "label" not in e and e["id"] == label), None)
    if match is None:
        labels = sorted({str(e.get("label") or e["id"]) for e in entries})
        shown = ", ".join(labels[:6]) + (f" and {len(labels) - 6} more" if len(labels) > 6 else "")
        raise InputError(src, where, f"{label!r} is not a targets.yaml target nor a label in {fsrc} ({shown})")
    i, entry = match
    kind = _kind(entry["id"])
    if kind in LLM_KINDS:
        return Resolved(
            "chat",
            f"{where} {label!r} is {entry['id']!r} in {fsrc}: it runs as the configured model (--model / AGENTSPROOF_MODEL); its endpoint and key settings are not read",
        )
    target = _target_for(kind)
    if target is not None:
        return Resolved(target, f"{where} {label!r} is {entry['id']!r} in {fsrc}: it runs on the built-in {target!r} target")
    raise InputError(
        fsrc,
        f"[{i}].id",
        f"{entry['id']!r} (label {label!r}) has no agentsproof equivalent; define {label!r} in a targets.yaml (docs/agent-trials.md) or run with --target NAME",
    )


def say_once(src: str, note: str | None) -> None:
    """Print ``note`` for the eval file ``src`` once per process (a retry loads it again)."""
    if note:
        note_once(f"{src}: {note}", key=("agentevals", src, note))


def _target_for(agentv_kind: str) -> str | None:
    """The target kind that runs agentv's provider kind ``agentv_kind`` as its built-in target
    (a kind's ``agentv_ids``, on its registry entry), or None."""
    from agentsproof.targets import registry

    return next((kind for kind, cls in registry.classes().items() if agentv_kind in cls.agentv_ids), None)
