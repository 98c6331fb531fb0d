"""promptfoo's ``transform`` and ``transformVars``: code run on a test's output, or on its vars.

::

    defaultTest:
      options:
        transformVars: '{ ...vars, upper: vars.topic.toUpperCase() }'   # before the prompt is rendered
    tests:
      - options:
          transform: JSON.parse(output)                                 # before the assertions
      - options:
          transform: file://transforms.py:get_transform

As promptfoo runs them: inline code is JavaScript (an expression, or a function body that
returns), run with ``node`` on ``output`` (``vars``) and ``context``; ``file://x.js`` calls what
the module exports (``file://x.js:fn`` that function); ``file://x.py`` calls ``get_transform``
(``file://x.py:fn`` that function) with ``(output, context)`` (``(vars, context)``).

``transformVars`` runs once per test when the config loads; ``transform`` runs on every
trial's answer before it is graded (the runner: ``EvalItem.transform``). Both run confined
(:mod:`agentsproof.core.confine`): they read the project, write nothing. A transform that
returns something other than text gives its JSON; the test's ``python`` / ``javascript``
assertions then see the parsed value, as in promptfoo.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError

VARS_TIMEOUT_S = 60.0

NODE_RUNNER = r"""
const [mode, code, fn, what, ctxArg] = process.argv.slice(1);
let input = "";
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", async () => {
  const data = JSON.parse(input);
  if (ctxArg) data.context = JSON.parse(ctxArg);
  const first = what === "vars" ? data.vars : data.output;
  try {
    let f;
    if (mode === "file") {
      const mod = require(code);
      f = fn !== "-" ? mod[fn] : (typeof mod === "function" ? mod : mod.default);
      if (typeof f !== "function") throw new Error(`${code} exports no function${fn !== "-" ? " " + fn : ""}`);
    } else {
      const body = code.trim().includes("\n") || /^return\b/.test(code.trim()) ? code : `return (${code.trim()});`;
      f = new Function(what === "vars" ? "vars" : "output", "context", body);
    }
    const out = await f(first, data.context);
    process.stdout.write(JSON.stringify({result: out === undefined ? null : out}));
  } catch (err) {
    process.stderr.write(`the transform raised ${err && err.name ? err.name : "an error"}: ${err && err.message ? err.message : err}`);
    process.exit(1);
  }
});
"""

PYTHON_RUNNER = r"""
import asyncio, importlib.util, inspect, json, sys
mode, code, fn, what = sys.argv[1:5]
data = json.loads(sys.stdin.read())
if len(sys.argv) > 5:
    data["context"] = json.loads(sys.argv[5])
try:
    spec = importlib.util.spec_from_file_location("promptfoo_transform", code)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    f = getattr(mod, "get_transform" if fn == "-" else fn)
    out = f(data["vars"] if what == "vars" else data["output"], data["context"])
    if inspect.isawaitable(out):
        out = asyncio.run(out)
except Exception as err:
    print(f"the transform raised {type(err).__name__}: {err}", file=sys.stderr)
    sys.exit(1)
print(json.dumps({"result": out}, default=str))
"""


def transform_argv(src: str, where: str, code: Any, path: Path) -> list[str]:
    """The program that runs one ``transform`` (``what`` is appended: ``output`` or ``vars``); InputError naming the field."""
    from agentsproof.formats.agentevals.parse import attached

    if not isinstance(code, str) or not code.strip():
        raise InputError(src, where, "must be JavaScript code (an expression, or a function body) or file://PATH")
    mode, body, fn = "inline", code, "-"
    kind = "javascript"
    if code.strip().startswith("file://"):
        ref = code.strip().removeprefix("file://")
        head, _, tail = ref.rpartition(":")
        if head.endswith((".py", ".js", ".cjs", ".mjs")) and tail.isidentifier():
            ref, fn = head, tail
        if not ref.endswith((".py", ".js", ".cjs", ".mjs")):
            raise InputError(src, where, f"{ref!r}: a transform file ends in .py or .js")
        kind = "python" if ref.endswith(".py") else "javascript"
        mode, body = "file", str(attached(src, where, ref, path))
    if kind == "python":
        return [sys.executable, "-c", PYTHON_RUNNER, mode, body, fn]
    node = shutil.which("node")
    if node is None:
        raise InputError(src, where, "a JavaScript transform runs with node, which is not on PATH: install Node.js, or give file://x.py")
    return [node, "-e", NODE_RUNNER, mode, body, fn]


def transform_vars(src: str, where: str, code: Any, variables: dict[str, Any], path: Path) -> dict[str, Any]:
    """promptfoo's ``transformVars``: the test's vars as the code returns them (merged over the given ones), run confined now."""
    from agentsproof.core.confine import confined_argv, project_of
    from agentsproof.core.errors import TargetError

    argv = [*transform_argv(src, where, code, path), "vars"]
    folder = path.resolve().parent
    context = {"prompt": {}, "uuid": "", "testCaseId": ""}
    try:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="agentsproof-transform-") as tmp:
            wrapped = confined_argv(argv, cwd=Path(tmp), writable=[Path(tmp)], readable=[folder, project_of(folder)])
            done = subprocess.run(
                wrapped,
                input=json.dumps({"vars": variables, "context": context}, default=str),
                capture_output=True,
                text=True,
                timeout=VARS_TIMEOUT_S,
                cwd=tmp,
            )
    except TargetError as err:
        raise InputError(src, where, str(err)) from None
    except (OSError, subprocess.TimeoutExpired) as err:
        raise InputError(src, where, f"did not run: {err}") from None
    if done.returncode != 0:
        raise InputError(src, where, (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1][:300])
    try:
        result = json.loads(done.stdout)["result"]
    except (ValueError, KeyError, TypeError):
        raise InputError(src, where, "did not print its result") from None
    if not isinstance(result, dict):
        raise InputError(src, where, f"returned {type(result).__name__}, not the vars (an object)")
    return {**variables, **result}
