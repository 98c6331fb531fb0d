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
A provider that is a program (``echo``, ``exec:``, ``file://x.py|js``) runs as a confined
command target and promptfoo's HTTP provider as an http target
(:mod:`agentsproof.formats.promptfoo_programs`), never sent as a model name; a model's
``config`` is sent in the request or refused by key (:mod:`agentsproof.formats.promptfoo_providers`);
a test with nothing to check runs and scores 1.0 (promptfoo: it passes). ``--skill FILE`` adds the
with/without arms (the skill as the system prompt); without it the run is single-armed.
Any assertion type may be negated with promptfoo's ``not-`` prefix (``not-regex``,
``not-starts-with`` …) where its negation is well defined; an assertion type agentsproof does
not grade (``moderation``, ``classifier`` …), or whose negation it cannot honour
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
from agentsproof.formats.promptfoo_checks import check_type as _check_type
from agentsproof.formats.promptfoo_programs import case_settings, on_providers
from agentsproof.formats.promptfoo_prompts import (
    PROMPT_FUNCTION,
    Prompt,
    _call_prompt,
    _is_nunjucks,
    _nunjucks,
    _prompt_list,
    _yaml12,
    read_ref,
)
from agentsproof.formats.promptfoo_prompts import PROMPT_KEYS as PROMPT_KEYS  # the prompt keys, listed with the others
from agentsproof.formats.promptfoo_providers import Provider, not_model
from agentsproof.formats.promptfoo_tests import expand_refs, file_ref, list_or_file, tests_from

if TYPE_CHECKING:
    from agentsproof.formats.lint.checks import FileView
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
OPTION_KEYS = {"provider", "transform", "transformVars", "prefix", "suffix", "disableVarExpansion", "runSerially", "rubricPrompt"}
REFUSED_KEYS = {
    # promptfoo keys agentsproof does not honour, each refused with its reason (never dropped)
    "redteam": "red-team generation is promptfoo's own; run the tests it generates",
    "extensions": "promptfoo's extension hooks are not run",
    "nunjucksFilters": "custom template filters are not run; give plain values in vars",
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


def _with_judge(entry: Any, judge: Any, rubric: Any = None) -> Any:
    from agentsproof.formats.agentevals.code import JUDGED_TYPES

    if rubric is not None and isinstance(entry, dict) and entry.get("type") == "llm-rubric" and "rubricPrompt" not in entry:
        entry = {**entry, "rubricPrompt": rubric}  # promptfoo: options.rubricPrompt is its llm-rubric's template
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
            v = [read_ref(src, f"{where}.{k}", r, path) for r in refs] if refs != [v] else read_ref(src, f"{where}.{k}", v, path)
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
                render_entry(src, where, _check_type(src, where, _with_judge(_deref(src, where, a, templates), judge, options.get("rubricPrompt"))), variables)
                for where, a in entries
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
        items = [case_settings(src, Path(path), it, ctx, request.threshold) for it, ctx in zip(items, contexts, strict=True)]
        if request.target is not None and providers:
            _say(src, f"providers are not used: every case runs on --target {request.target}")
        elif providers:
            items = on_providers(src, Path(path), items, contexts, providers, prompt_list)
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

    def lint_view(self, path: Path, src: str, loaded: Loaded | None = None) -> FileView:
        """``agentsproof lint``'s view of its cases (:mod:`agentsproof.formats.lint.views`)."""
        from agentsproof.formats.lint.views import CaseFields, cases_view

        return cases_view(loaded or self.load(path, ItemRequest()), src, CaseFields("tests", "assert", "input", by_name=True))


class _One:
    def __init__(self, item: ItemResult):
        self.items = [item]


FORMAT = PromptfooConfig()
