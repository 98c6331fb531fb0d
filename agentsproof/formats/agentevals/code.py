"""promptfoo's ``python`` and ``javascript`` assertions, run as a script grader.

::

    assert:
      - type: python
        value: "'bonjour' in output.lower()"        # one line: an expression
      - type: javascript
        value: |                                     # several lines: a function body
          if (output.length > 200) return {pass: false, score: 0, reason: 'too long'};
          return output.includes(context.vars.expected);
      - type: python
        value: file://checks/tone.py:score_tone      # a file (beside the config): its function
        threshold: 0.7                               # a number returned passes from here

As in promptfoo, the code gets ``output`` (the answer, text) and ``context`` (``vars``,
``prompt``, ``test``: its ``vars`` and ``description``; ``config``: the assertion's own); it returns a bool (pass), a number (a
score: passes above 0, or from ``threshold`` when given) or ``{pass, score, reason}``. A file
``file://x.py`` calls ``get_assert`` (python) or what the module exports (javascript: the
function, ``default``), or the function ``:name`` after the path. The code runs as a
:class:`~agentsproof.grading.script.ScriptGrader` runs a command (its own process group, in
the trial's workspace or a temporary folder, under the grader's timeout), through
``python3`` or ``node``; what it raises fails the assertion with the error as the reason, as
promptfoo's does. The check scores 1 when it passes and 0 when not (the returned score and
reason are its evidence); ``not-python`` / ``negate: true`` inverts the pass.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import InputError
from agentsproof.grading.script import ScriptGrader

if TYPE_CHECKING:
    from agentsproof.formats.agentevals.parse import EvalTest

CODE_TYPES: dict[str, set[str]] = {"python": {"value", "threshold", "config"}, "javascript": {"value", "threshold", "config"}}
"""The assertion types of this module and the keys each takes (besides the common ones)."""

_RESULT_PY = r"""
def _verdict(result, threshold, negate):
    reason = ""
    if isinstance(result, bool):
        passed, score = result, float(result)
    elif isinstance(result, (int, float)):
        score = float(result)
        passed = score >= threshold if threshold is not None else score > 0
    elif isinstance(result, dict):
        score = result.get("score")
        passed = result.get("pass")
        if passed is None:
            passed = (float(score) >= threshold if threshold is not None else float(score) > 0) if score is not None else False
        score = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else float(bool(passed))
        reason = str(result.get("reason") or "")
    else:
        passed, score, reason = False, 0.0, f"the assertion returned {type(result).__name__}, not a bool, a number or {{pass, score, reason}}"
    if negate:
        passed, score = not passed, 1.0 - min(max(score, 0.0), 1.0)
    return bool(passed), score, reason
"""

PYTHON_RUNNER = (
    "import json, sys, math, re, importlib.util\n"
    + _RESULT_PY
    + r"""
mode, code, fn, ctx, threshold, negate = sys.argv[1:7]
threshold = None if threshold == "-" else float(threshold)
fn = None if fn == "-" else fn
payload = json.load(sys.stdin)
output, context = payload.get("output", ""), json.loads(ctx)
if context.pop("_output_json", False):  # a transform returned a value: the assertion sees it, as in promptfoo
    try:
        output = json.loads(output)
    except ValueError:
        pass
try:
    if mode == "file":
        spec = importlib.util.spec_from_file_location("promptfoo_assertion", code)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        result = getattr(module, fn or "get_assert")(output, context)
    elif "\n" in code.strip():
        body = "\n".join("    " + line for line in code.strip("\n").splitlines())
        space = {"json": json, "math": math, "re": re}
        exec("def _assertion(output, context):\n" + body, space)
        result = space["_assertion"](output, context)
    else:
        result = eval(code.strip(), {"json": json, "math": math, "re": re, "output": output, "context": context})
    passed, score, reason = _verdict(result, threshold, negate == "1")
except Exception as err:
    passed, score, reason = negate == "1", float(negate == "1"), f"the assertion raised {type(err).__name__}: {err}"
