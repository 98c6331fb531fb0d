"""promptfoo's ``promptfooconfig.yaml``: its prompts × tests × providers as cases.

::

    description: Translations
    prompts:
      - "Translate to {{language}}: {{input}}"
      - file://prompts/formal.txt            # or {raw: ..., label: ...}
    providers: [openai:gpt-4o-mini, openai:gpt-4o]
    defaultTest:
      assert: [{type: icontains, value: "{{expected}}"}]
    tests:
      - description: french
        vars: {language: French, input: Hello, expected: bonjour}
        assert:
          - type: llm-rubric
            value: A natural French greeting

Each (prompt, test) is one case (an EVAL.yaml test, graded by the same assertion table:
:mod:`agentsproof.formats.agentevals.asserts`); ``defaultTest``'s vars and assertions apply to
every test. One provider (or none) stands for the configured model (``--model``, or its
``config.model``); several run each case once per provider, on the provider's model
(``openai:gpt-4o`` → ``gpt-4o``, or its ``config.model``) through the configured provider.
A provider id that names a script, a command or an endpoint is refused by name, never sent
as a model name, and ``config`` is honoured or refused by key
(:mod:`agentsproof.formats.promptfoo_providers`); a test with nothing to check is refused. ``--skill FILE`` adds the
with/without arms (the skill as the system prompt); without it the run is single-armed.
Any assertion type may be negated with promptfoo's ``not-`` prefix (``not-regex``,
``not-starts-with`` …) where its negation is well defined; an assertion type agentsproof does
not grade (``javascript``, ``similar``, ``is-sql`` …), or whose negation it cannot honour
(``not-llm-rubric``), is refused by name.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import InputError
from agentsproof.core.notice import note_once
from agentsproof.formats.base import ItemRequest, Loaded
from agentsproof.formats.promptfoo_providers import Provider, check_provider, not_model
from agentsproof.formats.promptfoo_tests import expand_refs, file_ref, list_or_file, tests_from

if TYPE_CHECKING:
    from agentsproof.model.results import ItemResult, RunResult

NAMES = ("promptfooconfig.yaml", "promptfooconfig.yml")
_NAMED = re.compile(r"promptfooconfig(?:[.-][\w.-]+)?\.ya?ml")


def is_config_name(name: str) -> bool:
    """``promptfooconfig.yaml`` (``.yml``) and the variants promptfoo's own examples use with
    ``-c``: ``promptfooconfig.claude.yaml``, ``promptfooconfig-inline.yaml`` … (not an EVAL.yaml
    written beside one: ``promptfooconfig.x.eval.yaml``)."""
    return _NAMED.fullmatch(name) is not None and not name.lower().endswith((".eval.yaml", ".eval.yml"))


SUITE_KEYS = {"description", "prompts", "providers", "targets", "tests", "defaultTest", "tags", "assertionTemplates", "scenarios"}
IGNORED_KEYS = {"evaluateOptions", "outputPath", "sharing", "writeLatestResults", "$schema", "env"}
NOTED_KEYS = {
    # promptfoo keys that change nothing measured: read, and said once
    "derivedMetrics": "metrics computed from the named metrics are not reported; the report gives each check's score and pass rate",
    "outputs": "not a promptfoo setting agentsproof uses; the reports are written as --output says",
    "metadata": "the suite's metadata is not graded",
    "commandLineOptions": "promptfoo's command-line defaults do not apply; give agentsproof's options on its command line",
    "tracing": "promptfoo's tracing is not collected; the trials' logs are in the report",
}
TEST_KEYS = {"description", "vars", "assert", "metadata", "options", "threshold"}
PROVIDER_KEYS = {"id", "label", "config", "provider", "prompts", "delay", "env"}
PROMPT_KEYS = {"raw", "label", "id", "config"}
OPTION_KEYS = {"provider", "transform", "transformVars", "prefix", "suffix", "disableVarExpansion", "runSerially"}
REFUSED_KEYS = {
    # promptfoo keys agentsproof does not honour, each refused with its reason (never dropped)
    "redteam": "red-team generation is promptfoo's own; run the tests it generates",
    "extensions": "promptfoo's extension hooks are not run",
    "nunjucksFilters": "custom template filters are not run; give plain values in vars",
    "rubricPrompt": "a judge prompt template is not used; write the judge's prompt as an llm-rubric assertion",
    "provider": "a test's own provider is not supported: every test runs on the config's providers (or --target)",
    "providerOutput": "a given output is not graded without a trial",
    "storeOutputAs": "a later test reading this test's output needs the tests run in order, one trial each",
    "assertScoringFunction": "a custom scoring function is not run; the score is the assertions' weighted mean",
}


def _say(src: str, note: str) -> None:
    note_once(f"{src}: {note}", key=("promptfoo", src, note))


def _err(src: str, where: str | None, message: str) -> InputError:
    return InputError(src, where, message)


def _unknown(src: str, where: str, data: dict, allowed: set[str]) -> None:
    extra = sorted(str(k) for k in data if k not in allowed)
    if extra:
        at = f"{where}.{extra[0]}" if where else extra[0]
        if extra[0] in REFUSED_KEYS:
            raise _err(src, at, f"is not supported: {REFUSED_KEYS[extra[0]]}")
        raise _err(src, at, f"unknown key; expected one of {', '.join(sorted(allowed))}")


def _options(src: str, where: str, test: dict) -> dict[str, Any]:
    """A test's (or defaultTest's) ``options``: ``provider`` (the judge of its LLM assertions that
    name none: formats/agentevals/code.judge_model), ``transform`` / ``transformVars``
    (:mod:`agentsproof.formats.promptfoo_transform`), ``prefix`` / ``suffix`` (around the prompt),
    ``disableVarExpansion``; ``runSerially`` read with a note."""
    options = test.get("options")
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise _err(src, f"{where}.options", "must be a mapping")
    _unknown(src, f"{where}.options", options, OPTION_KEYS)
    for key in ("prefix", "suffix"):
        if key in options and not isinstance(options[key], str):
            raise _err(src, f"{where}.options.{key}", "must be text")
    if options.get("runSerially"):
        _say(src, f"{where}.options.runSerially: trials run as --parallel says; each trial is independent")
    return dict(options)


def _judge_option(src: str, where: str, test: dict) -> Any:
    return _options(src, where, test).get("provider")


def _with_judge(entry: Any, judge: Any) -> Any:
    from agentsproof.formats.agentevals.code import JUDGED_TYPES

    if judge is None or not isinstance(entry, dict) or entry.get("type") not in JUDGED_TYPES or "provider" in entry:
        return entry
    return {**entry, "provider": judge}


def _templates(src: str, data: dict) -> dict[str, Any]:
    """promptfoo's ``assertionTemplates``: named assertions an assertion takes with ``$ref``."""
    found = data.get("assertionTemplates") or {}
    if not isinstance(found, dict) or not all(isinstance(v, dict) for v in found.values()):
        raise _err(src, "assertionTemplates", "must map names to assertions (mappings with a type)")
    return found


