"""promptfoo providers that are programs, run as agentsproof command targets.

::

    providers:
      - echo                                  # the prompt is the output
      - exec: python3 agent.py                # the command, given prompt, options and context
      - id: file://provider.py:call_api       # call_api(prompt, options, context)
        config: {someOption: foobar}
      - id: file://provider.js                # a module exporting a class with callApi(prompt, context, options)

Each runs as promptfoo runs it, as a ``command`` target (:mod:`agentsproof.targets.command.target`),
so confined by its sandbox (the project read-only, its own workspace writable, no network):

* ``echo``: the rendered prompt is the answer.
* ``exec: CMD``: ``CMD`` (split as a shell would, run without one) with three more
  arguments, promptfoo's: the prompt, the options (``{"config": …}``) and the context
  (``{"vars": …}``) as JSON; its stdout is the answer.
* ``file://x.py[:fn]`` (``python:x.py``): ``fn`` (default ``call_api``; async allowed) called as
  ``fn(prompt, options, context)`` with ``options = {"id", "config"}`` and
  ``context = {"vars", "prompt"}``; the answer is its ``output`` (text, or JSON of another
  value); an ``error`` it returns, or an exception, errors the trial. ``config.pythonExecutable``
  is the interpreter, else ``PROMPTFOO_PYTHON``, else ``python3`` on PATH (promptfoo's order). Config values ``file://x.yaml|json|txt`` are read
  into the config (promptfoo's), ``file://x.py:fn`` / ``file://x.js:fn`` replaced by what the
  function returns, called in the sandbox.
* ``file://x.js`` (``.cjs``, ``.mjs``): its export (a class, instantiated with the options, or
  an object) answers ``callApi(prompt, context, options)``.

Every trial of such a provider runs the program in a fresh workspace; each case has its own
target (its vars are in the context), named ``<provider label>.<n>``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError

PYTHON_PROVIDER = r"""
import asyncio, base64, importlib.util, inspect, json, os, subprocess, sys
def arg(text):
    return json.loads(base64.b64decode(text).decode("utf-8"))
path, fn, options, context, here = sys.argv[1], sys.argv[2], arg(sys.argv[3]), arg(sys.argv[4]), sys.argv[5]
prompt = sys.stdin.read()
sys.path.insert(0, os.path.dirname(path))

def call_file(ref):
    target, _, name = ref.rpartition(":")
    target = os.path.join(here, target)
    if target.endswith(".py"):
        spec = importlib.util.spec_from_file_location("promptfoo_config_" + name, target)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return getattr(mod, name)()
    code = "const m = require(process.argv[1]); Promise.resolve(m[process.argv[2]]()).then((v) => process.stdout.write(JSON.stringify(v === undefined ? null : v)));"
    done = subprocess.run(["node", "-e", code, target, name], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)

def resolve(value):
    if isinstance(value, dict):
        return {k: resolve(v) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v) for v in value]
    if isinstance(value, str) and value.startswith("file://") and value.rpartition(":")[0].endswith((".py", ".js", ".cjs", ".mjs")):
        return call_file(value[len("file://"):])
    return value

