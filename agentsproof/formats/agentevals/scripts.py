"""agentv's script assertions (``script`` / ``code-grader``) and custom assertions
(:mod:`agentsproof.formats.agentevals.custom`) as ``script`` graders, for
:mod:`agentsproof.formats.agentevals.asserts`.

As agentv passes them: the command (a command line or an argv list; words naming a file
beside the eval file, or in ``cwd``, become its full path), ``config`` and every key agentv
does not know on a script (``fields``, ``algorithm``, ``expected_tools``, ``expect_created`` …)
in the payload's ``config`` on stdin, with the test's ``criteria``, ``expected_output``,
``input``, ``input_files`` and ``metadata`` as agentv gives them (the trial's own fields:
:mod:`agentsproof.grading.agentv_payload`). ``provider: {max_calls: N}`` (or ``true``: agentv's
50 calls) gives the script agentv's provider proxy to the run's judge model
(:mod:`agentsproof.grading.provider_proxy`). A ``bun`` command runs with the bun agentsproof
finds and our own ``agentv`` SDK module on its path (:mod:`agentsproof.core.bun`).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from agentsproof.formats.agentevals.custom import custom_argv
from agentsproof.formats.agentevals.negation import NOT_NEGATABLE
from agentsproof.grading.script import ScriptGrader

SCRIPT_KINDS = ("script", "code-grader")
"""``b`` below is the assertions' :class:`agentsproof.formats.agentevals.asserts.Builder` (not imported: it imports this module)."""
SCRIPT_OWN = {"command", "cwd", "config", "provider"}
"""A script assertion's own keys (its others are its config)."""


def custom_assertion(b: Any, where: str, entry: dict[str, Any], kind: str, found: Path, common: set[str]) -> None:
    """An agentv custom assertion: its file run as a script with the payload on stdin, the entry's other keys its config."""
    label = entry.get("metric") or entry.get("name") or kind
    if not isinstance(label, str) or not label.strip():
        raise b.err(f"{where}.metric", "must be a non-empty string")
    if entry.get("negate") not in (None, False):
        raise b.err(f"{where}.negate", f"negating {kind!r} is not supported: {NOT_NEGATABLE['script']}")
    config = {k: v for k, v in entry.items() if k not in common}
    weight = b._weight(where, entry)
    grader = ScriptGrader(type="script", run=custom_argv(found), stdin="json", weight=weight, config=config or None, payload=case_payload(b.test))
    b.judge_model = None
    b.add(grader, label, b._gate(where, entry))


def script_assertion(b: Any, where: str, entry: dict[str, Any], kind: str, weight: float, gate: float | None, label: str, common: set[str]) -> None:
    """agentv's script grader: its command, ``cwd``, ``config`` (with its unknown keys) and ``provider`` (noted)."""
    config = {k: v for k, v in entry.items() if k not in common | SCRIPT_OWN | {"threshold"}}
    own = entry.get("config")
    if own is not None and not isinstance(own, dict):
        raise b.err(f"{where}.config", "must be a mapping (passed to the script as the payload's config)")
    config |= own or {}
    calls = provider_calls(b, where, entry.get("provider"))
    base = None
    if entry.get("cwd") is not None:
        from agentsproof.core.inputs import confined

        rel = entry["cwd"]
        if not isinstance(rel, str) or not rel.strip():
            raise b.err(f"{where}.cwd", "must be a folder relative to the eval file")
        folder = b.path.resolve().parent
        base = confined(rel, b.path, f"{where}.cwd", root=folder.parent if folder.name == "evals" else None)
        if not base.is_dir():
            raise b.err(f"{where}.cwd", f"folder {rel!r} not found")
    run = command_argv(b, where, entry, base)
    stdin = "json" if kind == "script" or config or calls is not None else "answer"
    payload = case_payload(b.test) if stdin == "json" else None
    b.add(ScriptGrader(type="script", run=run, stdin=stdin, weight=weight, config=config or None, payload=payload, provider_calls=calls), label, gate)


def provider_calls(b: Any, where: str, given: Any) -> int | None:
    """agentv's ``provider`` on a script: ``true`` (its default of 50 calls) or ``{max_calls: N}``; None: no proxy."""
    from agentsproof.grading.provider_proxy import DEFAULT_MAX_CALLS

    if given in (None, False):
        return None
    if given is True:
        return DEFAULT_MAX_CALLS
    if not isinstance(given, dict) or any(k != "max_calls" for k in given):
        raise b.err(f"{where}.provider", "must be true or {max_calls: N} (the script's calls to the judge model)")
    n = given.get("max_calls", DEFAULT_MAX_CALLS)
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 10_000:
        raise b.err(f"{where}.provider.max_calls", "must be a whole number from 0 to 10000")
    return n


