"""EVAL.yaml (AgentEvals) files, both dialects, checked strictly into one plain model.

agentv's current dialect::

    prompts: ["{{ input }}"]
    providers: [default]
    tests:
      - id: greets
        vars: {input: "Say hello", expected_output: "Hello!"}
        assert:
          - type: contains
            value: Hello
          - Response is friendly            # a plain string: a rubric criterion

The reference's dialect::

    name: my-skill
    execution: {target: default}
    assert: [...]                           # merged into every test
    tests:
      - id: basic
        criteria: Handles the basic task
        input: Do the thing                 # or messages with text and file parts
        expected_output: The result
        rubrics: [The output is complete]

Both may be mixed. agentv skips what it does not know; we name it: an unknown key, a
wrong type or an unsupported assertion is one error line naming the field. Templates
``{{ name }}`` are filled from the test's ``vars``. Assertions become graders in
:mod:`agentsproof.formats.agentevals.asserts`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.formats.agentevals.conversation import CONVERSATION_KEYS, history_prompt, lift
from agentsproof.formats.agentevals.template_env import MISSING, env_value, var_value

SUITE_KEYS = {
    "name",
    "description",
    "version",
    "tags",
    "prompts",
    "providers",
    "target",
    "execution",
    "assert",
    "assertions",
    "tests",
    "environment",
    "evaluate_options",
    "evalcases",
    "$schema",
    "governance",
    "default_test",
    "threshold",
    "workspace",
    "extensions",
    "dataset",  # agentv's older dialect: the suite's name
    "defaults",  # agentv: defaults.provider / defaults.grader (formats/agentevals/keys.py)
}
TEST_KEYS = {"id", "description", "criteria", "input", "expected_output", "rubrics", "assert", "assertions", "vars", "tags", "metadata"}
TEST_KEYS |= {"outcome", "expected_outcome", "input_messages", "expected_messages", "conversation_id", "execution"}  # agentv's older dialect
TEST_KEYS |= CONVERSATION_KEYS | {"options"}  # agentv's multi-turn tests (formats/agentevals/conversation.py); options.transform
MESSAGE_KEYS = {"role", "content"}
PART_KEYS = {"type", "value", "text", "path"}
ROLES = ("system", "user", "assistant")
_TEMPLATE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")


@dataclass
class EvalTest:
    """One test: a case for the runner."""

    id: str
    prompt: str
    """The user message (system messages of the input first, labelled)."""
    files: list[tuple[str, Path]] = field(default_factory=list)
    """Attached files: (path as written, resolved path)."""
    expected_output: str | None = None
    criteria: str | None = None
    asserts: list[tuple[str, Any]] = field(default_factory=list)
    """(field path, raw entry) for every assertion, the suite's first."""
    rubrics: list[tuple[str, Any]] = field(default_factory=list)
    """(field path, raw entry) of the reference's ``rubrics``."""
    tags: tuple[str, ...] = ()
    vars: dict[str, Any] = field(default_factory=dict)
    """The test's vars (its suite's default ones under them): a python/javascript assertion's ``context.vars``."""
    turns: tuple[str, ...] = ()
    """Follow-up user messages (agentv's ``turns`` after the first), sent in the same session."""
    output_json: bool = False
    """The answer is a transform's JSON (promptfoo's ``options.transform``): python/javascript assertions get it parsed."""
    rubric_prompt: str | None = None
    """agentv's ``default_test.options.rubric_prompt``: the judge prompt of the test's plain criteria."""
    notes: list[str] = field(default_factory=list)
    """What agentv reads in this test and agentsproof does not use (said once with the suite's notes)."""
    raw: dict[str, Any] = field(default_factory=dict)
    """Its ``input``, ``expected_output`` and ``metadata`` as written (agentv's script payload)."""
    transform: tuple[str, Any] | None = None
    """(field, spec) of agentv's output transform (the test's ``options.transform``, else default_test's): formats/agentevals/transform.py."""
    load_error: str | None = None
    """Why this test cannot run (a file it names is missing): its trials are errored with it."""