def _deref(src: str, where: str, entry: Any, templates: dict[str, Any]) -> Any:
    """``{$ref: "#/assertionTemplates/NAME", …}``: that template, the entry's other keys over it."""
    if not isinstance(entry, dict) or "$ref" not in entry:
        return entry
    ref = entry["$ref"]
    name = ref.removeprefix("#/assertionTemplates/") if isinstance(ref, str) and ref.startswith("#/assertionTemplates/") else None
    if name is None or name not in templates:
        raise _err(src, f"{where}.$ref", f"{ref!r} names no assertionTemplates entry (#/assertionTemplates/NAME)")
    return {**copy.deepcopy(templates[name]), **{k: v for k, v in entry.items() if k != "$ref"}}


def _read(src: str, where: str, ref: str, path: Path) -> str:
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
            _unknown(src, at, p, PROMPT_KEYS)
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
    return _read(src, at, p, path).rstrip("\n")


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


def _provider_entries(src: str, data: dict, path: Path) -> list[Provider]:
    key = "providers" if "providers" in data or "targets" not in data else "targets"  # promptfoo: targets is its alias
    raw = data.get(key)
    if raw is None:
        return []
    out: list[Provider] = []
    for i, p in enumerate(list_or_file(src, key, raw, path)):
        at = f"{key}[{i}]"
        model: str | None = None
        cfg: Any = {}
        prompts: tuple[str, ...] = ()
        if isinstance(p, dict):
            _unknown(src, at, p, PROVIDER_KEYS)
            pid = p.get("provider", p.get("id"))
            cfg = p.get("config") or {}
            if not isinstance(cfg, dict):
                raise _err(src, f"{at}.config", "must be a mapping")
            if isinstance(cfg.get("model"), str):
                model = cfg["model"]
            label = p.get("label") or pid
            given = p.get("prompts")
            if given is not None:
                if not isinstance(given, list) or not all(isinstance(x, str) and x.strip() for x in given):
                    raise _err(src, f"{at}.prompts", "must be a list of prompt labels (or ids)")
                prompts = tuple(given)
            for k in ("delay", "env"):
                if k in p:
                    _say(src, f"{at}.{k}: not used (trials are paced and given their environment by agentsproof)")
        else:
            pid, label = p, p
        if not isinstance(pid, str) or not pid.strip():
            raise _err(src, at, "must be a provider id (openai:gpt-4o) or {id, label, config}")
        if model is None and ":" in pid and not_model(pid) is None:
            model = pid.rsplit(":", 1)[1] or None
        out.append(Provider(str(label), pid, model, dict(cfg), at, prompts))
    labels = [e.label for e in out]
    dup = next((label for label in labels if labels.count(label) > 1), None)
    if dup is not None:
        raise _err(src, f"providers[{labels.index(dup, labels.index(dup) + 1)}]", f"{dup!r} is listed twice; give each a label")
    return out


