"""agentv's ``field-accuracy`` and ``execution-metrics`` and promptfoo's ``similar`` assertions.

::

    - type: field-accuracy                    # the answer's JSON against the test's expected_output
      fields:
        - {path: invoice_number, match: exact, weight: 2}
        - {path: invoice_date, match: date, formats: [DD-MMM-YYYY, YYYY-MM-DD]}
        - {path: net_total, match: numeric_tolerance, tolerance: 1, relative: false}
        - {path: supplier.address, match: exact, required: false}
      aggregation: weighted_average           # or all_or_nothing
    - {type: execution-metrics, max_tool_calls: 10, max_tokens: 5000, max_duration_ms: 30000}
    - {type: similar, value: The expected output, threshold: 0.8}

``field-accuracy`` runs as agentv's grader does, in a script (:data:`FIELD_ACCURACY`): the
answer parsed as JSON (a fenced block or the first JSON object in it), each field read by
its dot/index path in the answer and in the test's ``expected_output`` (an object, or an
assistant message holding one), compared exactly (deep equality), as numbers within a
tolerance (absolute, or relative to the expected value) or as dates (ISO, ``DD-MMM-YYYY``,
``MM/DD/YYYY`` / ``DD/MM/YYYY`` as the formats say or the numbers tell); a field missing from
the expected output counts as matched, a required one missing from the answer fails, an
optional one missing is left out; the score is the weighted average (or 1/0 for
``all_or_nothing``); negated, 1 minus it. A test whose expected_output is no JSON object is
refused when the file loads. ``execution-metrics`` is the ``execution_metrics`` grader
(``max_llm_calls`` counts a chat trial's model calls; an agent's are not recorded, so the
check fails saying so, as agentv's does without the data); ``similar`` the ``similar`` grader.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import InputError
from agentsproof.grading.execution_metrics import ExecutionMetricsGrader
from agentsproof.grading.script import ScriptGrader
from agentsproof.grading.similar import SimilarGrader

if TYPE_CHECKING:
    from pydantic import BaseModel

    from agentsproof.formats.agentevals.parse import EvalTest

METRIC_KEYS = {"max_tool_calls", "max_llm_calls", "max_tokens", "max_cost_usd", "max_duration_ms", "target_exploration_ratio", "exploration_tolerance"}
STRUCTURED_TYPES: dict[str, set[str]] = {
    "field-accuracy": {"fields", "aggregation"},
    "execution-metrics": METRIC_KEYS,
    "similar": {"value", "threshold", "provider"},
    "similar:cosine": {"value", "threshold", "provider"},  # promptfoo's explicit name of the default metric
}
"""The assertion types of this module and the keys each takes (besides the common ones)."""
FIELD_KEYS = {"path", "match", "required", "weight", "tolerance", "relative", "formats"}
MATCHES = ("exact", "numeric_tolerance", "date")

FIELD_ACCURACY = r"""
import json, re, sys
from datetime import datetime
cfg = json.loads(sys.argv[1])
text = sys.stdin.read()
def parse(text):
    cleaned = re.sub(r"```json\n?|```", "", text).strip()
    try:
        return json.loads(cleaned)
    except ValueError:
        start = cleaned.find("{")
        while start >= 0:
            try:
                return json.JSONDecoder().raw_decode(cleaned[start:])[0]
            except ValueError:
                start = cleaned.find("{", start + 1)
        raise
MISSING = object()
def at(obj, path):
    for part in [p for p in re.split(r"\.|\[|\]", path) if p]:
        if isinstance(obj, list) and part.isdigit():
            obj = obj[int(part)] if int(part) < len(obj) else MISSING
        elif isinstance(obj, dict):
            obj = obj.get(part, MISSING)
        else:
            return MISSING
        if obj is MISSING:
            return MISSING
    return obj
def number(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v).strip())
    except ValueError:
        return None
MONTHS = {m: i + 1 for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])}
def day(v, formats):
    s = str(v).strip()
    try:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).date()
    except ValueError:
        pass
    m = re.fullmatch(r"(\d{1,2})-([A-Za-z]{3,9})-(\d{4})", s)
    if m and m.group(2)[:3].lower() in MONTHS:
        return datetime(int(m.group(3)), MONTHS[m.group(2)[:3].lower()], int(m.group(1))).date()
    m = re.fullmatch(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4})", s)
    if m:
        a, b, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        us = any("MM/DD" in f or "MM-DD" in f for f in formats)
        eu = any("DD/MM" in f or "DD-MM" in f for f in formats)
        month, dd = (b, a) if (eu and not us) or (not (us and not eu) and a > 12 >= b) else (a, b)
        try:
            return datetime(y, month, dd).date()
        except ValueError:
            return None
    return None