print(json.dumps({"score": 1.0 if passed else 0.0, "details": (reason + " " if reason else "") + f"(returned score {score:g})"}))
"""
)

NODE_RUNNER = r"""
const [mode, code, fnText, ctx, thresholdText, negate] = process.argv.slice(1);
const threshold = thresholdText === "-" ? null : Number(thresholdText);
const fn = fnText === "-" ? "" : fnText;
function verdict(result) {
  let passed, score, reason = "";
  if (typeof result === "boolean") { passed = result; score = result ? 1 : 0; }
  else if (typeof result === "number") { score = result; passed = threshold !== null ? score >= threshold : score > 0; }
  else if (result && typeof result === "object") {
    score = typeof result.score === "number" ? result.score : null;
    passed = result.pass !== undefined ? Boolean(result.pass) : score !== null && (threshold !== null ? score >= threshold : score > 0);
    if (score === null) score = passed ? 1 : 0;
    reason = result.reason ? String(result.reason) : "";
  } else { passed = false; score = 0; reason = `the assertion returned ${typeof result}, not a boolean, a number or {pass, score, reason}`; }
  if (negate === "1") { passed = !passed; score = 1 - Math.min(Math.max(score, 0), 1); }
  return [passed, score, reason];
}
function say([passed, score, reason]) {
  console.log(JSON.stringify({score: passed ? 1 : 0, details: (reason ? reason + " " : "") + `(returned score ${score})`}));
}
let input = "";
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", async () => {
  let output = JSON.parse(input).output ?? "";
  const context = JSON.parse(ctx);
  if (context._output_json) { delete context._output_json; try { output = JSON.parse(output); } catch (e) { /* text stays text */ } }
  try {
    let f;
    if (mode === "file") {
      const mod = require(code);
      f = fn ? mod[fn] : (typeof mod === "function" ? mod : mod.default);
      if (typeof f !== "function") throw new Error(`${code} exports no function${fn ? " " + fn : ""}`);
    } else {
      const body = code.trim().includes("\n") ? code : `return (${code.trim()});`;
      f = new Function("output", "context", body);
    }
    say(verdict(await f(output, context)));
  } catch (err) {
    say([negate === "1", negate === "1" ? 1 : 0, `the assertion raised ${err && err.name ? err.name : "an error"}: ${err && err.message ? err.message : err}`]);
  }
});
"""


def code_grader(src: str, path: Path, t: EvalTest, where: str, entry: dict[str, Any], kind: str, weight: float, negate: bool) -> ScriptGrader:
    """The script grader that runs one ``python`` / ``javascript`` assertion; InputError
    naming the field for a value that is neither code nor a ``file://`` path beside the file,
    a ``threshold`` that is not a number, or ``node`` missing for javascript."""
    from agentsproof.formats.agentevals.parse import attached

    value = entry.get("value")
    if not isinstance(value, str) or not value.strip():
        raise InputError(src, f"{where}.value", f"must be {kind} code (an expression, or a function body) or file://PATH")
    threshold = entry.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        raise InputError(src, f"{where}.threshold", "must be a number (the score a returned number passes from)")
    mode, code, fn = "inline", value, "-"
    if value.strip().startswith("file://"):
        ref = value.strip().removeprefix("file://")
        suffixes = (".py",) if kind == "python" else (".js", ".cjs", ".mjs")
        head, _, tail = ref.rpartition(":")
        if head.endswith(suffixes) and tail.isidentifier():
            ref, fn = head, tail
        if not ref.endswith(suffixes):
            raise InputError(src, f"{where}.value", f"{ref!r}: a {kind} assertion file ends in {' or '.join(suffixes)}")
        mode, code = "file", str(attached(src, f"{where}.value", ref, path))
    if kind == "python":
        run = [sys.executable, "-c", PYTHON_RUNNER]
    else:
        node = shutil.which("node")
        if node is None:
            raise InputError(
                src, f"{where}.type", "a javascript assertion runs with node, which is not on PATH: install Node.js, or write it as a python assertion"
            )
        run = [node, "-e", NODE_RUNNER]
    config = entry.get("config", {})
    if not isinstance(config, dict):
        raise InputError(src, f"{where}.config", "must be a mapping (the assertion's context.config)")
    context: dict[str, Any] = {"vars": t.vars, "prompt": t.prompt, "test": {"vars": t.vars, "description": t.id}, "config": config}
    if t.output_json:
        context["_output_json"] = True
    args = [mode, code, fn, json.dumps(context, default=str), "-" if threshold is None else repr(float(threshold)), "1" if negate else "0"]
    return ScriptGrader(type="script", run=[*run, *args], stdin="json", weight=weight)


JUDGED_TYPES = ("llm-rubric", "llm-grader", "rubric")
"""The assertion types a promptfoo ``provider`` (the judge's model) applies to."""


def judge_model(src: str, where: str, entry: dict[str, Any]) -> str | None:
    """promptfoo's assertion ``provider`` (``openai:gpt-4o-mini``, or ``{id: …}``) as this
    grader's judge model, run through the run's judge provider; a provider that names a
    program, a script or an endpoint, or gives a ``config``, is refused by name."""
    from agentsproof.formats.promptfoo_providers import not_model

    given = entry.get("provider")
    if given is None:
        return None
    at = f"{where}.provider"
    if isinstance(given, dict):
        extra = sorted(str(k) for k in given if k not in ("id", "label"))
        if extra:
            raise InputError(src, f"{at}.{extra[0]}", "a judge provider's settings are not applied: only its model (id) is used")
        given = given.get("id")
    if not isinstance(given, str) or not given.strip():
        raise InputError(src, at, "must be a provider id (PROVIDER:MODEL) or {id: …}")
    why = not_model(given)
    if why is not None:
        raise InputError(src, at, f"{given!r} is {why}, not a model: a judge here is a model of the run's judge provider")
    return given.rsplit(":", 1)[1].strip()