def _vars(src: str, where: str, value: Any, path: Path) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _err(src, where, "must be a mapping of names to values")
    out: dict[str, Any] = {}
    for k, v in value.items():
        if isinstance(v, str) and v.startswith("file://"):  # a file's text; a glob: one case per file
            refs = expand_refs(src, f"{where}.{k}", v, path)
            v = [_read(src, f"{where}.{k}", r, path) for r in refs] if refs != [v] else _read(src, f"{where}.{k}", v, path)
        out[str(k)] = v
    return out


MAX_COMBOS = 1000
"""Cases one promptfoo test may expand into (its list vars' values multiplied)."""


def _combos(src: str, where: str, variables: dict[str, Any]) -> list[dict[str, Any]]:
    """promptfoo's expansion: a var whose value is a list gives one case per value (several: every combination)."""
    import itertools

    # an array of objects (a chat history) stays one value, as in promptfoo
    lists = {k: v for k, v in variables.items() if isinstance(v, list) and not any(isinstance(x, dict | list) for x in v)}
    for k, v in lists.items():
        if not v:
            raise _err(src, f"{where}.{k}", "is an empty list: no case to run")
    count = 1
    for v in lists.values():
        count *= len(v)
    if count > MAX_COMBOS:
        raise _err(src, where, f"its list vars make {count} cases (at most {MAX_COMBOS})")
    names = list(lists)
    return [{**variables, **dict(zip(names, values, strict=True))} for values in itertools.product(*(lists[n] for n in names))]


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text.strip()).strip("-").lower()
    return s[:60] or "test"


def to_eval_yaml(path: Path) -> tuple[dict[str, Any], list[tuple[str, str | None]]]:
    """The config as an EVAL.yaml mapping (one test per prompt × test), and its providers (label, model)."""
    suite, entries = _to_eval_yaml(path)
    return suite, [(e.label, e.model) for e in entries]


class Context:
    """What a test of the config carries besides its EVAL.yaml form: its vars, which prompt it renders, and its output transform."""

    def __init__(self, variables: dict[str, Any], prompt: int, transform: Any, threshold: float | None):
        self.vars, self.prompt, self.transform, self.threshold = variables, prompt, transform, threshold