try:
    options["config"] = resolve(options.get("config") or {})
    spec = importlib.util.spec_from_file_location("promptfoo_provider", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    f = getattr(mod, fn)
    out = f(prompt, options, context)
    if inspect.isawaitable(out):
        out = asyncio.run(out)
except Exception as err:
    print(f"the provider raised {type(err).__name__}: {err}", file=sys.stderr)
    sys.exit(1)
if isinstance(out, dict):
    if out.get("error"):
        print(f"the provider returned an error: {out['error']}", file=sys.stderr)
        sys.exit(1)
    out = out.get("output")
if out is None:
    print("the provider returned no output", file=sys.stderr)
    sys.exit(1)
sys.stdout.write(out if isinstance(out, str) else json.dumps(out))
"""

NODE_PROVIDER = r"""
const arg = (text) => JSON.parse(Buffer.from(text, "base64").toString("utf-8"));
const [path, options, context] = [process.argv[1], arg(process.argv[2]), arg(process.argv[3])];
let prompt = "";
process.stdin.on("data", (d) => { prompt += d; });
process.stdin.on("end", async () => {
  try {
    let mod = require(path);
    if (mod && mod.default) mod = mod.default;
    const inst = typeof mod === "function" ? new mod(options) : mod;
    if (!inst || typeof inst.callApi !== "function") throw new Error(path + " exports no provider with callApi");
    const out = await inst.callApi(prompt, context, options);
    if (out && out.error) { process.stderr.write("the provider returned an error: " + out.error); process.exit(1); }
    const v = out ? out.output : undefined;
    if (v === undefined || v === null) { process.stderr.write("the provider returned no output"); process.exit(1); }
    process.stdout.write(typeof v === "string" ? v : JSON.stringify(v));
  } catch (err) {
    process.stderr.write("the provider raised " + (err && err.name ? err.name : "an error") + ": " + (err && err.message ? err.message : err));
    process.exit(1);
  }
});
"""

ECHO = "import sys; sys.stdout.write(sys.stdin.read())"


def is_program(pid: str) -> bool:
    """True for a provider id this module runs: ``echo``, ``exec:``, ``file://`` / ``python:`` scripts."""
    low = pid.strip().lower()
    return low == "echo" or low.startswith("exec:") or _script(pid) is not None


def _script(pid: str) -> tuple[str, str | None] | None:
    ref = pid.strip()
    for prefix in ("file://", "python:"):
        if ref.startswith(prefix):
            ref = ref[len(prefix) :]
            break
    else:
        return None
    head, _, tail = ref.rpartition(":")
    if head.endswith((".py", ".js", ".cjs", ".mjs")) and tail.isidentifier():
        return head, tail
    if ref.endswith((".py", ".js", ".cjs", ".mjs")):
        return ref, None
    return None


def _b64(value: Any) -> str:
    """A JSON argument as base64: a command target's ``{prompt}`` / ``${VAR}`` substitution never touches it."""
    import base64

    return base64.b64encode(json.dumps(value, default=str).encode("utf-8")).decode("ascii")


def _file_values(src: str, where: str, value: Any, path: Path) -> Any:
    """promptfoo's ``file://`` values in a provider config: a data file's content (yaml, json, text); a function reference is kept (called in the sandbox)."""
    from agentsproof.core.validation import read_yaml
    from agentsproof.formats.promptfoo_tests import file_ref

    if isinstance(value, dict):
        return {k: _file_values(src, f"{where}.{k}", v, path) for k, v in value.items()}
    if isinstance(value, list):
        return [_file_values(src, f"{where}[{i}]", v, path) for i, v in enumerate(value)]
    if not (isinstance(value, str) and value.startswith("file://")):
        return value
    ref = value.removeprefix("file://")
    head, _, tail = ref.rpartition(":")
    if head.endswith((".py", ".js", ".cjs", ".mjs")) and tail.isidentifier():
        file_ref(src, where, "file://" + head, path)  # it must exist, inside the project
        return value
    target = file_ref(src, where, value, path)
    if ref.lower().endswith((".yaml", ".yml", ".json")):
        return read_yaml(target)
    from agentsproof.core.inputs import MAX_EVAL_FILE_BYTES, read_text

    return read_text(target, source=src, field=where, max_bytes=MAX_EVAL_FILE_BYTES, what="file")


def program_target(src: str, at: str, pid: str, label: str, config: dict[str, Any], path: Path, variables: dict[str, Any], prompt_label: str) -> dict[str, Any]:
    """The targets.yaml entry (a ``command`` target) that runs provider ``pid`` for one case, as promptfoo would."""
    from agentsproof.formats.promptfoo_tests import file_ref

    low = pid.strip().lower()
    here = str(path.resolve().parent)
    options = {"id": pid, "label": label, "config": config}
    context = {"vars": variables, "prompt": {"label": prompt_label}}
    if low == "echo":
        return {"type": "command", "command": [sys.executable, "-c", ECHO], "stdin": True}
    if low.startswith("exec:"):
        line = pid.strip()[len("exec:") :].strip()
        try:
            argv = shlex.split(line)
        except ValueError as err:
            raise InputError(src, at, f"{pid!r}: the command does not parse: {err}") from None
        if not argv:
            raise InputError(src, at, "exec: names no command")
        first = argv[0]
        if not Path(first).is_absolute() and ("/" in first or first.endswith((".py", ".sh", ".js"))):
            argv[0] = str(file_ref(src, at, "file://" + first, path))
        for i, arg in enumerate(argv[1:], start=1):
            if not Path(arg).is_absolute() and (path.resolve().parent / arg).is_file() and re.search(r"\.\w+$", arg):
                argv[i] = str(file_ref(src, at, "file://" + arg, path))
        return {"type": "command", "command": [*argv, "{prompt}", json.dumps(options, default=str), json.dumps(context, default=str)]}
    script = _script(pid)
    if script is None:
        raise InputError(src, at, f"{pid!r} names no .py or .js file")
    file, fn = script
    target = str(file_ref(src, at, "file://" + file, path))
    config = _file_values(src, f"{at}.config", config, path)
    options["config"] = config
    if file.endswith(".py"):
        exe = config.get("pythonExecutable") if isinstance(config.get("pythonExecutable"), str) else None
        python = exe or os.environ.get("PROMPTFOO_PYTHON") or shutil.which("python3") or sys.executable  # promptfoo's order
        if exe and not Path(exe).is_absolute():
            python = shutil.which(exe) or exe
        argv = [python, "-c", PYTHON_PROVIDER, target, fn or "call_api", _b64(options), _b64(context), here]
        return {"type": "command", "command": argv, "stdin": True}
    node = shutil.which("node")
    if node is None:
        raise InputError(src, at, "a JavaScript provider runs with node, which is not on PATH: install Node.js")
    if fn is not None:
        raise InputError(src, at, f"{pid!r}: a JavaScript provider is the module's export (a class or an object with callApi), not a named function")
    return {
        "type": "command",
        "command": [node, "-e", NODE_PROVIDER, target, _b64(options), _b64(context)],
        "stdin": True,
    }


HTTP_KEYS = {"url", "method", "headers", "body", "transformResponse", "responseParser", "maxRetries", "timeout", "skill_field"}
_PATH_EXPR = re.compile(r"^json((?:\.[A-Za-z_$][\w$]*|\[\d+\])*)$")


def is_http(pid: str) -> bool:
    """promptfoo's HTTP provider: ``http``, ``https``, or an ``http(s)://`` URL as the id."""
    low = pid.strip().lower()
    return low in ("http", "https") or low.startswith(("http://", "https://"))


def _prompt_path(body: Any, path: str = "") -> tuple[list[str], list[str]]:
    """(the dotted paths whose value is exactly ``{{prompt}}``, the paths of any other template) in a body."""
    found: list[str] = []
    others: list[str] = []
    items = body.items() if isinstance(body, dict) else enumerate(body) if isinstance(body, list) else []
    for key, value in items:
        here = f"{path}.{key}" if path else str(key)
        if isinstance(value, str):
            if re.fullmatch(r"\s*\{\{\s*prompt\s*\}\}\s*", value):
                found.append(here)
            elif "{{" in value or "{%" in value:
                others.append(here)
        else:
            more, other = _prompt_path(value, here)
            found += more
            others += other
    return found, others


def http_target(src: str, at: str, pid: str, config: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's HTTP provider as an agentsproof ``http`` target: a POST of its ``body`` with the prompt at the one
    ``{{prompt}}``, the answer where ``transformResponse`` (``json.a.b[0].c``) points; InputError naming what
    the http target cannot do as promptfoo would (another template, another method, TLS settings …)."""
    import copy

    cfg = dict(config)
    url = cfg.get("url") or (pid.strip() if pid.strip().lower().startswith(("http://", "https://")) else None)
    where = f"{at}.config"
    if not isinstance(url, str) or not url.strip():
        raise InputError(src, f"{where}.url", "is required (the endpoint promptfoo's HTTP provider posts to)")
    if "{{" in url:
        raise InputError(src, f"{where}.url", "a URL template is not filled; give the URL itself")
    extra = sorted(k for k in cfg if k not in HTTP_KEYS)
    if extra:
        raise InputError(
            src,
            f"{where}.{extra[0]}",
            "is not run by agentsproof's http target (it posts the body to the URL, no TLS client settings, sessions or raw requests)",
        )
    method = str(cfg.get("method", "POST")).upper()
    if method != "POST":
        raise InputError(src, f"{where}.method", f"{method!r}: agentsproof's http target posts (POST) the body")
    body = cfg.get("body")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            raise InputError(src, f"{where}.body", "a text body is not sent; give the body as a mapping with '{{prompt}}' in it") from None
    if not isinstance(body, dict):
        raise InputError(src, f"{where}.body", "must be a mapping (the JSON body) with '{{prompt}}' at one place")
    paths, others = _prompt_path(body)
    if len(paths) != 1:
        raise InputError(src, f"{where}.body", "must hold '{{prompt}}' exactly once (as a whole value)")
    if others:
        raise InputError(src, f"{where}.body.{others[0]}", "a template other than '{{prompt}}' is not filled; give the value itself")
    parse = cfg.get("transformResponse", cfg.get("responseParser"))
    m = _PATH_EXPR.match(parse.strip()) if isinstance(parse, str) else None
    if m is None:
        raise InputError(src, f"{where}.transformResponse", "give the answer's place as json.PATH (json.choices[0].message.content); other code is not run")
    answer = re.sub(r"\[(\d+)\]", r".\1", m.group(1)).lstrip(".")
    if not answer:
        raise InputError(src, f"{where}.transformResponse", "must name a field of the reply (json.PATH)")
    headers = cfg.get("headers") or {}
    if not isinstance(headers, dict) or any("{{" in str(v) for v in headers.values()):
        raise InputError(src, f"{where}.headers", "must map names to values (${VAR} for a secret; a template is not filled)")
    fixed = copy.deepcopy(body)
    spec: dict[str, Any] = {
        "type": "http",
        "url": url.strip(),
        "request_field": paths[0],
        "answer_field": answer,
        "headers": {str(k): str(v) for k, v in headers.items() if str(k).lower() != "content-type"},
        "extra": fixed,
        "skill_field": str(cfg.get("skill_field") or "skill"),
    }
    return spec


def _say(src: str, note: str) -> None:
    from agentsproof.core.notice import note_once

    note_once(f"{src}: {note}", key=("promptfoo", src, note))


def _err(src: str, where: str | None, message: str) -> InputError:
    return InputError(src, where, message)


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text.strip()).strip("-").lower()
    return s[:60] or "test"


def case_settings(src: str, path: Path, item: Any, ctx: Any, threshold: float | None) -> Any:
    """A case's own settings: its test's ``threshold`` (unless --threshold), its output ``transform``."""
    import dataclasses

    from agentsproof.formats.promptfoo_transform import transform_argv

    changes: dict[str, Any] = {}
    if ctx.threshold is not None and threshold is None:
        changes["threshold"] = ctx.threshold
    if ctx.transform is not None:
        context = json.dumps({"vars": ctx.vars, "prompt": {"raw": item.prompt}}, default=str)
        changes["transform"] = (*transform_argv(src, "options.transform", ctx.transform, path), "output", context)
    return dataclasses.replace(item, **changes) if changes else item


def on_providers(src: str, path: Path, items: list[Any], contexts: list[Any], providers: list[Any], prompts: list[Any]) -> list[Any]:
    """Every case on every provider that runs its prompt (``providers[].prompts``): a model through the configured
    provider on its model with its (and the prompt's) ``config`` sent; a program as a command target."""
    import dataclasses

    from agentsproof.formats.promptfoo_providers import check_provider, not_model
    from agentsproof.targets.config import parse_targets

    several = len(providers) > 1
    out: list[Any] = []
    said: list[str] = []
    for p in providers:
        if p.prompts:
            known = {n for pr in prompts for n in pr.names}
            unknown = [n for n in p.prompts if n not in known and not any(fnmatch_name(n, k) for k in known)]
            if unknown:
                raise _err(src, f"{p.at}.prompts", f"{unknown[0]!r} names no prompt (labels: {', '.join(pr.label for pr in prompts)})")
        program = is_program(p.pid) or is_http(p.pid)
        if not program and not_model(p.pid) is not None:
            check_provider(src, p)  # an endpoint, a browser …: refused by name, never sent as a model
        if not program and several and p.model is None:
            raise _err(src, p.at, f"{p.label!r} names no model (give id PROVIDER:MODEL or config.model)")
        for k, (it, ctx) in enumerate(zip(items, contexts, strict=True)):
            prompt = prompts[ctx.prompt]
            if p.prompts and not any(n in prompt.names or any(fnmatch_name(n, m) for m in prompt.names) for n in p.prompts):
                continue
            own: dict[str, Any] = {}
            if several:
                own.update(id=f"{it.id}@{p.label}", name=f"{p.label}/{it.name}")
            if program:
                name = f"{_slug(p.label)[:40]}.{k + 1}"
                if is_http(p.pid):
                    entry = http_target(src, p.at, p.pid, {**p.config, **prompt.config})
                else:
                    entry = program_target(src, p.at, p.pid, p.label, {**p.config, **prompt.config}, path, ctx.vars, prompt.label)
                found = parse_targets({name: entry}, src, path.resolve().parent)[name]
                own.update(target=name, target_def=found)
                out.append(dataclasses.replace(it, **own))
                continue
            sets = check_provider(src, p, prompt.config, say=lambda line: _say(src, line))
            model = sets.pop("model", None)
            if model is not None:
                own["model"] = model
            elif several:
                own["model"] = p.model
            out.append(dataclasses.replace(it, **own, **sets))
        if is_http(p.pid):
            line = f"provider {p.label!r} ({p.pid}) runs as an http target (its body posted, the prompt at its '{{{{prompt}}}}')"
        elif program:
            line = f"provider {p.label!r} ({p.pid}) runs as a command target, confined (the project read-only, no network)"
        elif "model" in p.config:
            line = f"provider {p.label!r} runs its config.model {p.model!r} through the configured provider"
        elif several:
            continue  # said together below
        else:
            line = f"provider {p.label!r} runs as the configured model (--model / AGENTSPROOF_MODEL)"
        said.append(line)
    models = [p for p in providers if not is_program(p.pid) and not is_http(p.pid) and "model" not in p.config]
    if several and models:
        said.append(
            "providers "
            + ", ".join(f"{p.label!r} (model {p.model})" for p in models)
            + " each run every case, through the configured provider; the judge is --judge-model / --model"
        )
    for line in said:
        _say(src, line)
    if not out:
        raise _err(src, "providers", "no provider runs any prompt (see providers[].prompts)")
    return out


def fnmatch_name(pattern: str, name: str) -> bool:
    """promptfoo's provider ``prompts`` may name prompts with a wildcard (``Prompt*``)."""
    import fnmatch

    return any(c in pattern for c in "*?[") and fnmatch.fnmatchcase(name, pattern)
