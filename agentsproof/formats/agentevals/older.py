"""agentv's older EVAL.yaml dialect (``evalcases:``), read as the current one.

Its tests name their fields differently: ``input_messages`` (→ ``input``),
``expected_messages`` (→ ``expected_output``), ``outcome`` / ``expected_outcome``
(→ ``criteria``); ``conversation_id`` groups tests into a thread (each still runs as its
own single turn, said once) and ``execution.target`` may repeat the suite's target.

Its evaluator list (``execution.evaluators``, on the file for every test or on one test)
becomes assertions, as agentv ran them (:func:`evaluators`):

| older evaluator | assertion |
|---|---|
| ``code_judge`` (``script``: argv or command line; ``cwd``) | ``script`` (agentv's JSON payload on stdin; other keys its ``config``) |
| ``llm_judge`` with ``prompt`` (a file or text) | ``llm-grader`` with that prompt |
| ``llm_judge`` without ``prompt`` | agentv's default judge of the test's ``expected_outcome`` / ``expected_output`` |
| ``composite`` with ``aggregator: {type: weighted_average, weights}`` | an ``assert-set`` of its evaluators, each with its share of the weight |
| ``composite`` with a ``code_judge`` (``path``) or ``llm_judge`` (``prompt``) aggregator | the ``composite`` grader: its evaluators, then the aggregator reading their results |
| any other type (``rubric``, ``contains`` …) | the assertion of that type (``_`` read as ``-``) |

``name`` labels the check (its ``metric``). A test's ``execution.skip_defaults: true`` leaves
out the file's assertions (agentv's root ``assert`` / ``execution.evaluators``) for that
test; ``execution.assert`` is the test's ``assert``. ``execution``'s run options
(``cache``, ``budget_usd``, ``fail_on_error``, ``threshold``) are noted, not applied.
"""

from __future__ import annotations

from typing import Any

from agentsproof.core.errors import InputError

OLD_TEST_KEYS = (("input_messages", "input"), ("expected_messages", "expected_output"), ("expected_outcome", "criteria"), ("outcome", "criteria"))
"""agentv's older names for a test's fields → the current ones."""
TEST_EXECUTION_KEYS = {"target", "evaluators", "assert", "skip_defaults", "cache", "budget_usd", "budgetUsd", "fail_on_error", "failOnError", "threshold"}
"""A test's ``execution`` keys agentv reads (the run options among them are noted)."""
RUN_OPTIONS = ("cache", "budget_usd", "budgetUsd", "fail_on_error", "failOnError")
EXTRA_ASSERTS = "__agentv_execution_asserts"
"""The key under which :func:`older_test` hands a test's ``execution`` assertions (field, entry) to the parser."""
SKIP_DEFAULTS = "__agentv_skip_defaults"
"""The key under which :func:`older_test` says the test skips the file's assertions."""
CODE_JUDGES = {"code_judge", "code-judge", "code"}
COMPOSITE = "agentv-composite"
"""The assertion an older composite with a program or judge aggregator becomes (built by :mod:`.asserts` as a composite grader)."""
LLM_JUDGES = {"llm_judge", "llm-judge"}