try:
    answer = parse(text)
except ValueError:
    answer = MISSING
results = []
if not isinstance(answer, dict):
    results = None
else:
    expected = cfg["expected"]
    for f in cfg["fields"]:
        path, weight = f["path"], float(f.get("weight", 1.0))
        want, got = at(expected, path), at(answer, path)
        if want is MISSING:
            results.append((path, 1.0, weight, True, "no expected value"))
        elif got is MISSING:
            if f.get("required", True):
                results.append((path, 0.0, weight, False, "required, missing"))
            else:
                results.append((path, 1.0, 0.0, True, "optional, missing"))
        elif f.get("match") == "numeric_tolerance":
            g, w = number(got), number(want)
            if g is None or w is None:
                results.append((path, 0.0, weight, False, "non-numeric value"))
            else:
                diff = abs(g - w)
                tol = float(f.get("tolerance", 0))
                ok = (diff if w == 0 else diff / abs(w)) <= tol if f.get("relative") else diff <= tol
                results.append((path, float(ok), weight, ok, f"{'within' if ok else 'outside'} tolerance: diff={diff:.2f}"))
        elif f.get("match") == "date":
            formats = f.get("formats") or []
            g, w = day(got, formats), day(want, formats)
            ok = g is not None and g == w
            why = "unparseable answer date" if g is None else "unparseable expected date" if w is None else "" if ok else f"date mismatch: got {g}, expected {w}"
            results.append((path, float(ok), weight, ok, why))
        else:
            ok = got == want and type(got) is type(want) or (isinstance(got, (int, float)) and isinstance(want, (int, float)) and not isinstance(got, bool) and not isinstance(want, bool) and got == want)
            results.append((path, float(ok), weight, ok, "" if ok else f"type mismatch: got {type(got).__name__}, expected {type(want).__name__}" if type(got) is not type(want) else f"value mismatch: got {json.dumps(got)[:80]}"))
if results is None:
    score, checks, details = 0.0, [{"name": "answer", "passed": False, "message": "the answer is not a JSON object"}], "the answer is not a JSON object"
else:
    if cfg["aggregation"] == "all_or_nothing":
        score = 0.0 if any(not r[3] for r in results) else 1.0
    else:
        total = sum(r[2] for r in results)
        score = (sum(r[1] * r[2] for r in results) / total) if total else (1.0 if not results else 0.0)
    checks = [{"name": r[0], "passed": r[3], "message": r[4] or "matches"} for r in results]
    details = f"{sum(r[3] for r in results)}/{len(results)} fields match"
if cfg["negate"]:
    score, details = 1.0 - score, details + " (negated)"
    checks = [dict(c, passed=not c["passed"]) for c in checks]
print(json.dumps({"score": max(0.0, min(1.0, score)), "details": details, "checks": checks}))
"""
"""The field-accuracy check, run as ``python -c`` with its config as the one argument and the answer on stdin."""


def _expected_object(src: str, where: str, test: EvalTest) -> dict[str, Any]:
    """The test's expected_output as the JSON object field-accuracy compares with (the last one, for several messages)."""
    text = test.expected_output
    if text:
        for chunk in [text, *reversed(text.split("\n\n"))]:
            try:
                found = json.loads(chunk)
            except ValueError:
                continue
            if isinstance(found, dict):
                return found
    raise InputError(
        src,
        f"{where}.type",
        "field-accuracy compares the answer with the test's expected_output, which must be a JSON object (or an assistant message holding one)",
    )


