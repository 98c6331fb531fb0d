"""An EVAL.yaml's suite-level keys about what runs: its target and its name.

The target is ``execution.target``, ``target``, the one ``providers`` entry or agentv's
``defaults.provider``; a ``providers`` entry is a name, ``{id, label}`` (agentv's object form:
its label, else its id) or a one-key map ``{ID: {label}}``. ``defaults.grader`` (the judge's
provider) and ``defaults.system_message`` (an older default system prompt, which agentv no
longer sends) are noted, not used.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError

EXECUTION_KEYS = {"target", "evaluators", "assert", "skip_defaults", "cache", "budget_usd", "budgetUsd", "fail_on_error", "failOnError", "threshold"}
"""A file's ``execution`` keys agentv reads (its ``assert`` / ``evaluators``: :mod:`.older`)."""
PROVIDER_KEYS = {"id", "label"}
DEFAULTS_KEYS = {"provider", "grader", "system_message"}


def _name(src: str, where: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or not str(value).strip():
        raise InputError(src, where, "must be a non-empty string")
    return str(value)


def default_name(path: Path) -> str:
    """skills/<name>/evals/EVAL.yaml → <name>; demo.eval.yaml → demo; else the folder."""
    stem = path.name
    for suffix in (".eval.yaml", ".eval.yml", ".EVAL.yaml", ".EVAL.yml"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            return stem[: -len(suffix)]
    folder = path.resolve().parent
    if folder.name == "evals":
        folder = folder.parent
    return folder.name or "eval"


def _provider(src: str, where: str, entry: Any) -> str:
    """One ``providers`` entry's name: a string, ``{id, label}`` or ``{ID: {label}}``."""
    if isinstance(entry, str) and entry.strip():
        return entry
    if isinstance(entry, dict) and ("id" in entry or "label" in entry):
        extra = sorted(str(k) for k in entry if k not in PROVIDER_KEYS)
        if extra:
            raise InputError(
                src,
                f"{where}.{extra[0]}",
                "a provider's settings are not read from the eval file; define the target in targets.yaml "
                "(or .agentv/providers.yaml) and name it here by its label",
            )
        return _name(src, f"{where}.label" if "label" in entry else f"{where}.id", entry.get("label", entry.get("id")))
    if isinstance(entry, dict) and len(entry) == 1:  # {openai:gpt-4: {label: x}}
        ((key, options),) = entry.items()
        if options is not None and not isinstance(options, dict):
            raise InputError(src, f"{where}.{key}", "must be a mapping of the provider's options (label)")
        extra = sorted(str(k) for k in (options or {}) if k not in PROVIDER_KEYS)
        if extra:
            raise InputError(src, f"{where}.{key}.{extra[0]}", "a provider's settings are not read from the eval file; define the target in targets.yaml")
        return _name(src, f"{where}.{key}", (options or {}).get("label", key))
    raise InputError(src, where, "must be a target name, {id, label} or {ID: {label}}")


def _known_keys(src: str, field: str, value: Any, known: Iterable[str], shape: str) -> None:
    """``value`` is a mapping of ``known`` keys only; else one line naming the field or the first unknown key."""
    if not isinstance(value, dict):
        raise InputError(src, field, f"must be a mapping ({shape})")
    extra = sorted(str(k) for k in value if k not in known)
    if extra:
        raise InputError(src, f"{field}.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(known))}")


def suite_target(src: str, data: dict, notes: list[str]) -> tuple[str | None, str | None]:
    """(the target's name, the field it came from), or (None, None); notes for ``defaults`` go to ``notes``."""
    found: list[tuple[str, str]] = []
    execution = data.get("execution")
    if execution is not None:
        _known_keys(src, "execution", execution, EXECUTION_KEYS, "target: NAME")
        if execution.get("target") is not None:
            found.append((_name(src, "execution.target", execution["target"]), "execution.target"))
    if data.get("target") is not None:
        found.append((_name(src, "target", data["target"]), "target"))
    providers = data.get("providers")
    if providers is not None:
        entries = providers if isinstance(providers, list) else [providers]
        if not entries:
            raise InputError(src, "providers", "must be a target name or a list of them")
        names = [_provider(src, f"providers[{i}]" if isinstance(providers, list) else "providers", e) for i, e in enumerate(entries)]
        if len(names) > 1:
            raise InputError(src, "providers[1]", "one target per run; pick one with --target NAME")
        found.append((names[0], "providers[0]"))
    defaults = data.get("defaults")
    if defaults is not None:
        _known_keys(src, "defaults", defaults, DEFAULTS_KEYS, "provider, grader")
        if defaults.get("provider") is not None:
            found.append((_name(src, "defaults.provider", defaults["provider"]), "defaults.provider"))
        if defaults.get("grader") is not None:
            notes.append(f"defaults.grader: {defaults['grader']!r} (agentv's judge provider) is not used; the judge is --judge-model / --model")
        if defaults.get("system_message") is not None:
            notes.append(
                "defaults.system_message: agentv's older default system prompt is not sent (agentv no longer sends it); a test's own system message is"
            )
    if len({n for n, _ in found}) > 1:
        raise InputError(src, found[1][1], f"{found[1][0]!r} differs from {found[0][1]} {found[0][0]!r}; give one target")
    return (found[0][0], found[0][1]) if found else (None, None)


REPEAT_KEYS = {"count", "strategy", "early_exit", "earlyExit", "cost_limit_usd", "costLimitUsd"}


def repeat_value(src: str, value: Any, notes: list[str]) -> int | None:
    """``evaluate_options.repeat``: a whole number, or agentv's ``{count, strategy, early_exit}`` (trials per arm
    from ``count``; the strategy, which only changes agentv's own verdict of a test from its trials, is noted)."""
    if isinstance(value, dict):
        extra = sorted(str(k) for k in value if k not in REPEAT_KEYS)
        if extra:
            raise InputError(src, f"evaluate_options.repeat.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(REPEAT_KEYS))}")
        used = [k for k in sorted(value) if k != "count"]
        if used:
            notes.append(
                f"evaluate_options.repeat.{', '.join(used)}: agentv's verdict from repeated trials ({value.get('strategy', 'pass_all')}) is not used; "
                "every trial is scored and compared"
            )
        where, value = "evaluate_options.repeat.count", value.get("count", 1)
    else:
        where = "evaluate_options.repeat"
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000):
        raise InputError(src, where, "must be a whole number from 1 to 1000")
    return value


PROMPT_KEYS = {"id", "label", "raw", "prompt", "file", "path", "prefix", "suffix"}


def suite_prompts(src: str, value: Any, path: Path, to_text: Callable[[str, Any], str]) -> list[tuple[str, str]]:
    """agentv's ``prompts``: (label, template) per prompt. A prompt is a string (``file://x`` reads the file),
    or ``{id, label, raw | prompt | file | path, prefix, suffix}``; a ``.json`` file holds chat messages,
    made text by ``to_text(where, messages)``. Every test runs once per prompt."""
    from agentsproof.core.inputs import MAX_EVAL_FILE_BYTES, confined, read_text

    if value is None:
        return []
    entries = value if isinstance(value, list) else [value]
    out: list[tuple[str, str]] = []
    for i, entry in enumerate(entries):
        where = f"prompts[{i}]"
        label, ref, text = str(i + 1), None, None
        if isinstance(entry, str):
            ref, text = (entry.strip().removeprefix("file://"), None) if entry.strip().startswith("file://") else (None, entry)
        elif isinstance(entry, dict):
            extra = sorted(str(k) for k in entry if k not in PROMPT_KEYS)
            if extra:
                raise InputError(src, f"{where}.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(PROMPT_KEYS))}")
            label = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(entry.get("id") or entry.get("label") or label)).strip("-") or label
            given = [k for k in ("raw", "prompt", "file", "path") if entry.get(k) is not None]
            if len(given) != 1:
                raise InputError(src, where, "give the prompt as one of raw, prompt (its text), file or path (a file beside the eval)")
            raw = entry[given[0]]
            if not isinstance(raw, str) or not raw.strip():
                raise InputError(src, f"{where}.{given[0]}", "must be a non-empty string")
            ref, text = (raw.removeprefix("file://"), None) if given[0] in ("file", "path") else (None, raw)
        else:
            raise InputError(src, where, "must be a prompt template (a string) or {label, raw | file}")
        if ref is not None:
            folder = path.resolve().parent
            target = confined(ref, path, where, root=folder.parent if folder.name == "evals" else None)
            if not target.is_file():
                raise InputError(src, where, f"file {ref!r} not found")
            text = read_text(target, source=src, field=where, max_bytes=MAX_EVAL_FILE_BYTES, what="prompt file")
            if target.suffix.lower() == ".json":
                import json

                try:
                    text = to_text(where, json.loads(text))
                except ValueError as err:
                    raise InputError(src, where, f"{ref} is not JSON: {err}") from None
        assert text is not None
        if isinstance(entry, dict):
            text = str(entry.get("prefix") or "") + text + str(entry.get("suffix") or "")
        if not text.strip():
            raise InputError(src, where, "is empty")
        out.append((label, text))
    return out