@dataclass
class EvalSuite:
    """An EVAL.yaml after parsing: its tests, target and what agentsproof reads of agentv's options."""

    path: Path
    name: str
    description: str | None
    target: str | None
    """``execution.target``, ``target`` or the one ``providers`` entry."""
    target_field: str | None
    tests: list[EvalTest]
    tags: tuple[str, ...] = ()
    workdir: Path | None = None
    """agentv's ``environment: {type: host, workdir: DIR}``: copied into every agent trial's workspace."""
    notes: list[str] = field(default_factory=list)
    """What agentv reads and agentsproof does not use, said once when the file runs."""
    repeat: int | None = None
    """``evaluate_options.repeat``: trials per arm unless --trials says otherwise."""
    threshold: float | None = None
    """``default_test.threshold``, else ``threshold``: a test's pass mark unless --threshold says otherwise."""
    tests_key: str = "tests"
    """Where the tests are: ``tests``, or ``evalcases`` in agentv's older dialect."""
    environment: Any = None
    """agentv's ``environment: {type: docker}``: the container every agent trial runs in (an Environment)."""
    setup: list[Any] = field(default_factory=list)
    """agentv's set-up commands (environment.setup, workspace hooks and repos, extensions):
    :class:`agentsproof.model.setup.SetupCommand`, run around every agent trial."""


def _err(src: str, where: str | None, message: str) -> InputError:
    return InputError(src, where, message)


def _unknown(src: str, where: str, data: dict, allowed: set[str]) -> None:
    extra = sorted(k for k in data if k not in allowed)
    if extra:
        at = f"{where}.{extra[0]}" if where else str(extra[0])
        raise _err(src, at, f"unknown key; expected one of {', '.join(sorted(allowed))}")


def _text(src: str, where: str, value: Any, *, empty_ok: bool = False) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _err(src, where, "must be a string")
    text = str(value)
    if not empty_ok and not text.strip():
        raise _err(src, where, "is empty")
    return text


def render(src: str, where: str, text: str, variables: dict[str, Any], depth: int = 0) -> str:
    """``{{ name }}`` (or ``{{ vars.name }}``) filled from the test's vars, ``{{ env.NAME }}`` from an allowed environment variable; an unknown name is an error."""

    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if name.startswith("env."):  # only an allowed, non-secret name (formats/agentevals/template_env.py)
            return env_value(src, where, name[4:])
        value = var_value(variables, name)
        if value is MISSING:
            raise _err(src, where, f"uses {{{{ {name} }}}} but the test has no var {name!r}")
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise _err(src, where, f"uses {{{{ {name} }}}}, which is not text (messages only fit a prompt that is exactly '{{{{ input }}}}')")
        if isinstance(value, str) and _TEMPLATE.search(value) and depth < 5:  # agentv: a var may use other vars
            return render(src, where, value, variables, depth + 1)
        return str(value)

    return _TEMPLATE.sub(one, text)