def field_accuracy(src: str, where: str, test: EvalTest, entry: dict[str, Any], weight: float, negate: bool) -> ScriptGrader:
    """The script grader of one ``field-accuracy`` assertion; InputError naming the field of a bad one."""
    fields = entry.get("fields")
    if not isinstance(fields, list) or not fields:
        raise InputError(src, f"{where}.fields", "must be a non-empty list of {path, match} fields")
    for i, f in enumerate(fields):
        at = f"{where}.fields[{i}]"
        if not isinstance(f, dict):
            raise InputError(src, at, "must be a mapping with path and match")
        extra = sorted(str(k) for k in f if k not in FIELD_KEYS)
        if extra:
            raise InputError(src, f"{at}.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(FIELD_KEYS))}")
        if not isinstance(f.get("path"), str) or not f["path"].strip():
            raise InputError(src, f"{at}.path", "required field is missing")
        if f.get("match", "exact") not in MATCHES:
            raise InputError(src, f"{at}.match", f"{f.get('match')!r}: expected one of {', '.join(MATCHES)} (fuzzy matching: write a script)")
        for key in ("weight", "tolerance", "required", "relative"):
            v, flag = f.get(key), key in ("required", "relative")
            bad = not isinstance(v, bool) if flag else isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0
            if v is not None and bad:
                raise InputError(src, f"{at}.{key}", "must be true or false" if flag else "must be a number of at least 0")
        if f.get("formats") is not None and not (isinstance(f["formats"], list) and all(isinstance(x, str) for x in f["formats"])):
            raise InputError(src, f"{at}.formats", "must be a list of date formats")
    aggregation = entry.get("aggregation", "weighted_average")
    if aggregation not in ("weighted_average", "all_or_nothing"):
        raise InputError(src, f"{where}.aggregation", f"{aggregation!r}: expected weighted_average or all_or_nothing")
    cfg = {"fields": [{"match": "exact", **f} for f in fields], "aggregation": aggregation, "expected": _expected_object(src, where, test), "negate": negate}
    return ScriptGrader(type="script", run=[sys.executable, "-c", FIELD_ACCURACY, json.dumps(cfg, default=str)], stdin="answer", weight=weight)


def execution_metrics(src: str, where: str, entry: dict[str, Any], weight: float, negate: bool) -> ExecutionMetricsGrader:
    """The ``execution_metrics`` grader of one assertion; InputError naming what it cannot honour."""
    from pydantic import ValidationError

    from agentsproof.core.validation import format_validation_error

    if negate:
        raise InputError(src, f"{where}.negate", "negating 'execution-metrics' is not supported: its thresholds are upper bounds, each its own check")
    try:
        return ExecutionMetricsGrader.model_validate({"type": "execution_metrics", **{k: entry[k] for k in METRIC_KEYS if k in entry}, "weight": weight})
    except ValidationError as exc:
        field, msg = format_validation_error(exc)
        raise InputError(src, f"{where}.{field}", msg) from None


def embedding_model(src: str, where: str, given: Any) -> str | None:
    """promptfoo's ``provider`` of a similar assertion as the embedding model (``openai:embedding:MODEL``,
    or ``{id: …}`` / ``{embedding: {id: …}}``); a provider that is not an OpenAI-compatible embedding model is refused."""
    if given is None:
        return None
    if isinstance(given, dict):
        given = given.get("embedding", given)
        given = given.get("id") if isinstance(given, dict) and set(given) <= {"id", "label"} else given
    if isinstance(given, str):
        head, _, model = given.partition(":embedding:")
        if not model:
            head, _, model = given.partition(":embeddings:")
        if head in ("openai", "azure", "azureopenai") and model.strip():
            return model.strip()
    raise InputError(
        src,
        f"{where}.provider",
        f"{given!r}: similar embeds through the run's provider; name its model as openai:embedding:MODEL (a local or other embedding provider is not run)",
    )


def similar(src: str, where: str, entry: dict[str, Any], weight: float, negate: bool) -> SimilarGrader:
    """The ``similar`` grader of one assertion (its ``threshold`` the similarity that passes, not a gate)."""
    value = entry.get("value")
    expected = [value] if isinstance(value, str) else value
    if not isinstance(expected, list) or not expected or not all(isinstance(v, str) and v.strip() for v in expected):
        raise InputError(src, f"{where}.value", "must be a text or a list of texts the answer is compared with")
    if any(v.strip().startswith("file://") for v in expected):
        raise InputError(src, f"{where}.value", "a file:// expected text is not read; write the text in the assertion")
    threshold = entry.get("threshold", 0.75)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not -1 <= threshold <= 1:
        raise InputError(src, f"{where}.threshold", "must be a cosine similarity from -1 to 1")
    model = embedding_model(src, where, entry.get("provider"))
    fields: dict[str, Any] = {"type": "similar", "expected": expected, "threshold": float(threshold), "negate": negate, "weight": weight}
    return SimilarGrader.model_validate(fields | ({"model": model} if model else {}))


def structured_grader(src: str, where: str, test: EvalTest, entry: dict[str, Any], kind: str, weight: float, negate: bool) -> BaseModel:
    """The grader of one assertion of :data:`STRUCTURED_TYPES`."""
    if kind == "field-accuracy":
        return field_accuracy(src, where, test, entry, weight, negate)
    if kind == "execution-metrics":
        return execution_metrics(src, where, entry, weight, negate)
    return similar(src, where, entry, weight, negate)  # similar, similar:cosine
