"""Run one agentv ``cli`` provider call as agentv runs it; the command target's program.

Standard library only: it runs as ``python -I agentv_run.py TEMPLATE [FILES_FORMAT [CWD]]``
inside the command target's sandbox, the instruction on stdin, with no access to the
agentsproof package. What it does, as agentv's ``CliProvider`` does:

* writes the instruction to a prompt file and fills agentv's placeholders in the
  template, each value shell-quoted: ``{PROMPT}``, ``{PROMPT_FILE}``, ``{OUTPUT_FILE}``,
  ``{EVAL_ID}``, ``{ATTEMPT}``, ``{FILES}`` (each file the test attached, copied into the
  workspace and named in the instruction's last "Files in your working directory:" line,
  in ``FILES_FORMAT`` with ``{path}`` and ``{basename}``); an unknown ``{NAME}`` stays as
  written. The prompt and output files are in the trial's private harness folder (beside
  ``AGENTSPROOF_TRACE_FILE``), never in the workspace, so they are not the agent's work;
* runs the filled line with ``/bin/sh -c`` in ``CWD`` (agentv's ``cwd``, read-only in the
  sandbox, for an eval without a workspace) or the current folder (the trial's workspace);
  what it prints goes to stderr (the trial log); without uv installed, ``uv run x.py`` is
  ``python3 x.py`` (:data:`UV_SHIM`);
* reads the output file: JSON with ``output`` (agentv's messages; the last assistant
  message's content is the answer, each ``tool_calls`` entry a step of the trace) or
  ``text``, else the file's text as it is; prints the answer on stdout. A missing output
  file is an errored trial, as in agentv; the command's exit code is ours.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

MAX_OUTPUT_BYTES = 5 * 1024 * 1024
UV_SHIM = (
    'uv() { if [ "$1" = run ]; then shift; case "$1" in python|python3) shift ;; esac; '
    'case "$1" in *.py) python3 "$@"; return $? ;; esac; fi; echo "uv: not found" >&2; return 127; }\n'
)
"""Without uv installed, ``uv run [python] x.py ARGS`` is ``python3 x.py ARGS`` (agentv's
examples run their Python programs so); anything else uv would do fails as "not found"."""


def _quote(value: str) -> str:
    """agentv's shellEscape: single quotes, ``''`` for an empty value."""
    return shlex.quote(value) if value else "''"


FILES_LINE = "Files in your working directory: "
"""How an EVAL.yaml's attached files are named in an agent trial's instruction (they are in the workspace)."""


def _files(workspace: Path, prompt: str, fmt: str) -> str:
    lines = [ln for ln in prompt.splitlines() if ln.startswith(FILES_LINE)]
    names = [n.strip() for n in lines[-1][len(FILES_LINE) :].split(", ") if n.strip()] if lines else []
    out = []
    for name in names:
        path = str((workspace / name).resolve())
        out.append(fmt.replace("{path}", _quote(path)).replace("{basename}", _quote(os.path.basename(path))))
    return " ".join(out)


def render(template: str, values: dict[str, str]) -> str:
    """``{NAME}`` (capitals and ``_``) replaced by its value; any other left as written."""
    import re

    return re.sub(r"\{([A-Z_]+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


def _content(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # parts: [{type: text, text: ...}]
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else json.dumps(content)


def answer_of(text: str, trace: Path | None) -> tuple[str, str | None]:
    """(the answer, agentv's ``error`` field) from the output file's text; tool calls are appended to ``trace``."""
    try:
        obj = json.loads(text)
    except ValueError:
        return text, None
    if not isinstance(obj, dict):
        return text, None
    error = obj.get("error") if isinstance(obj.get("error"), str) else None
    messages = obj.get("output", obj.get("output_messages"))
    if isinstance(messages, list) and messages:
        steps = []
        answer = None
        for msg in messages:
            if not isinstance(msg, dict):
                continue
            for call in msg.get("tool_calls") or []:
                if isinstance(call, dict) and isinstance(call.get("tool"), str):
                    steps.append({k: call[k] for k in ("tool", "input", "output", "duration_ms") if k in call})
            if msg.get("role") == "assistant" and msg.get("content") is not None:
                answer = _content(msg.get("content"))
        if trace is not None and steps:
            with open(trace, "a", encoding="utf-8") as fh:
                for step in steps:
                    fh.write(json.dumps(step, default=str) + "\n")
        return (answer if answer is not None else ""), error
    if "text" in obj:
        return str(obj["text"]), error
    return text, error


def main(argv: list[str]) -> int:
    """Run the template once (see the module); the command's exit code."""
    if not argv:
        sys.stderr.write("usage: agentv_run.py TEMPLATE [FILES_FORMAT [CWD [PROJECT]]]\n")  # PROJECT: only shown to the sandbox
        return 2
    template, fmt = argv[0], (argv[1] if len(argv) > 1 else "{path}")
    run_in = argv[2] if len(argv) > 2 and argv[2] else None
    prompt = sys.stdin.read()
    trace_env = os.environ.get("AGENTSPROOF_TRACE_FILE")
    harness = Path(trace_env).parent if trace_env else Path(os.getcwd())
    workspace = Path(os.getcwd())
    prompt_file, output_file = harness / "agentv-prompt.txt", harness / "agentv-output.json"
    prompt_file.write_text(prompt, encoding="utf-8")
    values = {
        "PROMPT": _quote(prompt),
        "PROMPT_FILE": _quote(str(prompt_file)),
        "OUTPUT_FILE": _quote(str(output_file)),
        "EVAL_ID": _quote(os.environ.get("AGENTV_EVAL_ID", "")),
        "ATTEMPT": _quote(os.environ.get("AGENTV_ATTEMPT", "0")),
        "FILES": _files(workspace, prompt, fmt),
    }
    line = render(template, values)
    import shutil

    script = (UV_SHIM if shutil.which("uv") is None else "") + line
    done = subprocess.run(["/bin/sh", "-c", script], stdin=subprocess.DEVNULL, stdout=sys.stderr, cwd=run_in, check=False)
    if done.returncode != 0:
        return done.returncode if done.returncode > 0 else 128 - done.returncode
    try:
        with open(output_file, "rb") as fh:
            data = fh.read(MAX_OUTPUT_BYTES)
    except OSError:
        sys.stderr.write(f"agentv cli: the command wrote no output file ({{OUTPUT_FILE}}): {line[:200]}\n")
        return 3
    answer, error = answer_of(data.decode("utf-8", "replace"), Path(trace_env) if trace_env else None)
    if error:
        sys.stderr.write(f"agentv cli: the output reports an error: {error[:300]}\n")
    sys.stdout.write(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