def _tags(src: str, where: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if isinstance(value, dict):  # agentv: tags: {experiment: with-skills}
        return tuple(f"{k}={v}" for k, v in value.items())
    raise _err(src, where, "must be a list of strings or a mapping")


def _messages(src: str, where: str, value: Any, path: Path, files: list[tuple[str, Path]], missing: list[str] | None = None) -> str:
    """A string, or role/content messages (content a string or text/file parts) → the prompt."""
    if isinstance(value, str):
        if not value.strip():
            raise _err(src, where, "is empty")
        return value
    if not isinstance(value, list) or not value:
        raise _err(src, where, "must be a string or a list of role/content messages")
    system: list[str] = []
    user: list[str] = []
    dialog: list[tuple[str, str]] = []  # (role, text) of a history with assistant turns
    for i, msg in enumerate(value):
        at = f"{where}[{i}]"
        if isinstance(msg, str):  # a bare string in the list: a user message
            user.append(msg)
            continue
        if not isinstance(msg, dict):
            raise _err(src, at, "must be a role/content message")
        _unknown(src, at, msg, MESSAGE_KEYS)
        role = msg.get("role")
        if role not in ROLES:
            raise _err(src, f"{at}.role", f"{role!r}: expected system, user or assistant")
        if role != "system" and (role == "assistant" or dialog):  # a history: the turns so far (user messages before it included)
            dialog = dialog or [("user", u) for u in user]
            dialog.append((role, _text(src, f"{at}.content", msg.get("content"))))
            continue
        content = msg.get("content")
        parts = [content] if isinstance(content, str) else content
        if not isinstance(parts, list) or not parts:
            raise _err(src, f"{at}.content", "must be a string or a list of text/file parts")
        for j, part in enumerate(parts):
            pat = f"{at}.content[{j}]" if not isinstance(content, str) else f"{at}.content"
            if isinstance(part, str):
                (system if role == "system" else user).append(part)
                continue
            if not isinstance(part, dict):
                raise _err(src, pat, "must be a text or file part")
            _unknown(src, pat, part, PART_KEYS)
            kind = part.get("type")
            if kind == "text":
                (system if role == "system" else user).append(_text(src, f"{pat}.value", part.get("value", part.get("text"))))
            elif kind == "file":
                rel = _text(src, f"{pat}.path", part.get("path", part.get("value")))
                try:
                    files.append((rel, attached(src, f"{pat}.path", rel, path)))
                except InputError as err:  # a missing file errors its test (issue 45), outside the project stays a refusal
                    if missing is None or "not found" not in err.message:
                        raise
                    missing.append(f"{err.field}: {err.message}")
            else:
                raise _err(src, f"{pat}.type", f"{kind!r}: expected 'text' or 'file'")
    if dialog and dialog[-1][0] != "user":
        raise _err(src, f"{where}[{len(value) - 1}]", "a conversation history ends with the user's message (the one the trial answers)")
    if not user and not files and not dialog and not missing:  # only a missing file: the test errors with it
        raise _err(src, where, "has no user message")
    text = history_prompt(dialog) if dialog else "\n\n".join(user)
    if system:
        text = "Instructions:\n" + "\n\n".join(system) + ("\n\n" + text if text else "")
    return text


def attached(src: str, where: str, rel: str, path: Path, *, judge_prompt: bool = False) -> Path:
    """A file an EVAL.yaml names (a file part, a grader's prompt), found as agentv finds it:
    relative to the file, then to each folder above it up to the project root, then the
    current folder; ``/x`` from those folders (agentv reads ``/plugins/x`` from the
    repository root). It may be anywhere in the project (:mod:`agentsproof.core.project`),
    never outside it. ``judge_prompt`` is kept for callers; every file follows one rule."""
    from agentsproof.core.project import resolve_ref

    target = resolve_ref(rel, path, where, search_up=True)
    if not target.is_file():
        raise _err(src, where, f"file {rel!r} not found")
    return target


def _expected(src: str, where: str, value: Any) -> str | None:
    import json

    if value is None:
        return None
    if isinstance(value, list):  # [{role: assistant, content: ...}]
        texts = []
        for i, msg in enumerate(value):
            content = msg.get("content") if isinstance(msg, dict) else None
            if content is None and isinstance(msg, dict) and isinstance(msg.get("tool_calls"), list):  # agentv: expected tool calls
                content = {"tool_calls": msg["tool_calls"]}
            if isinstance(content, (dict, list)):  # structured output (tool calls too): compared as its JSON text
                content = json.dumps(content, indent=2, ensure_ascii=False, default=str)
            if not isinstance(content, str):
                raise _err(src, f"{where}[{i}]", "must be an assistant message with text content (or tool_calls)")
            _unknown(src, f"{where}[{i}]", msg, MESSAGE_KEYS | {"tool_calls", "name"})  # name: the speaker's, not compared
            texts.append(content)
        return "\n\n".join(texts) if texts else None
    if isinstance(value, dict):  # a structured expected output: compared as its JSON text
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return _text(src, where, value)


def _list(src: str, where: str, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _err(src, where, "must be a list")
    return value


def parse_suite(data: Any, path: Path) -> EvalSuite:
    """The parsed suite (its ``tests`` file and ``environment`` resolved); InputError naming the field of the first problem."""
    from agentsproof.core.inputs import display
    from agentsproof.formats.agentevals.keys import default_name, repeat_value, suite_prompts, suite_target
    from agentsproof.formats.agentevals.older import suite_execution_asserts
    from agentsproof.formats.agentevals.suite_files import default_options, default_test, default_transform, environment_workdir, tests_list, threshold_value

    src = display(path)
    if not isinstance(data, dict):
        raise _err(src, None, "expected a YAML mapping at the top level")
    _unknown(src, "", data, SUITE_KEYS)
    if "assert" in data and "assertions" in data:
        raise _err(src, "assertions", "is the same as 'assert'; keep one")
    name_key = "name" if data.get("name") is not None or data.get("dataset") is None else "dataset"  # agentv's older dialect: dataset
    name = _text(src, name_key, data[name_key]) if data.get(name_key) is not None else None
    if name is not None:
        from agentsproof.core.safepath import check_name

        check_name(name, src, name_key)
    desc = _text(src, "description", data["description"], empty_ok=True) if data.get("description") is not None else None
    notes: list[str] = []
    target, target_field = suite_target(src, data, notes)
    prompts = suite_prompts(src, data.get("prompts"), path, lambda where, v: _messages(src, where, v, path, []))  # each test runs per prompt
    suite_key = "assertions" if "assertions" in data else "assert"
    suite_asserts = [(f"{suite_key}[{i}]", a) for i, a in enumerate(_list(src, suite_key, data.get(suite_key)))]
    default_vars, default_asserts, default_threshold, default_map = default_test(src, data.get("default_test"), path)
    rubric_prompt, option_notes = default_options(src, default_map)
    suite_asserts += default_asserts
    suite_asserts += suite_execution_asserts(src, data.get("execution"))  # agentv's root execution.assert / older evaluators
    threshold = threshold_value(src, "threshold", data["threshold"]) if data.get("threshold") is not None else None
    if "tests" in data and "evalcases" in data:
        raise _err(src, "evalcases", "is agentv's older name for 'tests'; keep one")
    key = "evalcases" if "evalcases" in data else "tests"
    raw_tests = data.get(key)
    if raw_tests is None:
        raise _err(src, "tests", "required field is missing")
    raw_tests = tests_list(src, raw_tests, path)  # a file, or a list with file:// entries
    if not isinstance(raw_tests, list) or not raw_tests:
        raise _err(src, key, "must be a non-empty list of tests")
    tests: list[EvalTest] = []
    seen: dict[str, int] = {}
    threads: set[str] = set()
    for i, raw in enumerate(raw_tests):
        per_prompt: list[tuple[str, str | None]] = list(prompts) or [("", None)]
        for label, prompt in per_prompt:
            test = _parse_test(src, f"{key}[{i}]", raw, path, prompt, suite_asserts, target, threads, default_vars)
            test.id += f"@{label}" if len(prompts) > 1 else ""  # agentv: every test per prompt
            if test.id in seen:
                raise _err(src, f"{key}[{i}].id", f"{test.id!r} is also the id of {key}[{seen[test.id]}]; ids must be unique")
            seen[test.id] = i
            test.rubric_prompt = rubric_prompt
            test.transform = test.transform or default_transform(default_map)
            tests.append(test)
    tags = _tags(src, "tags", data["tags"]) if data.get("tags") is not None else ()
    options = data.get("evaluate_options")
    if options is not None and not isinstance(options, dict):
        raise _err(src, "evaluate_options", "must be a mapping")
    repeat = repeat_value(src, (options or {}).get("repeat"), notes)
    rest = sorted(set(options or {}) - {"repeat"})
    notes += [f"evaluate_options.{', '.join(rest)}: not used by agentsproof (see --parallel, --max-cost)"] if rest else []
    governance = data.get("governance")
    if governance is not None:
        if not isinstance(governance, dict):
            raise _err(src, "governance", "must be a mapping (agentv's risk metadata: owasp_llm_top_10_2025, mitre_atlas, controls, risk_tier, owner)")
        notes.append("governance: agentv's risk metadata, passed through to its results; agentsproof does not grade or report it")
    notes += option_notes
    for test in tests:
        notes += [n for n in test.notes if n not in notes]
    from agentsproof.formats.agentevals.setup import suite_setup

    prepared = suite_setup(src, data, path)  # agentv's set-up: formats/agentevals/setup.py
    if threads:
        notes.append(f"conversation_id ({', '.join(sorted(threads))}): agentv's thread grouping; each test runs as its own single turn")
    return EvalSuite(
        path=path,
        name=name or default_name(path),
        description=desc,
        target=target,
        target_field=target_field,
        tests=tests,
        tags=tags,
        workdir=environment_workdir(src, data.get("environment"), path) or prepared.template,
        notes=notes + prepared.notes,
        setup=prepared.commands,
        environment=prepared.environment,
        repeat=repeat,
        tests_key=key,
        threshold=default_threshold if default_threshold is not None else threshold,  # agentv: default_test's wins
    )


def _parse_test(
    src: str,
    at: str,
    raw: Any,
    path: Path,
    prompt: str | None,
    suite_asserts: list[tuple[str, Any]],
    target: str | None = None,
    threads: set[str] | None = None,
    default_vars: dict[str, Any] | None = None,
) -> EvalTest:
    if not isinstance(raw, dict):
        raise _err(src, at, "must be a mapping with an id")
    raw, follow, scoped = lift(src, at, raw)
    _unknown(src, at, raw, TEST_KEYS)
    from agentsproof.formats.agentevals.older import EXTRA_ASSERTS, SKIP_DEFAULTS, older_test
    from agentsproof.formats.agentevals.suite_files import test_transform

    notes: list[str] = []
    raw = older_test(src, at, raw, target, threads if threads is not None else set(), notes)
    skip_defaults, execution_own = raw.pop(SKIP_DEFAULTS, False), raw.pop(EXTRA_ASSERTS, [])
    tid = raw.get("id")
    if isinstance(tid, int) and not isinstance(tid, bool):
        tid = str(tid)
    if not isinstance(tid, str) or not tid.strip():
        raise _err(src, f"{at}.id", "is missing or empty")
    if "assert" in raw and "assertions" in raw:
        raise _err(src, f"{at}.assertions", "is the same as 'assert'; keep one")
    variables = raw.get("vars") or {}
    if not isinstance(variables, dict):
        raise _err(src, f"{at}.vars", "must be a mapping of names to values")
    variables = {**(default_vars or {}), **variables}
    files: list[tuple[str, Path]] = []
    missing: list[str] = []
    for key in ("input", "expected_output", "criteria"):
        if key in raw and key in variables:
            raise _err(src, f"{at}.vars.{key}", f"is also given as {at}.{key}; keep one")
    plain = prompt is None or _is_input_only(prompt)
    if "input" in raw:
        if not plain:
            raise _err(src, f"{at}.input", "the suite's prompt is a template; give the test's input as vars")
        text = render(src, f"{at}.input", _messages(src, f"{at}.input", raw["input"], path, files, missing), variables)
    elif plain and "input" in variables:
        # agentv: a prompt that is exactly '{{ input }}' takes the var's value as it is (not rendered
        # again: '{{ config.SECRET_KEY }}' is text the model is shown); {{ env.X }} was filled as the file loaded
        text = _messages(src, f"{at}.vars.input", variables["input"], path, files, missing)
        text = _TEMPLATE.sub(lambda m: env_value(src, f"{at}.vars.input", m.group(1)[4:]) if m.group(1).startswith("env.") else m.group(0), text)
    elif not plain:
        text = render(src, "prompts[0]", prompt or "", variables)
        if not text.strip():
            raise _err(src, "prompts[0]", f"is empty for {at}")
    else:
        raise _err(src, f"{at}.input", "required field is missing (or vars.input with prompts: ['{{ input }}'])")
    expected = _expected(src, f"{at}.expected_output", raw.get("expected_output", variables.get("expected_output")))
    if expected is not None:
        expected = render(src, f"{at}.expected_output", expected, variables)
    criteria_raw = raw.get("criteria", variables.get("criteria"))
    criteria = render(src, f"{at}.criteria", _text(src, f"{at}.criteria", criteria_raw), variables) if criteria_raw is not None else None
    key = "assertions" if "assertions" in raw else "assert"
    own = [(f"{at}.{key}[{i}]", render_entry(src, f"{at}.{key}[{i}]", a, variables)) for i, a in enumerate(_list(src, f"{at}.{key}", raw.get(key)))]
    own += [(where, render_entry(src, where, a, variables)) for where, a in scoped]  # agentv's turns' assertions
    own += [(where, render_entry(src, where, a, variables)) for where, a in execution_own]  # execution.assert / evaluators
    rubrics = [
        (f"{at}.rubrics[{i}]", render(src, f"{at}.rubrics[{i}]", r, variables) if isinstance(r, str) else r)
        for i, r in enumerate(_list(src, f"{at}.rubrics", raw.get("rubrics")))
    ]
    tags = _tags(src, f"{at}.tags", raw["tags"]) if raw.get("tags") is not None else ()
    suite = [] if skip_defaults else [(where, render_entry(src, where, a, variables)) for where, a in suite_asserts]  # agentv: skip_defaults
    return EvalTest(
        id=tid,
        prompt=text,
        files=files,
        expected_output=expected,
        criteria=criteria,
        asserts=suite + own,
        rubrics=rubrics,
        tags=tags,
        vars=variables,
        turns=tuple(render(src, f"{at}.turns[{n}].input", t, variables) for n, t in enumerate(follow, start=1)),
        notes=notes,
        raw={k: raw.get(k, variables.get(k)) for k in ("input", "expected_output", "metadata")},
        load_error="; ".join(missing) or None,
        transform=test_transform(src, f"{at}.options", raw.get("options"), notes),
    )


def _is_input_only(prompt: str) -> bool:
    m = _TEMPLATE.fullmatch(prompt.strip())
    return m is not None and m.group(1) == "input"


def render_entry(src: str, where: str, entry: Any, variables: dict[str, Any]) -> Any:
    """Templates in an assertion's strings (a plain criterion, ``value``), filled per test."""
    if isinstance(entry, str):
        return render(src, where, entry, variables)
    if isinstance(entry, dict):
        out = dict(entry)
        value = out.get("value")
        if isinstance(value, str):
            out["value"] = render(src, f"{where}.value", value, variables)
        elif isinstance(value, list):
            out["value"] = [render(src, f"{where}.value[{i}]", v, variables) if isinstance(v, str) else v for i, v in enumerate(value)]
        if out.get("type") == "assert-set" and isinstance(out.get("assert"), list):  # promptfoo's group: its assertions too
            out["assert"] = [render_entry(src, f"{where}.assert[{i}]", a, variables) for i, a in enumerate(out["assert"])]
        return out
    return entry


def looks_like_eval_yaml(data: Any) -> bool:
    """An EVAL.yaml has ``tests`` (``evalcases`` in agentv's older dialect); an eval.yaml has ``skill`` or ``agent`` and a task."""
    return isinstance(data, dict) and ("tests" in data or "evalcases" in data) and "skill" not in data and "agent" not in data
