"""promptfoo's prompts: text, ``file://`` files (a ``.txt`` file may hold several, split by ``---``),
``{raw, label, config}``, prompt functions (``file://prompt.py:fn``, called per case, confined), Nunjucks
templates (rendered by a sandboxed Jinja), and the config read as promptfoo reads YAML (1.2)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.formats.promptfoo_tests import file_ref, list_or_file

PROMPT_KEYS = {"raw", "label", "id", "config"}


def _err(src: str, where: str | None, message: str) -> InputError:
    """An InputError at ``where`` in ``src``, to raise."""
    return InputError(src, where, message)


def read_ref(src: str, where: str, ref: str, path: Path) -> str:
    """The text of ``file://PATH`` (relative to the config, confined as input files are)."""
    from agentsproof.core.inputs import MAX_EVAL_FILE_BYTES, read_text

    return read_text(file_ref(src, where, ref, path), source=src, field=where, max_bytes=MAX_EVAL_FILE_BYTES, what="file")


class Prompt:
    """One of ``prompts``: its label, template, the names a provider's ``prompts`` may give it, and its ``config``."""

    def __init__(self, label: str, text: str, names: set[str], config: dict[str, Any]):
        self.label, self.text, self.names, self.config = label, text, names, config


def _prompts(src: str, data: dict, path: Path) -> list[tuple[str, str]]:
    """(label, template) of each prompt."""
    return [(p.label, p.text) for p in _prompt_list(src, data, path)]


def _prompt_list(src: str, data: dict, path: Path) -> list[Prompt]:
    raw = data.get("prompts")
    if raw is None:
        raise _err(src, "prompts", "required field is missing")
    out: list[Prompt] = []
    for i, p in enumerate(list_or_file(src, "prompts", raw, path)):
        at = f"prompts[{i}]"
        label = None
        config: dict[str, Any] = {}
        names: set[str] = set()
        if isinstance(p, dict):
            extra = sorted(str(k) for k in p if k not in PROMPT_KEYS)
            if extra:
                raise _err(src, f"{at}.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(PROMPT_KEYS))}")
            label = p.get("label")
            config = p.get("config") or {}
            if not isinstance(config, dict):
                raise _err(src, f"{at}.config", "must be a mapping (the provider config this prompt runs with)")
            names |= {str(p[k]) for k in ("id", "label") if isinstance(p.get(k), str)}
            p = p.get("raw", p.get("id"))
        if not isinstance(p, str) or not p.strip():
            raise _err(src, at, "must be prompt text, file://PATH or {raw, label}")
        text = _prompt_text(src, at, p, path)
        if not text.strip():
            raise _err(src, at, "is empty")
        names.add(p)
        name = str(label) if label else (p.removeprefix("file://") if p.startswith("file://") else f"prompt-{i + 1}")
        parts = re.split(r"\n-{3,}\n", text) if p.startswith("file://") and p.lower().endswith(".txt") else [text]
        if len(parts) > 1:  # promptfoo: a .txt prompts file holds several prompts, split by a line of ---
            for n, part in enumerate(parts, start=1):
                if part.strip():
                    out.append(Prompt(f"{name}:{n}", part.strip("\n"), names | {f"{name}:{n}"}, dict(config)))
            continue
        out.append(Prompt(name, text, names | {name}, dict(config)))
    if not out:
        raise _err(src, "prompts", "is empty; give at least one prompt")
    return out


def _prompt_text(src: str, at: str, p: str, path: Path) -> str:
    """A prompt's template: the text, or the file's (``file://prompt.py:func``: what the function returns, :mod:`agentsproof.formats.promptfoo_programs`)."""
    if not p.startswith("file://"):
        return p
    ref = p.removeprefix("file://")
    head, _, tail = ref.rpartition(":")
    if head.endswith((".py", ".js", ".cjs", ".mjs")) and tail.isidentifier():
        file_ref(src, at, "file://" + head, path)  # it must be there; called per case (_call_prompt)
        return PROMPT_FUNCTION + p
    if ref.endswith((".py", ".js", ".cjs", ".mjs")):
        raise _err(src, at, f"{p!r}: name the function that builds the prompt (file://{ref}:FUNCTION)")
    return read_ref(src, at, p, path).rstrip("\n")


PROMPT_FUNCTION = "\x00promptfoo-function:"
"""Marks a prompt that is a function (``file://prompt.py:fn``): called per case with its context."""

PROMPT_RUNNER_PY = r"""
import asyncio, importlib.util, inspect, json, sys
path, fn = sys.argv[1], sys.argv[2]
context = json.loads(sys.stdin.read())
spec = importlib.util.spec_from_file_location("promptfoo_prompt", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
out = getattr(mod, fn)(context)
if inspect.isawaitable(out):
    out = asyncio.run(out)
if isinstance(out, dict) and "prompt" in out:
    out = out["prompt"]
print(json.dumps({"result": out if isinstance(out, str) else json.dumps(out)}))
"""