def _to_eval_yaml(path: Path, contexts: list[Context] | None = None, prompt_list: list[Prompt] | None = None) -> tuple[dict[str, Any], list[Provider]]:
    """The config as an EVAL.yaml mapping and its providers; ``contexts`` gets each test's :class:`Context` (its
    vars: a python/javascript assertion's), ``prompt_list`` the prompts."""
    from agentsproof.core.inputs import display
    from agentsproof.core.validation import read_yaml
    from agentsproof.formats.agentevals.parse import render, render_entry
    from agentsproof.formats.promptfoo_transform import transform_vars

    src = display(path)
    data = _yaml12(path, read_yaml(path))
    if not isinstance(data, dict):
        raise _err(src, None, "expected a YAML mapping at the top level")
    _unknown(src, "", data, SUITE_KEYS | IGNORED_KEYS | set(NOTED_KEYS))
    for key in sorted(IGNORED_KEYS & set(data)):
        if key != "$schema":
            _say(src, f"{key}: not used by agentsproof (trials, timeouts and outputs are command-line options)")
    for key in sorted(set(NOTED_KEYS) & set(data)):
        _say(src, f"{key}: read, not used: {NOTED_KEYS[key]}")
    prompts = _prompt_list(src, data, path)
    if prompt_list is not None:
        prompt_list.extend(prompts)
    templates = _templates(src, data)
    providers = _provider_entries(src, data, path)
    default = data.get("defaultTest") or {}
    if isinstance(default, str) and default.startswith("file://"):
        default = read_yaml(file_ref(src, "defaultTest", default, path))
    if not isinstance(default, dict):
        raise _err(src, "defaultTest", "must be a mapping (vars, assert) or file://PATH")
    _unknown(src, "defaultTest", default, TEST_KEYS - {"description"})
    base_vars = _vars(src, "defaultTest.vars", default.get("vars"), path)
    base_asserts = default.get("assert") or []
    base_options = _options(src, "defaultTest", default)
    base_threshold = _threshold(src, "defaultTest", default)
    if not isinstance(base_asserts, list):
        raise _err(src, "defaultTest.assert", "must be a list")
    raw_tests = data.get("tests")
    if raw_tests is None and not data.get("scenarios"):
        raise _err(src, "tests", "required field is missing")
    tests_in = [(f"tests[{i}]", t) for i, t in enumerate(tests_from(src, "tests", raw_tests, path) if raw_tests is not None else [])]
    tests_in += _scenarios(src, data.get("scenarios"), path)
    if not tests_in:
        raise _err(src, "tests", "is empty; give at least one test")
    out_tests: list[dict[str, Any]] = []
    seen: set[str] = set()
    for ti, (at, t) in enumerate(tests_in):
        if not isinstance(t, dict):
            raise _err(src, at, "must be a mapping (description, vars, assert)")
        _unknown(src, at, t, TEST_KEYS)
        options = {**base_options, **_options(src, at, t)}
        judge = options.get("provider")
        threshold = _threshold(src, at, t)
        threshold = base_threshold if threshold is None else threshold
        own = t.get("assert") or []
        if not isinstance(own, list):
            raise _err(src, f"{at}.assert", "must be a list")
        desc = t.get("description")
        base_name = _slug(desc) if isinstance(desc, str) and desc.strip() else f"test-{ti + 1}"
        entries = [(f"defaultTest.assert[{i}]", a) for i, a in enumerate(base_asserts)] + [(f"{at}.assert[{i}]", a) for i, a in enumerate(own)]
        merged = {**base_vars, **_vars(src, f"{at}.vars", t.get("vars"), path)}
        combos = [merged] if options.get("disableVarExpansion") else _combos(src, f"{at}.vars", merged)
        for ci, variables in enumerate(combos):  # promptfoo: a list var is one case per value
            if options.get("transformVars") is not None:
                where = f"{at}.options.transformVars" if "transformVars" in (t.get("options") or {}) else "defaultTest.options.transformVars"
                variables = transform_vars(src, where, options["transformVars"], variables, path)
            name = base_name if len(combos) == 1 else f"{base_name}-{ci + 1}"
            asserts = [
                render_entry(src, where, _check_type(src, where, _with_judge(_deref(src, where, a, templates), judge)), variables) for where, a in entries
            ]
            for pi, prompt in enumerate(prompts):
                if prompt.text.startswith(PROMPT_FUNCTION):
                    first = providers[0].pid if providers else "configured-model"
                    text = _call_prompt(src, f"prompts[{pi}]", prompt.text, variables, first, path)
                elif _is_nunjucks(prompt.text):
                    text = _nunjucks(src, f"prompts[{pi}]", prompt.text, variables)
                else:
                    text = render(src, f"prompts[{pi}]", prompt.text, variables)
                text = str(options.get("prefix") or "") + text + str(options.get("suffix") or "")
                tid = name if len(prompts) == 1 else f"{_slug(prompt.label)}.{name}"
                while tid in seen:
                    tid += "-2"
                seen.add(tid)
                test: dict[str, Any] = {"id": tid, "input": _input(src, f"prompts[{pi}]", text)}
                if isinstance(desc, str) and desc.strip():
                    test["description"] = desc
                if asserts:
                    test["assert"] = copy.deepcopy(asserts)
                elif "expected_output" not in variables:  # promptfoo: a test without assertions passes; its outputs are shown
                    test["assert"] = []
                if "expected_output" in variables:
                    test["expected_output"] = str(variables["expected_output"])
                out_tests.append(test)
                if contexts is not None:
                    contexts.append(Context(variables, pi, options.get("transform"), threshold))
    suite: dict[str, Any] = {"name": path.resolve().parent.name or "promptfoo"}
    if isinstance(data.get("description"), str):
        suite["description"] = data["description"]
    suite["tests"] = out_tests
    return suite, providers


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


