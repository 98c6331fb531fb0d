r"""EVAL.yaml assertions → agentsproof graders.

| assertion | grader |
|---|---|
| a plain string (agentv), ``rubrics`` strings | one ``assertions`` grader of all of them (weight: their count) |
| ``contains`` / ``icontains`` / ``not-contains`` / ``not-icontains`` | deterministic ``mustContain`` / ``mustNotContain`` (``i``: any case) |
| ``contains-any`` / ``icontains-any``; ``-all`` | one regex check: any of the values; ``mustContain`` with every value |
| ``starts-with`` / ``ends-with`` / ``equals`` / ``regex`` | regex checks (``equals``: the whole answer, outer white space ignored) |
| ``is-json`` | a ``script`` grader that parses the answer |
| ``llm-rubric`` (a string), ``llm-grader`` (``prompt`` file or text), ``rubric`` with ``score_ranges`` | ``llm_rubric`` |
| ``llm-rubric`` / ``llm-grader`` with no ``value`` / ``prompt`` | ``llm_rubric`` of the test's ``criteria`` and ``expected_output`` (agentv's default judge); refused when the test has neither |
| ``llm-rubric`` / ``rubrics`` / ``rubric`` with a list of outcomes | one ``assertions`` grader per outcome, with its weight (``operator: correctness`` / ``contradiction``: agentv's guidance put in the claim the judge checks) |
| ``script`` / ``code-grader`` (``command``) | ``script`` (answer on stdin: agentv's JSON payload, or the plain answer) |
| ``skill-used`` / ``not-skill-used`` / ``skill-trigger`` | ``skill_used`` (agent trials; a skill other than the one under test: checked against the skills the trial loaded) |
| ``min-length`` / ``max-length``; ``not-empty`` (promptfoo) | a ``script`` grader that counts the answer's characters; a regex check |
| ``python`` / ``javascript``; ``assert-set`` (promptfoo) | :mod:`.code`; its assertions, the set's weight shared (:mod:`.assert_set`) |
| ``field-accuracy``, ``execution-metrics`` (agentv), ``similar`` (promptfoo) | :mod:`.structured` |

Negation: ``negate: true`` (agentv, on any assertion) and a ``not-`` prefix on any type
(promptfoo's rule: ``not-regex``, ``not-starts-with``, ``not-equals``, ``not-contains-any`` …)
pass exactly when the assertion would fail: ``contains`` ↔ ``not-contains``, ``skill-used`` ↔
``not-skill-used``, a regex check becomes its negative lookahead (``\A(?![\s\S]*?(?:…))``, which
matches only when the pattern matches nowhere), ``is-json`` a script that passes on invalid
JSON, ``min-length`` N ↔ ``max-length`` N-1. A judge's verdict, a script's score and an agent
grader cannot be inverted by agentsproof's graders: their negation is refused by name
(:data:`agentsproof.formats.agentevals.negation.NOT_NEGATABLE`), never run un-negated.

``required: true`` (and ``min_score``, or an LLM assertion's ``threshold``) makes the grader
a *gate*: a trial whose gate stays below its pass mark fails, whatever its score.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agentsproof.core.errors import InputError
from agentsproof.formats.agentevals.assert_set import expand_sets
from agentsproof.formats.agentevals.code import CODE_TYPES, JUDGED_TYPES, code_grader, judge_model
from agentsproof.formats.agentevals.conversation import mark_of, scope, unmark
from agentsproof.formats.agentevals.custom import find_custom
from agentsproof.formats.agentevals.forms import shaped
from agentsproof.formats.agentevals.json_schema import BOUND_TYPES, JSON_TYPES, bound_grader, syntax_check
from agentsproof.formats.agentevals.negation import LENGTH, MAX_LENGTH, NEGATED, NOT_NEGATABLE, REFUSED, negate_pattern, option_message
from agentsproof.formats.agentevals.older import COMPOSITE, composite_grader
from agentsproof.formats.agentevals.rubric import OPERATORS, RUBRIC_KEYS, judge_notes, older_outcome, ranges_text
from agentsproof.formats.agentevals.rubric_prompt import rubric_prompt
from agentsproof.formats.agentevals.scripts import SCRIPT_KINDS, custom_assertion, judge_grader, script_assertion
from agentsproof.formats.agentevals.structured import STRUCTURED_TYPES, structured_grader
from agentsproof.formats.agentevals.trajectory import rewrite
from agentsproof.grading.assertions import AssertionsGrader
from agentsproof.grading.deterministic import DeterministicGrader
from agentsproof.grading.hooks import typed_assertion
from agentsproof.grading.llm_rubric import LLMRubricGrader
from agentsproof.grading.registry import entries
from agentsproof.grading.registry import entry as kind_of
from agentsproof.grading.script import ScriptGrader
from agentsproof.grading.skill_used import SkillUsedGrader
from agentsproof.model.graders import Checks

if TYPE_CHECKING:
    from agentsproof.formats.agentevals.parse import EvalTest

COMMON = {"type", "weight", "required", "min_score", "metric", "name", "id", "description", "negate"}
EXTRA: dict[str, set[str]] = {
    **{
        t: {"value"}
        for t in ("contains", "icontains", "not-contains", "not-icontains", "starts-with", "ends-with", "equals", "contains-any", "icontains-any")
        + ("contains-all", "icontains-all", "skill-used", "not-skill-used")
    },
    "regex": {"value", "flags"},
    "not-empty": {"value"},  # its value: a description (promptfoo's examples), not compared
    "min-length": {"value"},
    "max-length": {"value"},
    "llm-rubric": {"value", "threshold", "prompt", "max_steps", "temperature", "target", "config", "rubricPrompt"},
    "llm-grader": {"prompt", "value", "threshold", "max_steps", "temperature", "target"},
    "rubrics": {"criteria", "value"},
    "rubric": {"criteria", "value", "threshold"},
    "script": {"command", "cwd", "config", "provider"},
    "code-grader": {"command", "cwd", "config", "provider"},
    "skill-trigger": {"skill", "should_trigger"},
}


def _typed_graders() -> dict[str, type[BaseModel]]:
    """agentsproof's graders that EVAL.yaml takes as typed assertions with the fields eval.yaml
    gives them (``files``, ``tool-calls``): those whose registered ``to_agentevals`` hook is
    :func:`agentsproof.grading.hooks.typed_assertion`, so ``convert`` writes what is read here."""
    return {k.type.replace("_", "-"): k.config for k in entries() if k.to_agentevals is typed_assertion}


AGENT_GRADERS = _typed_graders()
EXTRA.update({name: {f.alias or n for n, f in config.model_fields.items()} - {"type", "weight"} for name, config in AGENT_GRADERS.items()})
EXTRA.update(CODE_TYPES | STRUCTURED_TYPES | BOUND_TYPES | JSON_TYPES)  # python / javascript (code.py); field-accuracy, similar (structured.py) …
EXTRA.update({t: EXTRA[t] | {"provider"} for t in JUDGED_TYPES})  # promptfoo: the judge's model (code.judge_model)
TEMPLATE_NAMES = ("answer", "output", "expected_output", "input", "criteria")


def resolve(kind: str) -> tuple[str, bool] | None:
    """``kind`` (``_`` read as ``-``) as (the assertion type it names, whether a ``not-`` prefix negates it),
    or None when agentsproof does not grade it: ``not-regex`` is (``regex``, True); ``not-contains``,
    a type of its own, is (``not-contains``, False)."""
    kind = kind.replace("_", "-")
    if kind in EXTRA:
        return kind, False
    if kind.startswith("not-") and kind[4:] in EXTRA:
        return kind[4:], True
    return None


def supported(kind: str) -> bool:
    """Whether the assertion type (or its ``not-`` form) is graded: its negation may still be refused, by name, as it is built."""
    return resolve(kind) is not None


class Builder:
    """The graders of one test, in order, with a label per grader (its metric or type)."""

    def __init__(self, src: str, path: Path, test: EvalTest, skill_name: str | None, at: str):
        self.src, self.path, self.test, self.skill_name, self.at = src, path, test, skill_name, at
        self.graders: list[Any] = []
        self.labels: list[str] = []
        self.zero = False
        """The assertion being built has weight 0 (its graders are reported, not scored)."""
        self.judge_model: str | None = None
        self.needs_agent: str | None = None
        """Where the first assertion that needs an agent trial is (skill-used)."""

    def err(self, where: str, message: str) -> InputError:
        """An InputError at ``where`` in this file, to raise."""
        return InputError(self.src, where, message)

    def add(self, grader: BaseModel, label: str, gate: float | None) -> None:
        """Append ``grader`` with its label; with a ``gate``, as its required form that fails the trial below that mark."""
        if self.judge_model and isinstance(grader, LLMRubricGrader):
            grader = grader.model_copy(update={"judge_model": self.judge_model})
        self.graders.append(shaped(grader, gate, self.zero))  # required / min_score / threshold; weight: 0
        self.labels.append(label)

    # ---------------------------------------------------------------- entries

    def build(self) -> None:
        """Turn the test's assertions into graders, in order (its plain criteria as one assertions grader), then
        its rubrics; the default grader when it has none."""
        # promptfoo's assert-set: its assertions, weighted; trajectory:* as tool-calls
        clean, marks = unmark(self.test.asserts)  # an agentv turn's assertions carry their turn (conversation.py)
        entries = [(w, rewrite(self.src, w, e)) for w, e in expand_sets(self.src, clean)]
        strings = [(w, e) for w, e in entries if isinstance(e, str)]
        placed = False
        for where, entry in entries:
            self.zero, self.judge_model = False, None
            if isinstance(entry, str):
                if not placed:
                    self._criteria([e for _, e in strings], strings[0][0], weight=float(len(strings)))
                    placed = True
                continue
            if not isinstance(entry, dict):
                raise self.err(where, "must be a criterion (a string) or an assertion mapping with a type")
            turn, start = mark_of(marks, where), len(self.graders)
            self._typed(where, entry)
            if turn is not None:
                scope(self.src, where, self.graders, start, turn)
        self.zero, self.judge_model = False, None
        self._rubrics()
        if self.graders and not any(g.weight for g in self.graders):
            raise self.err(self.at, "every assertion has weight 0 (reported, not scored): nothing is scored; give one a weight above 0")
        if not self.graders and (self.test.criteria or self.test.expected_output):  # else no grader: 1.0 (seed 000), lint warns
            self._judge_default(self.at, "has nothing to check; give assert, rubrics, criteria or expected_output")

    def _criteria(self, texts: list[str], where: str, weight: float, gate: float | None = None, label: str = "criteria") -> None:
        texts = [t.strip() for t in texts]
        if not all(texts):
            raise self.err(where, "is an empty criterion")
        if self.test.rubric_prompt is not None:  # agentv: default_test.options.rubric_prompt judges the criteria
            rubric = self._judge_prompt(
                "default_test.options.rubric_prompt", {"prompt": self.test.rubric_prompt}, {"rubrics": "\n".join(f"- {t}" for t in texts)}
            )
            self.add(LLMRubricGrader(type="llm_rubric", rubric=rubric, weight=min(weight, 1000.0)), label, gate)
            return
        self.add(AssertionsGrader(type="assertions", assertions=texts, weight=min(weight, 1000.0)), label, gate)

    def _judge_default(self, where: str, missing: str, weight: float = 1.0, gate: float | None = None, label: str = "criteria") -> None:
        """The judge scores the answer against the test's criteria and expected output (no assertion at all, or an
        agentv llm judge with no rubric of its own); InputError ``missing`` at ``where`` when the test has neither."""
        t = self.test
        strings = [e.strip() for _, e in t.asserts if isinstance(e, str) and e.strip()]  # agentv: plain assert strings are criteria
        criteria = t.criteria or ("\n".join(f"- {c}" for c in strings) if strings else None)
        if not criteria and not t.expected_output:
            raise self.err(where, missing)
        parts = ["Score how well the response meets the criteria below. 1.0 = fully, 0.5 = partly, 0 = not at all."]
        if criteria:
            parts.append("Criteria:\n" + criteria)
        if t.expected_output:
            parts.append("Expected output (a reference answer):\n" + t.expected_output)
        self.add(LLMRubricGrader(type="llm_rubric", rubric="\n\n".join(parts), weight=weight), label, gate)

    def _weight(self, where: str, entry: dict) -> float:
        w = entry.get("weight", 1.0)
        self.zero = w == 0 and not isinstance(w, bool)  # agentv's and promptfoo's weight 0: reported, not scored
        w = 1.0 if self.zero else w
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not 0 < w <= 1000:
            raise self.err(f"{where}.weight", "must be a number above 0 (at most 1000)")
        return float(w)

    def _gate(self, where: str, entry: dict, default_mark: float = 1.0) -> float | None:
        required = entry.get("required", False)
        if not isinstance(required, bool):
            raise self.err(f"{where}.required", "must be true or false")
        mark = default_mark
        for key in ("min_score", "threshold"):
            if key in entry:
                v = entry[key]
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
                    raise self.err(f"{where}.{key}", "must be a number from 0 to 1")
                mark = float(v)
                if key == "threshold":
                    required = True  # a per-assertion minimum: the assertion must reach it
        return mark if required else None

    def _value(self, where: str, entry: dict, *, many: bool = False) -> Any:
        v = entry.get("value")
        if many:
            if not isinstance(v, list) or not v or not all(isinstance(x, str) and x for x in v):
                raise self.err(f"{where}.value", "must be a non-empty list of strings")
            return v
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            v = str(v)
        if not isinstance(v, str) or not v:
            raise self.err(f"{where}.value", "must be a non-empty string")
        return v

    def _typed(self, where: str, entry: dict) -> None:
        kind = entry.get("type")
        if not isinstance(kind, str):
            raise self.err(f"{where}.type", "required field is missing")
        if kind == COMPOSITE:  # agentv's older composite with a program or judge aggregator (older.py)
            composite_grader(self, where, entry)
            return
        resolved = resolve(kind)
        custom = find_custom(self.path, kind) if resolved is None else None
        if custom is not None:  # agentv: .agentv/assertions/<type>.ts (formats/agentevals/custom.py)
            custom_assertion(self, where, entry, kind, custom, COMMON)
            return
        if resolved is None:
            reason = REFUSED.get(kind.replace("_", "-").removeprefix("not-"))
            if reason is not None:
                raise self.err(f"{where}.type", f"{entry['type']!r} is not supported: {reason}")
            raise self.err(f"{where}.type", f"{entry['type']!r} is not supported; use one of {', '.join(sorted(EXTRA))} (or not-<type>, or negate: true)")
        kind, prefixed = resolved
        allowed = COMMON | EXTRA[kind]
        extra = sorted(k for k in entry if k not in allowed)
        if extra and kind not in SCRIPT_KINDS:  # agentv: a script's other keys are its config
            raise self.err(f"{where}.{extra[0]}", option_message(extra[0], kind, allowed))
        judge_notes(self.src, where, entry)  # max_steps, temperature (formats/agentevals/rubric.py)
        metric = entry.get("metric") or entry.get("name") or entry.get("id")  # agentv's assertion id labels it too
        if metric is not None and (not isinstance(metric, str) or not metric.strip()):
            raise self.err(f"{where}.metric", "must be a non-empty string")
        negate = entry.get("negate", False)
        if not isinstance(negate, bool):
            raise self.err(f"{where}.negate", "must be true or false")
        if negate and prefixed:
            raise self.err(f"{where}.negate", f"{entry['type']!r} is already negated (not-); drop one of them")
        negate = negate or prefixed
        label = metric or (NEGATED.get(kind, f"not-{kind}") if negate else kind)
        weight = self._weight(where, entry)
        own = kind in CODE_TYPES or kind in STRUCTURED_TYPES or kind in BOUND_TYPES  # a threshold (and similar's provider) of their own, not a gate
        self.judge_model = None if own or kind in SCRIPT_KINDS else judge_model(self.src, where, entry)  # a script's provider is agentv's proxy
        gate = self._gate(where, {k: v for k, v in entry.items() if k != "threshold" or not own})
        if negate:
            at = f"{where}.type" if prefixed else f"{where}.negate"
            if kind in NOT_NEGATABLE:
                raise self.err(at, f"negating {kind!r} is not supported: {NOT_NEGATABLE[kind]}")
            if kind in AGENT_GRADERS:
                raise self.err(at, f"negating {kind!r} is not supported: the {kind.replace('-', '_')} grader's checks cannot be inverted as a whole")
            if kind in NEGATED:
                kind, negate = NEGATED[kind], False
        if kind in ("contains", "icontains", "not-contains", "not-icontains", "contains-all", "icontains-all"):
            values = self._value(where, entry, many=True) if kind.endswith("-all") else [self._value(where, entry)]
            if negate:  # not-contains-all: passes unless every value is there
                flag = "" if kind.startswith("contains") else "(?i)"
                pattern = flag + r"\A(?!" + "".join(r"(?=[\s\S]*?" + re.escape(v) + ")" for v in values) + ")"
                self.add(DeterministicGrader(type="deterministic", checks=Checks(regexMatch=[pattern]), weight=weight), label, gate)
                return
            key = "mustNotContain" if kind.startswith("not-") else "mustContain"
            checks = Checks.model_validate({key: values, "caseSensitive": not kind.removeprefix("not-").startswith("i")})
            self.add(DeterministicGrader(type="deterministic", checks=checks, weight=weight), label, gate)
        elif kind in ("contains-any", "icontains-any"):
            values = self._value(where, entry, many=True)
            pattern = ("(?i)" if kind.startswith("i") else "") + "(?:" + "|".join(re.escape(v) for v in values) + ")"
            pattern = negate_pattern(pattern) if negate else pattern
            self.add(DeterministicGrader(type="deterministic", checks=Checks(regexMatch=[pattern]), weight=weight), label, gate)
        elif kind in ("starts-with", "ends-with", "equals", "regex"):
            value = self._value(where, entry)
            pattern = {
                "starts-with": r"^\s*" + re.escape(value),
                "ends-with": re.escape(value) + r"\s*$",
                "equals": r"^\s*" + re.escape(value.strip()) + r"\s*$",
                "regex": value,
            }[kind]
            flags = entry.get("flags")
            if flags is not None:  # agentv / JavaScript regex flags
                if not isinstance(flags, str) or set(flags) - set("ims"):
                    raise self.err(f"{where}.flags", "must be letters of i (ignore case), m (multi-line), s (dot matches newline)")
                pattern = f"(?{''.join(sorted(set(flags)))})" + pattern if flags else pattern
            try:
                re.compile(pattern)
            except re.error as err:
                raise self.err(f"{where}.value", f"{value!r} is not a valid regex: {err}") from None
            pattern = negate_pattern(pattern) if negate else pattern
            self.add(DeterministicGrader(type="deterministic", checks=Checks(regexMatch=[pattern]), weight=weight), label, gate)
        elif kind in JSON_TYPES:  # is-json: a JSON Schema the answer must follow; is-sql: its dialect and allowed names
            self.add(ScriptGrader(type="script", run=syntax_check(self, where, entry, kind, negate), stdin="answer", weight=weight), label, gate)
        elif kind == "not-empty":  # promptfoo's not-empty; negated: the answer is empty (or only white space)
            pattern = r"\A\s*\Z" if negate else r"\S"
            self.add(DeterministicGrader(type="deterministic", checks=Checks(regexMatch=[pattern]), weight=weight), label, gate)
        elif kind in ("min-length", "max-length"):
            self._length(where, entry, kind, negate, weight, gate, label)
        elif kind == "llm-rubric" and "prompt" in entry:  # agentv: a judge prompt file, as llm-grader
            self.add(judge_grader(self, where, entry, weight), label, self._gate(where, entry, 0.5))
        elif kind in ("llm-rubric", "llm-grader") and not {"value", "prompt"} & entry.keys():  # agentv: graded against the test's criteria
            no_rubric = "required field is missing: the judge has no rubric and the test gives no criteria or expected_output"
            self._judge_default(f"{where}.{'value' if kind == 'llm-rubric' else 'prompt'}", no_rubric, weight, self._gate(where, entry, 0.5), label)
        elif kind in ("llm-rubric", "rubrics", "rubric"):
            self._rubric_entry(where, entry, kind, weight, gate, label)
        elif kind == "llm-grader":
            self.add(judge_grader(self, where, entry, weight), label, self._gate(where, entry, 0.5))
        elif kind in AGENT_GRADERS:
            self._agent_grader(where, entry, kind, weight, gate, label)
        elif kind in CODE_TYPES:  # its threshold is the score a returned number passes from, not a gate
            self.add(code_grader(self.src, self.path, self.test, where, entry, kind, weight, negate), label, gate)
        elif kind in STRUCTURED_TYPES:
            self.add(structured_grader(self.src, where, self.test, entry, kind, weight, negate), label, gate)
        elif kind in BOUND_TYPES:  # promptfoo: the trial's cost (USD) / duration (ms) at most threshold
            self.add(bound_grader(self, where, entry, kind, weight, negate), label, gate)
        elif kind in SCRIPT_KINDS:
            script_assertion(self, where, entry, kind, weight, gate, label, COMMON)
        else:  # skill-used, not-skill-used, skill-trigger
            self._skill(where, entry, kind, weight, gate, label, negate)

    def _length(self, where: str, entry: dict, kind: str, negate: bool, weight: float, gate: float | None, label: str) -> None:
        """promptfoo's ``min-length`` / ``max-length``: the answer's length in characters; negated,
        ``min-length`` N is ``max-length`` N-1 and ``max-length`` N is ``min-length`` N+1."""
        n = entry.get("value")
        if isinstance(n, str) and n.strip().isdigit():
            n = int(n)
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_LENGTH:
            raise self.err(f"{where}.value", f"must be a whole number of characters from 0 to {MAX_LENGTH}")
        low, high = (n, -1) if kind == "min-length" else (0, n)
        if negate:
            if kind == "min-length" and n == 0:
                raise self.err(f"{where}.value", "not-min-length 0 can never pass (every answer is at least 0 characters)")
            low, high = (0, n - 1) if kind == "min-length" else (n + 1, -1)
        run = [sys.executable, "-c", LENGTH, str(low), str(high)]
        self.add(ScriptGrader(type="script", run=run, stdin="answer", weight=weight), label, gate)

    def _rubric_entry(self, where: str, entry: dict, kind: str, weight: float, gate: float | None, label: str) -> None:
        key = "criteria" if "criteria" in entry else "value"
        if "criteria" in entry and "value" in entry:
            raise self.err(f"{where}.criteria", "is the same as 'value'; keep one")
        v = entry.get(key)
        if isinstance(v, str) and v.strip():  # promptfoo's rubricPrompt: the judge's template (rubric_prompt.py)
            rubric = rubric_prompt(self, where, entry, v) if "rubricPrompt" in entry else v
            self.add(LLMRubricGrader(type="llm_rubric", rubric=rubric, weight=weight), label, gate)
            return
        if not isinstance(v, list) or not v:
            raise self.err(f"{where}.{key}", "must be a rubric text or a list of outcomes")
        self._outcomes(f"{where}.{key}", v, label, weight)

    def _outcomes(self, where: str, items: list[Any], label: str, weight: float = 1.0) -> None:
        """Rubric outcomes: strings together in one grader; objects one grader each."""
        strings = [(i, s) for i, s in enumerate(items) if isinstance(s, str)]
        if strings:
            self._criteria([s for _, s in strings], f"{where}[{strings[0][0]}]", weight=weight * len(strings), label=label)
        for i, item in enumerate(items):
            if isinstance(item, str):
                continue
            at = f"{where}[{i}]"
            if not isinstance(item, dict):
                raise self.err(at, "must be a string or a mapping with an outcome")
            extra = sorted(k for k in item if k not in RUBRIC_KEYS)
            if extra:
                raise self.err(f"{at}.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(RUBRIC_KEYS))}")
            item = older_outcome(self.src, at, item)
            outcome = item.get("outcome")
            if not isinstance(outcome, str) or not outcome.strip():
                raise self.err(f"{at}.outcome", "required field is missing (or an id with score_ranges)")
            operator = item.get("operator")
            if operator is not None:
                if operator not in OPERATORS:
                    raise self.err(f"{at}.operator", f"{operator!r}: expected one of {', '.join(OPERATORS)}")
                if item.get("score_ranges") is not None:
                    raise self.err(f"{at}.operator", "applies to a checklist outcome, not to score_ranges")
                outcome = OPERATORS[operator].format(outcome=outcome.strip())
            raw_id = item.get("id")
            name = raw_id if isinstance(raw_id, str) else label
            w = self._weight(at, item) * weight
            ranges = item.get("score_ranges")
            if ranges is not None:
                self.add(LLMRubricGrader(type="llm_rubric", rubric=ranges_text(self.src, at, outcome, ranges), weight=w), name, self._gate(at, item, 0.7))
            else:
                self._criteria([outcome], at, w, self._gate(at, item), label=name)

    def _rubrics(self) -> None:
        """The reference's per-test ``rubrics``."""
        if self.test.rubrics:
            self._outcomes(self.test.rubrics[0][0].rsplit("[", 1)[0], [r for _, r in self.test.rubrics], "rubrics")

    def _judge_prompt(self, where: str, entry: dict, extra: dict[str, str] | None = None) -> str:
        from agentsproof.core.inputs import MAX_EVAL_FILE_BYTES, read_text
        from agentsproof.formats.agentevals.parse import attached

        if ("prompt" in entry) == ("value" in entry):
            raise self.err(f"{where}.prompt", "give the judge prompt: a markdown file (or its text)")
        text = entry.get("prompt", entry.get("value"))
        if not isinstance(text, str) or not text.strip():
            raise self.err(f"{where}.prompt", "must be a file path or prompt text")
        text = text.strip().removeprefix("file://") if text.strip().startswith("file://") else text
        if text.strip().endswith((".md", ".txt")) and "\n" not in text.strip():
            text = read_text(
                attached(self.src, f"{where}.prompt", text.strip(), self.path, judge_prompt=True),
                source=self.src,
                field=f"{where}.prompt",
                max_bytes=MAX_EVAL_FILE_BYTES,
                what="judge prompt",
            )
        values = {
            "answer": "(the assistant response, shown below)",
            "output": "(the assistant response, shown below)",
            "input": self.test.prompt,
            "expected_output": self.test.expected_output or "(none given)",
            "criteria": self.test.criteria or "(none given)",
        }
        # agentv's other names for the same values (its examples' prompts use both)
        values |= {"input_text": values["input"], "question": values["input"], "output_text": values["output"]}
        values |= {"candidate_answer": values["output"], "expected_output_text": values["expected_output"], "reference_answer": values["expected_output"]}
        values |= {"expected_outcome": values["criteria"], "outcome": values["criteria"]}  # agentv's older dialect
        values |= extra or {}

        def fill(m: re.Match[str]) -> str:
            if m.group(1) not in values:
                raise self.err(f"{where}.prompt", f"uses {{{{{m.group(1)}}}}}; a judge prompt may use {', '.join('{{' + n + '}}' for n in TEMPLATE_NAMES)}")
            text: str = values[m.group(1)]
            return text

        return re.sub(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", fill, text)

    def _skill(self, where: str, entry: dict, kind: str, weight: float, gate: float | None, label: str, negate: bool = False) -> None:
        if kind == "skill-trigger":
            name, expected = entry.get("skill"), entry.get("should_trigger", True)
            if not isinstance(expected, bool):
                raise self.err(f"{where}.should_trigger", "must be true or false")
            expected = expected != negate
        else:
            name, expected = self._value(where, entry), kind == "skill-used"
        if isinstance(name, list) and name and all(isinstance(n, str) and n.strip() for n in name):  # agentv: every one of them
            names = [n.strip() for n in name]
        elif isinstance(name, str) and name.strip():
            names = [name.strip()]
        else:
            raise self.err(f"{where}.{'skill' if kind == 'skill-trigger' else 'value'}", "must name the skill (or list skill names)")
        if names != [self.skill_name]:
            # agentv's meaning: the named skills among those the agent was seen loading (a
            # model alone loads none), whether or not a SKILL.md of that name is here
            self.add(SkillUsedGrader(type="skill_used", expected=expected, weight=weight, skills=names), label, gate)
            return
        self.needs_agent = self.needs_agent or f"{where}.type"
        self.add(SkillUsedGrader(type="skill_used", expected=expected, weight=weight), label, gate)

    def _agent_grader(self, where: str, entry: dict, kind: str, weight: float, gate: float | None, label: str) -> None:
        """A typed assertion (``files``, ``tool-calls``): validated by the eval.yaml grader models themselves."""
        from pydantic import ValidationError

        from agentsproof.core.validation import format_validation_error

        fields = {k: v for k, v in entry.items() if k not in COMMON}
        try:
            grader = AGENT_GRADERS[kind].model_validate({"type": kind.replace("-", "_"), **fields, "weight": weight})
        except ValidationError as exc:
            field, msg = format_validation_error(exc)
            raise self.err(f"{where}.{field}", msg) from None
        if kind_of(kind.replace("-", "_")).agent_only:  # e.g. files: it reads the workspace
            self.needs_agent = self.needs_agent or f"{where}.type"
        self.add(grader, label, gate)


def build_graders(src: str, path: Path, test: EvalTest, skill_name: str | None, at: str) -> Builder:
    """One test's graders and labels, built from its assertions; InputError naming the field of the first bad one."""
    b = Builder(src, path, test, skill_name, at)
    b.build()
    return b
