"""agentv's older EVAL.yaml dialect (``evalcases:``), read as the current one.

Its tests name their fields differently: ``input_messages`` (→ ``input``),
``expected_messages`` (→ ``expected_output``), ``outcome`` / ``expected_outcome``
(→ ``criteria``); ``conversation_id`` groups tests into a thread (each still runs as its
own single turn, said once) and ``execution.target`` may repeat the suite's target. Its
``execution.evaluators`` list is refused by name: write each as an assertion.
"""

from __future__ import annotations

from typing import Any

from agentsproof.core.errors import InputError

OLD_TEST_KEYS = (("input_messages", "input"), ("expected_messages", "expected_output"), ("expected_outcome", "criteria"), ("outcome", "criteria"))
"""agentv's older names for a test's fields → the current ones."""


def _name(src: str, where: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise InputError(src, where, "must be a non-empty string")
    return str(value)


def older_test(src: str, at: str, raw: dict, target: str | None, threads: set[str]) -> dict:
    """agentv's older test fields (``input_messages``, ``expected_messages``, ``outcome`` /
    ``expected_outcome``, ``conversation_id``, ``execution.target``) as the current ones."""
    if not any(old in raw for old, _ in OLD_TEST_KEYS) and "conversation_id" not in raw and "execution" not in raw:
        return raw
    raw = dict(raw)
    for old, new in OLD_TEST_KEYS:
        if old in raw:
            if new in raw:
                raise InputError(src, f"{at}.{old}", f"is agentv's older name for '{new}'; keep one")
            raw[new] = raw.pop(old)
    thread = raw.pop("conversation_id", None)
    if thread is not None:
        threads.add(_name(src, f"{at}.conversation_id", thread))
    execution = raw.pop("execution", None)
    if execution is not None:
        if not isinstance(execution, dict):
            raise InputError(src, f"{at}.execution", "must be a mapping (target: NAME)")
        if "evaluators" in execution:
            raise InputError(
                src,
                f"{at}.execution.evaluators",
                "agentv's older evaluator list is not read; write each as an assertion (llm-grader with prompt, script with command)",
            )
        extra = sorted(str(k) for k in execution if k != "target")
        if extra:
            raise InputError(src, f"{at}.execution.{extra[0]}", "unknown key; expected target")
        own = execution.get("target")
        if own is not None and _name(src, f"{at}.execution.target", own) != target:
            raise InputError(
                src, f"{at}.execution.target", f"{own!r} differs from the suite's target {target!r}; one target per run (run it with --target NAME)"
            )
    return raw