def _threshold(src: str, where: str, test: dict) -> float | None:
    """A test's ``threshold``: the pass mark of its weighted score (promptfoo's), 0 to 1."""
    value = test.get("threshold")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise _err(src, f"{where}.threshold", "must be a number from 0 to 1 (the score the test passes from)")
    return float(value)


def _scenarios(src: str, value: Any, path: Path) -> list[tuple[str, Any]]:
    """promptfoo's ``scenarios``: every ``config`` entry (vars) crossed with every test of the scenario."""
    if value is None:
        return []
    items = list_or_file(src, "scenarios", value, path)
    out: list[tuple[str, Any]] = []
    for si, sc in enumerate(items):
        at = f"scenarios[{si}]"
        if not isinstance(sc, dict):
            raise _err(src, at, "must be a mapping (description, config, tests)")
        _unknown(src, at, sc, {"description", "config", "tests"})
        configs = list_or_file(src, f"{at}.config", sc.get("config") or [{}], path)
        tests = tests_from(src, f"{at}.tests", sc.get("tests") or [], path)
        if not tests:
            raise _err(src, f"{at}.tests", "is empty; give at least one test")
        for ci, cfg in enumerate(configs):
            if not isinstance(cfg, dict):
                raise _err(src, f"{at}.config[{ci}]", "must be a mapping (vars, assert …)")
            for ti, t in enumerate(tests):
                if not isinstance(t, dict):
                    raise _err(src, f"{at}.tests[{ti}]", "must be a mapping (description, vars, assert)")
                merged = {**cfg, **t, "vars": {**(cfg.get("vars") or {}), **(t.get("vars") or {})}}
                merged["assert"] = list(cfg.get("assert") or []) + list(t.get("assert") or [])
                if not merged["vars"]:
                    merged.pop("vars")
                out.append((f"{at}.config[{ci}] × tests[{ti}]", merged))
    return out