def _messages(value: Any, role: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [{"role": role, "content": value}]


def case_payload(t: Any) -> dict[str, Any]:
    """The test's part of agentv's script payload (:class:`~agentsproof.formats.agentevals.parse.EvalTest` ``t``)."""
    given = t.raw.get("input")
    plain = [e for _, e in t.asserts if isinstance(e, str) and e.strip()]  # agentv: a plain-text assertion is criteria
    return {
        "answer": None,  # agentv's wire payload has no answer alias (left out)
        "criteria": t.criteria or "\n".join(plain),
        "expected_output": _messages(t.raw.get("expected_output"), "assistant"),
        "input": _messages(given, "user") if given is not None else [{"role": "user", "content": t.prompt}],
        "input_files": [str(p) for _, p in t.files],
        "metadata": t.raw.get("metadata") if isinstance(t.raw.get("metadata"), dict) else None,
    }


def command_argv(b: Any, where: str, entry: dict[str, Any], base: Path | None = None) -> list[str]:
    """The command as an argv; words naming a file beside the EVAL.yaml (or in ``base``, the
    script's ``cwd``) become its full path (the command runs in the trial's workspace, not beside the eval);
    its last word is also looked for above the eval's folder, as agentv does (``bun graders/x.ts`` from evals/)."""
    cmd = entry.get("command")
    if isinstance(cmd, str) and cmd.strip():
        argv = shlex.split(cmd)
    elif isinstance(cmd, list) and cmd and all(isinstance(c, str) and c for c in cmd):
        argv = list(cmd)
    else:
        raise b.err(f"{where}.command", "must be a command line or a list of words")
    base = base or b.path.resolve().parent
    from agentsproof.formats.agentevals.words import names_file

    out = [str((base / w).resolve()) if names_file(base, w) else w for w in argv]
    if len(out) > 1 and out[-1] == argv[-1] and not Path(argv[-1]).is_absolute():
        out[-1] = _searched(b, argv[-1])
    return out


def _searched(b: Any, word: str) -> str:
    """agentv's rule for the command's last word: a file found in its search roots (the eval's
    folder, each folder above it up to the project root, the current folder), else the word."""
    from agentsproof.core.project import project_root, search_folders
    from agentsproof.formats.agentevals.words import names_file

    root = project_root(b.path).resolve()
    for base in search_folders(b.path, root):
        if names_file(base, word) and (base / word).resolve().is_relative_to(root):
            return str((base / word).resolve())
    return word


def judge_grader(b: Any, where: str, entry: dict[str, Any], weight: float) -> Any:
    """An ``llm-grader`` (or ``llm-rubric`` with ``prompt``): the judge prompt as given, or agentv's prompt
    template script (``prompt: {command, config}``) run on each trial with agentv's payload on stdin,
    its output the judge prompt (:mod:`agentsproof.grading.prompt_script`)."""
    from agentsproof.grading.llm_rubric import LLMRubricGrader

    prompt = entry.get("prompt")
    if not isinstance(prompt, dict) or "command" not in prompt:
        return LLMRubricGrader(type="llm_rubric", rubric=b._judge_prompt(where, entry), weight=weight)
    at = f"{where}.prompt"
    extra = sorted(str(k) for k in prompt if k not in ("command", "config"))
    if extra:
        raise b.err(f"{at}.{extra[0]}", "unknown key; agentv's prompt template takes command and config")
    config = prompt.get("config")
    if config is not None and not isinstance(config, dict):
        raise b.err(f"{at}.config", "must be a mapping (the prompt template's ctx.config)")
    run = command_argv(b, at, prompt)
    payload = {k: v for k, v in case_payload(b.test).items() if k != "answer"}  # agentv's prompt template payload has answer
    script = ScriptGrader(type="script", run=run, stdin="json", config=config or None, payload=payload)
    shown = " ".join(prompt["command"]) if isinstance(prompt["command"], list) else str(prompt["command"])
    return LLMRubricGrader(type="llm_rubric", rubric=f"the judge prompt {shown} writes", weight=weight, prompt_script=script)
