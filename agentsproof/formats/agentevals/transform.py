"""agentv's output transform: ``default_test.options.transform`` (and a test's ``options.transform``).

::

    default_test:
      options:
        transform: file://../scripts/transforms/xlsx-to-csv.ts   # or file://x.ts:fnName, or inline JS

As agentv runs it (``packages/core/src/evaluation/output-transform.ts``): a ``file://`` module
(.ts .mts .cts .js .mjs .cjs, found as agentv finds files) is imported and its default export
(or the named function, ``file://x.ts:fn``) is called with ``(output, context)``; inline code is a
JavaScript function body of ``output`` and ``context`` (one line: an expression). ``context``
holds the test's ``vars``, ``prompt.raw`` and ``metadata``. A function that throws, or returns
nothing, fails the transform; a value that is not text is graded as its JSON (2-space indented).
Every grader of the test then sees the transformed answer. Here the program runs confined
(:mod:`agentsproof.core.confine`, through ``EvalItem.transform``) with bun — agentv's runtime —
or node for JavaScript when there is no bun; a transform that fails errors its trial with the
reason, never fails it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError

SUFFIXES = (".ts", ".mts", ".cts", ".js", ".mjs", ".cjs")

RUNNER = r"""
const [mode, code, fn, ctxArg] = process.argv.slice(process.argv.length - 4);
let input = "";
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", async () => {
  const output = JSON.parse(input).output;
  const context = JSON.parse(ctxArg);
  const label = mode === "file" ? "[file transform]" : "[inline transform]";
  try {
    let f;
    if (mode === "file") {
      const mod = await import(require("node:url").pathToFileURL(code).href);
      f = fn !== "-" ? mod[fn] : (mod.default ?? mod);
      if (typeof f !== "function") throw new Error(fn !== "-" ? `Transform must export function "${fn}"` : "Transform must export a function or default function");
    } else {
      f = new Function("output", "context", code.includes("\n") ? code : `return ${code}`);
    }
    const value = await Promise.resolve(f(output, context));
    if (value === undefined || value === null) throw new Error("Transform function did not return a value");
    process.stdout.write(JSON.stringify({result: typeof value === "string" ? value : JSON.stringify(value, null, 2)}));
  } catch (err) {
    process.stderr.write(`Transform failed (${label}): ${err && err.message ? err.message : err}`);
    process.exit(1);
  }
});
"""
"""Reads ``{"output": answer}`` on stdin, prints ``{"result": text}`` (core/confine.transform_answer's contract)."""


def transform_argv(src: str, where: str, spec: Any, path: Path, context: dict[str, Any]) -> tuple[str, ...]:
    """The confined program that runs one agentv transform on an answer; InputError naming the field."""
    from agentsproof.core.bun import INSTALL_HINT, find_bun
    from agentsproof.formats.agentevals.parse import attached

    if not isinstance(spec, str) or not spec.strip():
        raise InputError(src, where, "transform must be a non-empty string (file://path/to/transform.ts, or inline JavaScript)")
    spec = spec.strip()
    mode, body, fn = "inline", spec, "-"
    if spec.startswith("file://"):
        ref = spec.removeprefix("file://")
        cut = ref.rfind(":")
        if cut > 1:
            ref, fn = ref[:cut], ref[cut + 1 :]
        if not ref.endswith(SUFFIXES):
            raise InputError(src, where, f"{ref!r}: Unsupported transform file format (agentv runs {', '.join(SUFFIXES)})")
        mode, body = "file", str(attached(src, where, ref, path))
    bun = find_bun()
    if bun is not None:
        runtime = [bun, "-e"]
    elif body.endswith((".ts", ".mts", ".cts")):
        raise InputError(src, where, f"a TypeScript transform runs with bun, which is not found ({INSTALL_HINT})")
    else:
        node = shutil.which("node")
        if node is None:
            raise InputError(src, where, f"a JavaScript transform runs with bun or node; neither is found ({INSTALL_HINT})")
        runtime = [node, "-e"]
    return (*runtime, RUNNER, mode, body, fn, json.dumps(context, default=str))
