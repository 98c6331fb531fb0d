r"""What the EVAL.yaml assertions that agentsproof checks with a script or a negated regex are made of.

Negation (agentv's ``negate: true``, promptfoo's ``not-`` prefix) passes exactly when the
assertion fails: :data:`NEGATED` pairs the types that are each other's negation, a regex
check becomes :func:`negate_pattern`'s negative lookahead, ``is-json`` :data:`IS_NOT_JSON`;
:data:`NOT_NEGATABLE` says why the others cannot be inverted, :data:`REFUSED` why an
assertion type is out of scope. Used by :mod:`agentsproof.formats.agentevals.asserts`.
"""

from __future__ import annotations

import re

IS_JSON = (
    "import json, sys\ntext = sys.stdin.read()\ntry:\n    json.loads(text)\nexcept ValueError as err:\n"
    "    print(f'not valid JSON: {err}', file=sys.stderr)\n    sys.exit(1)\n"
)
IS_NOT_JSON = (
    "import json, sys\ntext = sys.stdin.read()\ntry:\n    json.loads(text)\nexcept ValueError:\n    sys.exit(0)\n"
    "print('the answer is valid JSON (the assertion is negated)', file=sys.stderr)\nsys.exit(1)\n"
)
LENGTH = (
    "import sys\nlow, high = int(sys.argv[1]), int(sys.argv[2])\nn = len(sys.stdin.read())\n"
    "if n < low or (high >= 0 and n > high):\n"
    "    print(f'the answer is {n} characters; expected ' + (f'at least {low}' if high < 0 else f'at most {high}'), file=sys.stderr)\n"
    "    sys.exit(1)\nprint(f'{n} characters')\n"
)
MAX_LENGTH = 10**9
NEGATED = {"contains": "not-contains", "icontains": "not-icontains", "skill-used": "not-skill-used"}
NEGATED.update({v: k for k, v in NEGATED.items()})
NOT_NEGATABLE = {
    "llm-rubric": "a judge's verdict cannot be inverted by the llm_rubric grader",
    "llm-grader": "a judge's verdict cannot be inverted by the llm_rubric grader",
    "rubrics": "a judge's verdict cannot be inverted by the assertions grader",
    "rubric": "a judge's verdict cannot be inverted by the llm_rubric grader",
    "script": "a script's score cannot be inverted by the script grader; invert its exit status in the script",
    "code-grader": "a script's score cannot be inverted by the script grader; invert its exit status in the script",
}
_JUDGED = "promptfoo's own judge prompt for it is not reproduced; write what it checks as an llm-rubric"
_DISTANCE = "text-distance scores are not implemented; use equals, contains or an llm-rubric"
_TRAJECTORY = "a judge of whether the agent reached its goal from its steps is not run; write the goal as an llm-rubric (the judge reads the answer and the files the agent wrote)"
REFUSED = {
    "similar:dot": "only cosine similarity is computed; write similar (or similar:cosine) with a cosine threshold",
    "similar:euclidean": "only cosine similarity is computed; write similar (or similar:cosine) with a cosine threshold",
    "perplexity": "needs the answer's token log-probabilities, which the trials do not record",
    "perplexity-score": "needs the answer's token log-probabilities, which the trials do not record",
    "levenshtein": _DISTANCE,
    "rouge-n": _DISTANCE,
    "bleu": _DISTANCE,
    "gleu": _DISTANCE,
    "meteor": _DISTANCE,
    "contains-json": "finding a JSON value inside free text is not implemented; use is-json on a JSON-only answer, or a python assertion",
    "is-xml": "XML is not parsed; use a python assertion",
    "contains-xml": "XML is not parsed; use a python assertion",
    "is-valid-openai-tools-call": "chat trials offer no tools; check an agent's tool calls with tool-calls",
    "is-valid-openai-function-call": "chat trials offer no tools; check an agent's tool calls with tool-calls",
    "factuality": _JUDGED,
    "model-graded-closedqa": _JUDGED,
    "answer-relevance": _JUDGED,
    "context-faithfulness": _JUDGED,
    "context-recall": _JUDGED,
    "context-relevance": _JUDGED,
    "g-eval": _JUDGED,
    "search-rubric": _JUDGED,
    "pi": _JUDGED,
    "select-best": "compares the answers of several prompts or providers, which are separate cases here",
    "max-score": "compares the answers of several prompts or providers, which are separate cases here",
    "moderation": "needs a moderation model, which agentsproof does not call; use an llm-rubric",
    "classifier": "needs a HuggingFace classifier, which agentsproof does not call; use an llm-rubric",
    "webhook": "grading by an outside HTTP endpoint is not done; call it from a script (code-grader) assertion",
    "trajectory:goal-success": _TRAJECTORY,
    "agent-rubric": "an agent judge that inspects the workspace is not run (agentv refuses to run it on a plain model too); "
    "an llm-rubric judges the answer and the files the agent wrote",
    "composite": "agentv's aggregator is not implemented; list the assertions (weight, required: true)",
}
"""Assertion types refused as out of scope, with the reason the refusal gives."""


def negate_pattern(pattern: str) -> str:
    """A regex that matches (at the start) exactly when ``pattern`` matches nowhere in the text;
    ``pattern``'s leading global flags (``(?i)``) stay in front, where Python requires them."""
    flags = ""
    while m := re.match(r"\(\?[aiLmsux]+\)", pattern):
        flags, pattern = flags + m.group(0), pattern[m.end() :]
    return flags + r"\A(?![\s\S]*?(?:" + pattern + "))"


SCRIPT_TARGETS = {
    "is-json": "the answer is valid JSON",
    "not-is-json": "the answer is not valid JSON",
    **{k: "the answer's length in characters" for k in ("min-length", "max-length", "not-min-length", "not-max-length")},
}
"""What the report names as the target of an assertion checked by one of the scripts above (not the script's code)."""


_JUDGE = "the judge is --judge-model / --model (or the configured provider) for every grader"
REFUSED_OPTIONS = {
    "provider": _JUDGE,
    "target": _JUDGE,
    "temperature": "a grader's own judge temperature is not set; " + _JUDGE,
    "max_steps": "agentv's agentic judge (max_steps) is not run; write the check as an llm-grader prompt",
    "rubricPrompt": "a grader's own judge prompt template is not used; write it as an llm-grader prompt",
    "transform": "the answer is graded as it is; transform it in a python assertion or a script",
    "options": "a grader's options (transform, provider …) are not applied",
    "config": "only a script (and a python / javascript assertion) is given a config",
    "cwd": "only a script's command is read from another folder",
    "fields": "comparing the fields of a structured answer is not implemented; use a python assertion or a script",
    "expected_tools": "only a script is given the expected tools (in its config); check tool calls with tool-calls in an agent trial",
    "algorithm": "comparing the fields of a structured answer is not implemented; use a python assertion or a script",
}
"""Assertion options agentv and promptfoo give that agentsproof does not honour: refused with the reason, never dropped."""


def option_message(key: str, kind: str, allowed: set[str]) -> str:
    """The one line for an assertion option agentsproof does not take: its reason, or the keys it does take."""
    if key in REFUSED_OPTIONS:
        return f"{key!r} on {kind!r} is not supported: {REFUSED_OPTIONS[key]}"
    return f"unknown key for {kind!r}; expected one of {', '.join(sorted(allowed))}"