def _name(src: str, where: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise InputError(src, where, "must be a non-empty string")
    return str(value)


def _one(src: str, where: str, raw: Any) -> dict[str, Any] | str:
    """One older evaluator as a current assertion."""
    if isinstance(raw, str):
        return raw  # a plain criterion, as in assert
    if not isinstance(raw, dict):
        raise InputError(src, where, "must be an evaluator (a mapping with name and type)")
    entry = dict(raw)
    kind = entry.get("type")
    if not isinstance(kind, str) or not kind.strip():
        raise InputError(src, f"{where}.type", "required field is missing (code_judge, llm_judge, composite or an assertion type)")
    name = entry.pop("name", None)
    if name is not None and "metric" not in entry:
        entry["metric"] = _name(src, f"{where}.name", name)
    if kind in CODE_JUDGES:
        if "script" in entry and "command" in entry:
            raise InputError(src, f"{where}.script", "is the same as 'command'; keep one")
        entry["command"] = entry.pop("script", entry.get("command"))
        entry["type"] = "script"
        if entry["command"] is None:
            raise InputError(src, f"{where}.script", "required field is missing (the command to run)")
    elif kind in LLM_JUDGES:
        entry["type"] = "llm-grader"
    elif kind == "composite":
        return _composite(src, where, entry)
    else:
        entry["type"] = kind.replace("_", "-")
    return entry


def _composite(src: str, where: str, entry: dict[str, Any]) -> dict[str, Any]:
    """agentv's ``composite``: its evaluators as an assert-set whose weights are the aggregator's."""
    inner = entry.get("evaluators")
    if not isinstance(inner, list) or not inner:
        raise InputError(src, f"{where}.evaluators", "must be a non-empty list of evaluators")
    aggregator = entry.get("aggregator") or {"type": "weighted_average"}
    if not isinstance(aggregator, dict):
        raise InputError(src, f"{where}.aggregator", "must be a mapping with a type")
    kind = aggregator.get("type")
    if kind not in ("weighted_average", *CODE_JUDGES, *LLM_JUDGES):
        raise InputError(src, f"{where}.aggregator.type", f"{kind!r}: expected weighted_average, code_judge or llm_judge")
    if kind != "weighted_average":  # a program or a judge reading the evaluators' results: the composite grader
        members = [_one(src, f"{where}.evaluators[{i}]", raw) for i, raw in enumerate(inner)]
        program = aggregator.get("path", aggregator.get("script", aggregator.get("command")))
        prompt = aggregator.get("prompt")
        if kind in CODE_JUDGES and program is None:
            raise InputError(src, f"{where}.aggregator.path", "required field is missing (the aggregator's command)")
        if kind in LLM_JUDGES and not isinstance(prompt, str):
            raise InputError(src, f"{where}.aggregator.prompt", "required field is missing (the aggregator's judge prompt)")
        made: dict[str, Any] = {"type": COMPOSITE, "where": where, "assert": members}
        made |= {"aggregator": "script", "command": program} if kind in CODE_JUDGES else {"aggregator": "judge", "prompt": prompt}
        return made | {k: entry[k] for k in ("weight", "metric") if k in entry}
    weights = aggregator.get("weights") or {}
    if not isinstance(weights, dict):
        raise InputError(src, f"{where}.aggregator.weights", "must map evaluator names to weights")
    children: list[dict[str, Any]] = []
    for i, raw in enumerate(inner):
        one = _one(src, f"{where}.evaluators[{i}]", raw)
        child: dict[str, Any] = {"type": "llm-rubric", "value": one} if isinstance(one, str) else one
        label = child.get("metric") or child.get("name")
        if label in weights:
            w = weights[label]
            if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
                raise InputError(src, f"{where}.aggregator.weights.{label}", "must be a number of 0 or more")
            child["weight"] = float(w)
        children.append(child)
    unknown = sorted(str(k) for k in weights if k not in {c.get("metric") for c in children})
    if unknown:
        raise InputError(src, f"{where}.aggregator.weights.{unknown[0]}", "names no evaluator of the composite")
    out: dict[str, Any] = {"type": "assert-set", "assert": children}
    for key in ("weight", "metric"):
        if key in entry:
            out[key] = entry[key]
    return out


def evaluators(src: str, where: str, value: Any) -> list[tuple[str, Any]]:
    """agentv's older ``execution.evaluators`` list as (field, assertion) pairs."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(src, where, "must be a list of evaluators")
    return [(f"{where}[{i}]", _one(src, f"{where}[{i}]", raw)) for i, raw in enumerate(value)]


def execution_asserts(src: str, where: str, execution: dict[str, Any]) -> list[tuple[str, Any]]:
    """An ``execution`` mapping's ``assert`` and ``evaluators`` as (field, assertion) pairs."""
    out: list[tuple[str, Any]] = []
    raw_assert = execution.get("assert")
    if raw_assert is not None:
        if not isinstance(raw_assert, list):
            raise InputError(src, f"{where}.assert", "must be a list")
        out += [(f"{where}.assert[{i}]", a) for i, a in enumerate(raw_assert)]
    return out + evaluators(src, f"{where}.evaluators", execution.get("evaluators"))


def suite_execution_asserts(src: str, execution: Any) -> list[tuple[str, Any]]:
    """The file's ``execution.assert`` / ``execution.evaluators`` (agentv's root graders, in every test unless it skips them)."""
    if not isinstance(execution, dict):
        return []  # the target's reader names a bad execution
    return execution_asserts(src, "execution", execution)


def older_test(src: str, at: str, raw: dict, target: str | None, threads: set[str], notes: list[str] | None = None) -> dict:
    """agentv's older test fields (``input_messages``, ``expected_messages``, ``outcome`` /
    ``expected_outcome``, ``conversation_id``, ``execution``) as the current ones."""
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
            raise InputError(src, f"{at}.execution", "must be a mapping (target, evaluators, assert, skip_defaults)")
        extra = sorted(str(k) for k in execution if k not in TEST_EXECUTION_KEYS)
        if extra:
            raise InputError(src, f"{at}.execution.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(TEST_EXECUTION_KEYS))}")
        own = execution.get("target")
        if own is not None and _name(src, f"{at}.execution.target", own) != target and notes is not None:
            notes.append(f"{at}.execution.target: {own!r} (agentv's per-test target) is not used; every test runs on the run's target (--target NAME picks it)")
        skip = execution.get("skip_defaults", False)
        if not isinstance(skip, bool):
            raise InputError(src, f"{at}.execution.skip_defaults", "must be true or false")
        raw[SKIP_DEFAULTS] = skip
        raw[EXTRA_ASSERTS] = execution_asserts(src, f"{at}.execution", execution)
        used = [k for k in (*RUN_OPTIONS, "threshold") if k in execution]
        if used and notes is not None:
            notes.append(
                f"{at}.execution.{', '.join(used)}: agentv's run options for one test are not applied (--threshold, --max-cost and the cache apply to the run)"
            )
    return raw


def composite_grader(b: Any, where: str, entry: dict[str, Any]) -> None:
    """The ``composite`` grader of an older composite (``b``: the test's assertion builder,
    :class:`agentsproof.formats.agentevals.asserts.Builder`): each evaluator one child grader, then its aggregator."""
    from agentsproof.formats.agentevals.scripts import command_argv
    from agentsproof.grading.composite import RESULTS, CompositeGrader

    at = entry["where"]
    sub = type(b)(b.src, b.path, b.test, b.skill_name, b.at)
    names: list[str] = []
    for i, child in enumerate(entry["assert"]):
        before = len(sub.graders)
        if isinstance(child, str):
            sub._criteria([child], f"{at}.evaluators[{i}]", 1.0)
        else:
            sub._typed(f"{at}.evaluators[{i}]", child)
        if len(sub.graders) != before + 1 or sub.zero:
            raise b.err(f"{at}.evaluators[{i}]", "a composite's evaluator must be one grader with a weight above 0")
        names.append(str((child.get("metric") if isinstance(child, dict) else None) or f"evaluator-{i + 1}"))
    graders = [g.model_dump(by_alias=True, exclude={"required", "pass_mark"}) for g in sub.graders]
    weight = b._weight(at, entry)
    label = entry.get("metric") or "composite"
    if entry["aggregator"] == "script":
        run = command_argv(b, f"{at}.aggregator.path", {"command": entry["command"]})
        grader = CompositeGrader(type="composite", graders=graders, names=names, aggregator="script", run=run, weight=weight)
    else:
        prompt = b._judge_prompt(f"{at}.aggregator", {"prompt": entry["prompt"]}, {"EVALUATOR_RESULTS_JSON": RESULTS})
        grader = CompositeGrader(type="composite", graders=graders, names=names, aggregator="judge", prompt=prompt, weight=weight)
    b.add(grader, label, None)