def _input(src: str, where: str, text: str) -> Any:
    """A chat-format prompt (a JSON list of role/content messages) stays messages."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            msgs = json.loads(stripped)
        except ValueError:
            return text
        if isinstance(msgs, list) and all(isinstance(m, dict) and "role" in m for m in msgs):
            return msgs
    return text


TEXT_TYPES = {"contains", "icontains", "contains-any", "icontains-any", "contains-all", "icontains-all", "starts-with", "equals", "ends-with"}


def _text_values(entry: Any) -> Any:
    """promptfoo compares a number in a text check as its text (``contains: 24.01``, ``contains-any: [-3.625]``)."""
    if not isinstance(entry, dict) or str(entry.get("type", "")).removeprefix("not-") not in TEXT_TYPES:
        return entry
    value = entry.get("value")
    if value == "" and entry.get("type") in ("equals", "not-equals"):  # promptfoo: output === '' (or not)
        rest = {k: v for k, v in entry.items() if k not in ("type", "value")}
        return {**rest, "type": "not-empty"} if entry["type"] == "not-equals" else {**rest, "type": "not-not-empty"}

    def text(v: Any) -> Any:
        return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v

    if isinstance(value, list):
        return {**entry, "value": [text(v) for v in value]}
    return {**entry, "value": text(value)} if "value" in entry else entry


_JS_CHECKS = {
    # an assertion's own transform: the check on the transformed output's text, in JavaScript (as promptfoo runs it)
    "contains": "s.includes(String(v))",
    "icontains": "s.toLowerCase().includes(String(v).toLowerCase())",
    "contains-any": "v.some((x) => s.includes(String(x)))",
    "icontains-any": "v.some((x) => s.toLowerCase().includes(String(x).toLowerCase()))",
    "contains-all": "v.every((x) => s.includes(String(x)))",
    "icontains-all": "v.every((x) => s.toLowerCase().includes(String(x).toLowerCase()))",
    "starts-with": "s.startsWith(String(v))",
    "equals": "s.trim() === String(v).trim()",
    "regex": "new RegExp(String(v)).test(s)",
    "is-json": "(() => { try { JSON.parse(s); return true; } catch (e) { return false; } })()",
}


def _own_transform(src: str, where: str, entry: Any) -> Any:
    """promptfoo's ``transform`` on one assertion: that assertion as a javascript one that transforms the output first."""
    if not isinstance(entry, dict) or "transform" not in entry:
        return entry
    kind = str(entry.get("type", ""))
    base = kind.removeprefix("not-")
    code = entry["transform"]
    if not isinstance(code, str) or not code.strip() or code.strip().startswith("file://"):
        raise _err(src, f"{where}.transform", "must be JavaScript code (an expression or a function body) on output")
    if base not in _JS_CHECKS:
        raise _err(src, f"{where}.transform", f"an assertion's own transform is run for {', '.join(sorted(_JS_CHECKS))} (not {kind!r})")
    body = code if "\n" in code.strip() or code.strip().startswith("return") else f"return ({code.strip()});"
    check = _JS_CHECKS[base]
    if kind.startswith("not-"):
        check = f"!({check})"
    js = (
        f"const o = ((output, context) => {{ {body} }})(output, context);\n"
        "const s = typeof o === 'string' ? o : JSON.stringify(o);\n"
        f"const v = {json.dumps(entry.get('value'))};\n"
        f"return {check};"
    )
    out = {k: v for k, v in entry.items() if k not in ("transform", "value", "type")}
    return {**out, "type": "javascript", "value": js}


def _check_type(src: str, where: str, entry: Any) -> Any:
    from agentsproof.formats.agentevals.asserts import EXTRA, supported
    from agentsproof.formats.agentevals.negation import REFUSED
    from agentsproof.formats.agentevals.trajectory import rewrite

    entry = _own_transform(src, where, _text_values(rewrite(src, where, entry)))  # trajectory:* as tool-calls
    if isinstance(entry, dict):
        kind = entry.get("type")
        if kind in ("assert-set", "not-assert-set"):  # its assertions, each checked (formats/agentevals/assert_set.py)
            inner = entry.get("assert")
            return {**entry, "assert": [_check_type(src, f"{where}.assert[{i}]", a) for i, a in enumerate(inner)]} if isinstance(inner, list) else entry
        if isinstance(kind, str) and not supported(kind):
            reason = REFUSED.get(kind.replace("_", "-").removeprefix("not-"))
            if reason is not None:
                raise _err(src, f"{where}.type", f"promptfoo assertion {kind!r} is not graded by agentsproof: {reason}")
            types = sorted([*(k for k in EXTRA if k not in ("files", "tool-calls", "skill-trigger")), "assert-set"])
            raise _err(src, f"{where}.type", f"promptfoo assertion {kind!r} is not graded by agentsproof; supported: {', '.join(types)} (and not-<type>)")
    return entry