PROMPT_RUNNER_JS = r"""
const [path, fn] = process.argv.slice(1);
let input = "";
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", async () => {
  let out = await require(path)[fn](JSON.parse(input));
  if (out && typeof out === "object" && !Array.isArray(out) && "prompt" in out) out = out.prompt;
  process.stdout.write(JSON.stringify({result: typeof out === "string" ? out : JSON.stringify(out)}));
});
"""


def _call_prompt(src: str, where: str, marked: str, variables: dict[str, Any], provider: str, path: Path) -> str:
    """promptfoo's prompt function, called as promptfoo calls it (``fn({vars, provider})``), confined; what it returns is the prompt."""
    import shutil
    import subprocess
    import sys
    import tempfile

    from agentsproof.core.confine import confined_argv, project_of
    from agentsproof.core.errors import TargetError

    ref = marked.removeprefix(PROMPT_FUNCTION).removeprefix("file://")
    file, _, fn = ref.rpartition(":")
    target = str(file_ref(src, where, "file://" + file, path))
    if file.endswith(".py"):
        argv = [sys.executable, "-c", PROMPT_RUNNER_PY, target, fn]
    else:
        node = shutil.which("node")
        if node is None:
            raise _err(src, where, "a JavaScript prompt function runs with node, which is not on PATH")
        argv = [node, "-e", PROMPT_RUNNER_JS, target, fn]
    folder = path.resolve().parent
    context = json.dumps({"vars": variables, "provider": {"id": provider, "label": provider}}, default=str)
    try:
        with tempfile.TemporaryDirectory(prefix="agentsproof-prompt-") as tmp:
            wrapped = confined_argv(argv, cwd=Path(tmp), writable=[Path(tmp)], readable=[folder, project_of(folder)])
            done = subprocess.run(wrapped, input=context, capture_output=True, text=True, timeout=60, cwd=tmp)
    except TargetError as err:
        raise _err(src, where, str(err)) from None
    except (OSError, subprocess.TimeoutExpired) as err:
        raise _err(src, where, f"the prompt function did not run: {err}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1][:300]
        raise _err(src, where, f"the prompt function failed: {last}")
    try:
        return str(json.loads(done.stdout)["result"])
    except (ValueError, KeyError, TypeError):
        raise _err(src, where, "the prompt function printed no prompt") from None


_NUNJUCKS = re.compile(r"\{%|\{\{[^}]*\|")
_FOR_PAIR = re.compile(r"\{%-?\s*for\s+(\w+)\s*,\s*(\w+)\s+in\s+([^%]+?)\s*-?%\}")


def _is_nunjucks(text: str) -> bool:
    """A prompt that uses Nunjucks beyond ``{{ name }}``: a tag (``{% for %}``) or a filter (``{{ x | dump }}``)."""
    return _NUNJUCKS.search(text) is not None


def _nunjucks(src: str, where: str, text: str, variables: dict[str, Any]) -> str:
    """promptfoo's Nunjucks prompt template, rendered by a sandboxed Jinja (Nunjucks' syntax is Jinja's):
    ``dump`` is Nunjucks' JSON filter and ``load`` promptfoo's JSON.parse, ``{% for k, v in object %}`` walks an object's entries, an unknown
    name is empty (as in Nunjucks)."""
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    def pairs(value: Any) -> Any:
        return list(value.items()) if isinstance(value, dict) else value

    env = SandboxedEnvironment(autoescape=False, keep_trailing_newline=True)
    env.filters["dump"] = lambda value, indent=None: json.dumps(value, indent=indent, ensure_ascii=False)
    env.filters["_pairs"] = pairs
    env.filters["load"] = lambda value: json.loads(value) if isinstance(value, str) else value  # promptfoo's JSON.parse filter
    source = _FOR_PAIR.sub(lambda m: "{% for " + m.group(1) + ", " + m.group(2) + " in (" + m.group(3) + ") | _pairs %}", text)
    try:
        return env.from_string(source).render(**variables)
    except (jinja2.TemplateError, TypeError, ValueError, KeyError, AttributeError) as err:
        raise _err(src, where, f"the Nunjucks template does not render: {type(err).__name__}: {err}") from None


def _has_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, dict):
        return any(_has_bool(v) for v in value.values())
    return isinstance(value, list) and any(_has_bool(v) for v in value)


def _yaml12(path: Path, data: Any) -> Any:
    """The config as promptfoo reads it (js-yaml, YAML 1.2): ``yes``, ``no``, ``on``, ``off`` are text, not
    booleans (``body: Yes`` is the text Yes). The file was read strictly already; this reads its scalars again."""
    if not _has_bool(data):
        return data
    import yaml

    from agentsproof.core import inputs

    class Yaml12(inputs._StrictLoader):  # the strict loader's checks, YAML 1.2's booleans
        pass

    bool_tag = "tag:yaml.org,2002:bool"
    Yaml12.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != bool_tag] for first, resolvers in inputs._StrictLoader.yaml_implicit_resolvers.items()
    }
    Yaml12.add_implicit_resolver(bool_tag, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
    text = inputs.read_text(path, source=inputs.display(path), field=None, max_bytes=inputs.MAX_EVAL_FILE_BYTES, what="file")
    try:
        return yaml.load(text, Loader=Yaml12)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError:
        return data
