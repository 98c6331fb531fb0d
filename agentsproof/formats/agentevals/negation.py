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
REFUSED = {
    "is-sql": "checking SQL needs a parser for the query's dialect; check it with a script (code-grader) assertion",
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