class PromptfooConfig:
    """The promptfooconfig.yaml format: one item per (prompt, test), through the EVAL.yaml engine."""

    name = "promptfoo"

    def detect(self, path: Path) -> bool:
        """A file named ``promptfooconfig.yaml`` (or ``.yml``, or a variant: :func:`is_config_name`)."""
        return is_config_name(path.name)

    def discoverable(self, path: Path) -> bool:
        """A promptfoo config (:func:`is_config_name`): ``eval-all`` runs it single-armed, as ``eval`` does without ``--skill``."""
        return is_config_name(path.name)

    def load(self, path: Path, request: ItemRequest) -> Loaded:
        """The config's cases as items, on ``--skill`` when given (else single-armed); with several providers, every case once per provider."""

        from agentsproof.core.inputs import display
        from agentsproof.formats.agentevals.asserts import build_graders
        from agentsproof.formats.agentevals.items import LoadedSuite, find_skill, label_checks, skill_name, suite_items
        from agentsproof.formats.agentevals.parse import parse_suite

        src = display(path)
        contexts: list[Context] = []
        prompt_list: list[Prompt] = []
        data, providers = _to_eval_yaml(Path(path), contexts, prompt_list)
        suite = parse_suite(data, Path(path))
        for test, ctx in zip(suite.tests, contexts, strict=True):
            test.vars = ctx.vars
            test.output_json = ctx.transform is not None
        skill = find_skill(Path(path), request.skill) if request.skill is not None else None
        loaded = LoadedSuite(suite=suite, skill=skill)
        for i, test in enumerate(suite.tests):
            loaded.graders[test.id] = build_graders(src, Path(path), test, skill_name(skill), f"tests[{i}]")
        trials, timeout = request.case_trials(), request.case_timeout()
        prefix = loaded.name + "/" if request.in_plugin else ""
        items = suite_items(
            loaded, trials=trials, threshold=request.threshold, timeout=timeout, target=request.target, targets_file=request.targets_file, prefix=prefix
        )
        items = [_own(src, Path(path), it, ctx, request.threshold) for it, ctx in zip(items, contexts, strict=True)]
        if request.target is not None and providers:
            _say(src, f"providers are not used: every case runs on --target {request.target}")
        elif providers:
            items = _on_providers(src, Path(path), items, contexts, providers, prompt_list)
        settings = {"trials": trials, "threshold": items[0].threshold, "timeout": timeout, "eval_yaml": src}

        def after(run: RunResult) -> None:
            """Check labels by test; a provider's copy of a case (``<id>@<provider>``) has the case's."""
            for item in run.items:
                own = item.id
                item.id = own.split("@", 1)[0]
                try:
                    label_checks(loaded, _One(item), prefix=prefix)
                finally:
                    item.id = own

        return Loaded(
            self.name, Path(path), items, loaded.name, settings=settings, single_arm=skill is None, skill_path=skill[0] if skill else None, after=after
        )


def _own(src: str, path: Path, item: Any, ctx: Context, threshold: float | None) -> Any:
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


def _on_providers(src: str, path: Path, items: list[Any], contexts: list[Context], providers: list[Provider], prompts: list[Prompt]) -> list[Any]:
    """Every case on every provider that runs its prompt (``providers[].prompts``): a model through the configured
    provider on its model with its (and the prompt's) ``config`` sent; a program as a command target."""
    import dataclasses

    from agentsproof.formats.promptfoo_programs import http_target, is_http, is_program, program_target
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


class _One:
    def __init__(self, item: ItemResult):
        self.items = [item]


FORMAT = PromptfooConfig()
