"""microsoft/waza's ``eval.yaml``: a skill's tasks and graders, run as waza runs them.

::

    name: code-explainer-eval
    skill: code-explainer                 # the SKILL.md beside the file (or skills/<name>/, above)
    config: {trials_per_task: 3, timeout_seconds: 300, executor: mock, model: ...}
    graders:                              # applied to every task
      - {type: text, name: no_errors, config: {regex_not_match: ["(?i)fatal error"]}}
    tasks: ["tasks/*.yaml"]               # task files (globs), or tasks written inline

A task (``id``, ``name``, ``inputs: {prompt, files: [{path} | {content}]}``, ``graders``;
waza's first releases wrote ``prompt`` and ``validators`` on the task itself) is one case;
``inputs.files`` are read from the fixtures folder (``fixtures/`` beside the eval, waza's
``--context-dir`` default). Graders map onto agentsproof's (waza ``internal/graders``):

| waza grader | runs as |
|---|---|
| ``text`` (``contains``/``not_contains`` any case, ``*_cs`` exact, ``regex_match``/``regex_not_match``) | ``icontains`` / ``not-icontains`` / ``contains`` / ``not-contains`` / ``regex`` / ``not-regex`` checks |
| ``code`` (python or javascript ``assertions`` over ``output``) | one ``python``/``javascript`` assertion that passes when every expression holds |
| ``prompt`` / ``llm`` (``prompt`` or ``rubric``: the judge's instructions) | ``llm-rubric`` |
| ``file`` (``must_exist``, ``must_not_exist``, ``content_patterns``) | a script in the trial's workspace, scored by the share of checks that pass |
| ``program`` (``command``, ``args``) | a ``script`` grader (``$WAZA_WORKSPACE_DIR`` is the workspace) |
| ``behavior`` (``max_tool_calls``, ``max_tokens``, ``max_duration_ms``, ``required_tools``, ``forbidden_tools``) | ``execution-metrics`` and ``trajectory:tool-used`` (agent trials) |
| ``action_sequence`` (``expected_actions``, ``matching_mode``) | ``trajectory:tool-sequence`` (agent trials) |
| ``json_schema`` (``schema``, ``schema_file``) | a script that validates the answer's JSON against the schema |

``skill_invocation`` (the order in which an orchestration skill calls other skills), ``diff``,
``tool_constraint`` with argument patterns, ``human`` and ``llm_comparison`` error their task
with the reason (the other tasks run). ``metrics``, ``expected`` (waza's runner does not grade
it), ``config.executor``/``model``/``parallel``/... are read with a note.
"""

from __future__ import annotations

import glob as globmod
import json
import os
import re
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.formats.translated import (
    TranslatedFormat,
    Translation,
    as_list,
    as_map,
    find_skill_md,
    load_yaml_mapping,
    read_skill,
)

TOP_KEYS = {
    "name",
    "description",
    "skill",
    "version",
    "config",
    "graders",
    "tasks",
    "tasks_from",
    "metrics",
    "inputs",
    "hooks",
    "baseline",
    "range",
    "executor",
    "model",
}
CONFIG_NOTED = {
    "parallel": "tasks run as --parallel says",
    "workers": "tasks run as --parallel says",
    "max_workers": "tasks run as --parallel says",
    "executor": "agentsproof runs the model (or --target), never waza's mock executor",
    "model": "the model is --model / AGENTSPROOF_MODEL",
    "judge_model": "the judge is --judge-model",
    "max_attempts": "errored trials are retried with --retry-errors",
    "group_by": "reports group by task",
    "fail_fast": "see --abort-after",
    "skill_directories": "the skill is found beside the eval (or skills/<name>/ above it)",
    "required_skills": "the skill under test is the one installed",
    "mcp_servers": "MCP servers are the agent target's own configuration",
}
TASK_KEYS = {"id", "name", "description", "tags", "inputs", "expected", "graders", "validators", "prompt", "enabled", "context_dir", "timeout_seconds"}
GRADER_TYPES = ("text", "code", "inline_script", "prompt", "llm", "file", "program", "behavior", "action_sequence", "json_schema")
ERRORED_TYPES = {
    "skill_invocation": "checks the order in which an orchestration skill calls other skills; agentsproof records whether the skill under test loaded, not a sequence across skills",
    "diff": "compares workspace files with snapshots; not implemented yet",
    "tool_constraint": "matches tool arguments by pattern; not implemented yet",
    "human": "needs a person to grade; no offline run can",
    "human_calibration": "needs a person to grade; no offline run can",
    "llm_comparison": "compares two runs' outputs; run compare on two reports instead",
}
CONFIG_KEYS = {
    "text": {"contains", "not_contains", "contains_cs", "not_contains_cs", "regex_match", "regex_not_match", "pattern", "keywords", "must_include_all"},
    "code": {"assertions", "language"},
    "inline_script": {"assertions", "language"},
    "prompt": {"prompt", "rubric", "model", "continue_session"},
    "llm": {"prompt", "rubric", "model", "continue_session"},
    "file": {"must_exist", "must_not_exist", "content_patterns"},
    "program": {"command", "args", "timeout"},
    "behavior": {"max_tool_calls", "max_tokens", "max_duration_ms", "required_tools", "forbidden_tools", "max_iterations"},
    "action_sequence": {"expected_actions", "matching_mode"},
    "json_schema": {"schema", "schema_file"},
}
"""The config keys each grader reads (waza ``internal/graders``); any other is named in a note."""
MODES = {
    "exact_match": "exact",
    "exact": "exact",
    "in_order_match": "in_order",
    "in_order": "in_order",
    "any_order_match": "any_order",
    "any_order": "any_order",
}

CODE_PY = """\
checks = {checks}
outcome, transcript, tool_calls, errors, duration_ms = {{}}, [], [], [], 0
failed = []
for expr in checks:
    try:
        ok = bool(eval(expr, {{"output": output, "outcome": outcome, "transcript": transcript, "tool_calls": tool_calls, "errors": errors, "duration_ms": duration_ms, "re": re, "json": json, "len": len}}))
    except Exception as err:
        ok = False
        expr = expr + " (" + type(err).__name__ + ": " + str(err) + ")"
    if not ok:
        failed.append(expr)
return {{"pass": not failed, "score": 1 - len(failed) / len(checks), "reason": "; ".join(failed) or "all assertions passed"}}"""

FILE_CHECK = r"""
import json, os, re, sys
cfg = json.loads(sys.argv[1])
checks = []
for p in cfg.get("must_exist") or []:
    checks.append((os.path.exists(p), f"{p} exists"))
for p in cfg.get("must_not_exist") or []:
    checks.append((not os.path.exists(p), f"{p} does not exist"))
for spec in cfg.get("content_patterns") or []:
    path = spec.get("path", "")
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        text = None
    for pat in spec.get("must_match") or []:
        checks.append((text is not None and re.search(pat, text) is not None, f"{path} matches {pat}"))
    for pat in spec.get("must_not_match") or []:
        checks.append((text is not None and re.search(pat, text) is None, f"{path} does not match {pat}"))
passed = sum(ok for ok, _ in checks)
score = passed / len(checks) if checks else 1.0
print(json.dumps({"score": score, "details": f"{passed}/{len(checks)} file checks passed", "checks": [{"name": n, "passed": ok} for ok, n in checks]}))
"""

SCHEMA_CHECK = r"""
import json, re, sys
schema = json.loads(sys.argv[1])
text = sys.stdin.read()
m = re.search(r"```(?:json)?\s*([\s\S]*?)```", text)
try:
    data = json.loads(m.group(1) if m else text)
except ValueError as err:
    print(json.dumps({"score": 0, "details": f"the answer is not JSON: {err}"})); sys.exit(0)
try:
    import jsonschema
except ImportError:
    jsonschema = None
if jsonschema is not None:
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(data)]
else:
    errors = []
    def check(s, v, at):
        t = s.get("type")
        kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
        if t in kinds and not isinstance(v, kinds[t]) or t in ("number", "integer") and (isinstance(v, bool) or not isinstance(v, (int, float)) or t == "integer" and not float(v).is_integer()):
            errors.append(f"{at or 'the answer'} is not of type {t}"); return
        if isinstance(v, dict):
            for k in s.get("required", []):
                if k not in v: errors.append(f"{at or 'the answer'} has no {k!r}")
            for k, sub in (s.get("properties") or {}).items():
                if k in v: check(sub, v[k], f"{at}.{k}" if at else k)
        if isinstance(v, list) and isinstance(s.get("items"), dict):
            for i, x in enumerate(v): check(s["items"], x, f"{at}[{i}]")
        if "enum" in s and v not in s["enum"]: errors.append(f"{at or 'the answer'} is not one of {s['enum']}")
    check(schema, data, "")
print(json.dumps({"score": 0 if errors else 1, "details": "; ".join(errors[:5]) or "valid against the schema"}))
"""


def looks_like_waza(data: Any) -> bool:
    """waza's eval.yaml: ``tasks`` (globs or task mappings with ``inputs``/``prompt``, never an
    ``instruction``) or ``tasks_from``, with waza's ``config`` or graders written with ``config:``."""
    if not isinstance(data, dict) or not ("tasks" in data or "tasks_from" in data):
        return False
    tasks = data.get("tasks") or []
    if not isinstance(tasks, list) or any(isinstance(t, dict) and "instruction" in t for t in tasks):
        return False
    graders = as_list(data.get("graders"))
    return (
        isinstance(data.get("config"), dict)
        or "tasks_from" in data
        or any(isinstance(t, str) for t in tasks)
        or any(isinstance(t, dict) and ("inputs" in t or "validators" in t or "prompt" in t) for t in tasks)
        or any(isinstance(g, dict) and isinstance(g.get("config"), dict) for g in graders)
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value] if value not in (None, "") else []


def _weighted(entries: list[dict[str, Any]], weight: Any, name: str) -> list[dict[str, Any]]:
    w = float(weight) if isinstance(weight, (int, float)) and not isinstance(weight, bool) and weight > 0 else 1.0
    return [{**e, "weight": round(w / len(entries), 6), **({"metric": name} if name else {})} for e in entries]


def grader_asserts(g: Any, where: str, base: Path, notes: list[str]) -> list[dict[str, Any]]:
    """One waza grader as EVAL.yaml assertions; InputError naming ``where`` for one that
    cannot run (the loader errors that task with it)."""
    if not isinstance(g, dict) or not isinstance(g.get("type"), str):
        raise InputError("", where, "a grader is a mapping with a 'type'")
    kind, name = g["type"], str(g.get("name") or g["type"])
    cfg = as_map(g.get("config"))
    for key in ("assertions", "rubric"):  # waza's inline fields beside config
        if key in g and key not in cfg:
            cfg = {**cfg, key: g[key]}
    if kind in ERRORED_TYPES:
        raise InputError("", f"{where}.type", f"waza's {kind!r} grader {ERRORED_TYPES[kind]}")
    for key in sorted(set(cfg) - CONFIG_KEYS.get(kind, set(cfg))):
        notes.append(f"{where}.config.{key}: not read by waza's {kind!r} grader; ignored")
    if cfg.get("continue_session"):
        notes.append(f"{where}.config.continue_session: the judge sees the task's prompt and answer, not the agent's session")
    out: list[dict[str, Any]] = []
    if kind == "text":
        pairs = (("contains", "icontains"), ("not_contains", "not-icontains"), ("contains_cs", "contains"), ("not_contains_cs", "not-contains"))
        for key, typ in pairs:
            out += [{"type": typ, "value": str(v)} for v in _list(cfg.get(key))]
        out += [{"type": "regex", "value": str(v)} for v in _list(cfg.get("regex_match")) + _list(cfg.get("pattern"))]
        out += [{"type": "not-regex", "value": str(v)} for v in _list(cfg.get("regex_not_match"))]
        if cfg.get("keywords"):  # the guide's keywords / must_include_all
            kw = [str(v) for v in _list(cfg["keywords"])]
            out += [{"type": "icontains", "value": k} for k in kw] if cfg.get("must_include_all") else [{"type": "icontains-any", "value": kw}]
    elif kind in ("code", "inline_script"):
        checks = [str(a) for a in _list(cfg.get("assertions"))]
        if not checks:
            return []  # waza: "No assertions configured" scores 1.0
        lang = str(cfg.get("language") or "python")
        if lang == "javascript":
            body = (
                "const checks = "
                + json.dumps(checks)
                + ";\nconst failed = checks.filter((c) => { try { return !new Function('output', 'return (' + c + ');')(output); } catch (e) { return true; } });\nreturn {pass: failed.length === 0, score: 1 - failed.length / checks.length, reason: failed.join('; ') || 'all assertions passed'};"
            )
            out.append({"type": "javascript", "value": body})
        else:
            out.append({"type": "python", "value": CODE_PY.format(checks=repr(checks))})
        used = {v for c in checks for v in ("tool_calls", "transcript", "errors", "duration_ms", "outcome") if re.search(rf"\b{v}\b", c)}
        if used:
            notes.append(
                f"{where}: a code assertion reads {', '.join(sorted(used))}: agentsproof's python assertion gets the answer only, so these are empty (duration_ms 0)"
            )
    elif kind in ("prompt", "llm"):
        text = cfg.get("prompt") or cfg.get("rubric") or g.get("rubric")
        if not isinstance(text, str) or not text.strip():
            raise InputError("", f"{where}.config.prompt", "a prompt grader needs its instructions in 'prompt'")
        out.append({"type": "llm-rubric", "value": text.strip()})
        if cfg.get("model") or g.get("model"):
            notes.append(f"{where}.config.model: the judge is --judge-model (or the run's model)")
    elif kind == "file":
        spec = {k: cfg[k] for k in ("must_exist", "must_not_exist", "content_patterns") if k in cfg}
        out.append({"type": "script", "command": ["python3", "-c", FILE_CHECK, json.dumps(spec)]})
    elif kind == "program":
        cmd = cfg.get("command") or g.get("script")
        if not isinstance(cmd, str) or not cmd.strip():
            raise InputError("", f"{where}.config.command", "a program grader needs its 'command'")
        args = [str(a) for a in _list(cfg.get("args"))]
        out.append({"type": "code-grader", "command": ["sh", "-c", 'WAZA_WORKSPACE_DIR="$PWD" exec "$@"', "waza", cmd, *args]})
    elif kind == "behavior":
        metrics: dict[str, Any] = {k: cfg[k] for k in ("max_tool_calls", "max_tokens", "max_duration_ms") if k in cfg}
        if metrics:
            out.append({"type": "execution-metrics", **metrics})
        out += [{"type": "trajectory:tool-used", "value": str(t)} for t in _list(cfg.get("required_tools"))]
        out += [{"type": "not-trajectory:tool-used", "value": str(t)} for t in _list(cfg.get("forbidden_tools"))]
        if "max_iterations" in cfg:
            notes.append(f"{where}.config.max_iterations: agentsproof counts tool calls (max_tool_calls), not agent turns; not checked")
    elif kind == "action_sequence":
        steps = [str(a) for a in _list(cfg.get("expected_actions"))]
        mode = MODES.get(str(cfg.get("matching_mode") or "in_order_match"))
        if not steps or mode is None:
            raise InputError(
                "", f"{where}.config", "an action_sequence grader needs expected_actions and a matching_mode (exact_match, in_order_match, any_order_match)"
            )
        out.append({"type": "trajectory:tool-sequence", "value": {"mode": mode, "steps": steps}})
    elif kind == "json_schema":
        schema = cfg.get("schema")
        if schema is None and isinstance(cfg.get("schema_file"), str):
            from agentsproof.core.inputs import confined, read_json_file

            schema = read_json_file(confined(cfg["schema_file"], base / "eval.yaml", f"{where}.config.schema_file"))
        if not isinstance(schema, dict):
            raise InputError("", f"{where}.config.schema", "a json_schema grader needs a 'schema' (or a 'schema_file')")
        out.append({"type": "script", "command": ["python3", "-c", SCHEMA_CHECK, json.dumps(schema)]})
    else:
        raise InputError("", f"{where}.type", f"{kind!r} is not a waza grader ({', '.join(GRADER_TYPES + tuple(ERRORED_TYPES))})")
    if not out:
        return []
    return _weighted(out, g.get("weight"), name)


def _task_files(src: str, path: Path, where: str) -> list[tuple[Path, dict[str, Any]]]:
    """The task files a ``tasks`` glob names (relative to the eval, inside its folder)."""
    base = path.resolve().parent
    found = sorted(Path(p) for p in globmod.glob(str(base / where)))
    return [(p, d) for p in found if p.resolve().is_relative_to(base) and (d := load_yaml_mapping(p)) is not None]


def translate(path: Path) -> Translation:
    """A waza eval.yaml as the EVAL.yaml mapping it means; InputError naming the field of a
    file-wide problem."""
    from agentsproof.core.inputs import display
    from agentsproof.core.validation import read_yaml

    src = display(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError(src, None, "expected a YAML mapping at the top level")
    notes: list[str] = []
    for key in sorted(set(data) - TOP_KEYS):
        notes.append(f"{key}: not a waza key; ignored")
    cfg = as_map(data.get("config"))
    for key, why in CONFIG_NOTED.items():
        if key in cfg or (key in ("executor", "model") and key in data):
            notes.append(f"config.{key}: {why}")
    for key in ("metrics", "hooks", "baseline", "range", "inputs"):
        if key in data:
            notes.append(
                f"{key}: read; "
                + {
                    "metrics": "waza's weighted summary of its graders; agentsproof reports each task's score and the skill's effect",
                    "hooks": "waza's lifecycle hooks are not run (put set-up in the fixtures)",
                    "baseline": "agentsproof always runs the baseline arm beside the skill",
                    "range": "every task runs",
                    "inputs": "template variables are filled where a prompt names them",
                }[key]
            )
    base = path.resolve().parent
    fixtures = base / str(data.get("context_dir") or cfg.get("context_dir") or "fixtures")
    raw_tasks: list[tuple[str, dict[str, Any], Path]] = []
    entries = _list(data.get("tasks"))
    if isinstance(data.get("tasks_from"), str):
        from_file = load_yaml_mapping(base / data["tasks_from"]) or {}
        entries += _list(from_file.get("tasks"))
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            files = _task_files(src, path, entry)
            if not files:
                notes.append(f"tasks[{i}]: {entry!r} names no task file")
            raw_tasks += [(os.path.relpath(p, base).replace(os.sep, "/"), d, p.parent) for p, d in files]
        elif isinstance(entry, dict):
            raw_tasks.append((f"tasks[{i}]", entry, base))
        else:
            raise InputError(src, f"tasks[{i}]", "a task is a mapping or a glob of task files")
    if not raw_tasks:
        raise InputError(src, "tasks", "names no task (give task mappings or globs of task files)")
    variables = {str(k): str(v) for k, v in (data.get("inputs") or {}).items()} if isinstance(data.get("inputs"), dict) else {}
    tests: list[dict[str, Any]] = []
    errors: dict[str, str] = {}
    seen: set[str] = set()
    global_graders = _list(data.get("graders"))
    for where, task, _folder in raw_tasks:
        if task.get("enabled") is False:
            notes.append(f"{where}: enabled: false; not run (as waza skips it)")
            continue
        tid = str(task.get("id") or task.get("name") or where)
        tid = re.sub(r"[^A-Za-z0-9._-]+", "-", tid).strip("-") or f"task-{len(tests) + 1}"
        while tid in seen:
            tid += "-2"
        seen.add(tid)
        for key in sorted(set(task) - TASK_KEYS):
            notes.append(f"{where}.{key}: not a waza task key; ignored")
        inputs = as_map(task.get("inputs"))
        prompt = inputs.get("prompt", task.get("prompt"))
        if not isinstance(prompt, str) or not prompt.strip():
            raise InputError(src, f"{where}.inputs.prompt", "a task needs its prompt")
        prompt = _fill(prompt, variables, fixtures)
        parts: list[dict[str, Any]] = [{"type": "text", "value": prompt}]
        for j, f in enumerate(_list(inputs.get("files"))):
            if isinstance(f, dict) and isinstance(f.get("path"), str) and "content" not in f:
                rel = os.path.relpath((fixtures / f["path"]).resolve(), base).replace(os.sep, "/")
                if not (fixtures / f["path"]).is_file():
                    errors.setdefault(tid, f"{where}.inputs.files[{j}]: fixture {f['path']!r} not found in {display(fixtures)}")
                    continue
                parts.append({"type": "file", "value": rel})
            elif isinstance(f, dict) and isinstance(f.get("content"), str):
                name = str(f.get("path") or f"file-{j + 1}")
                parts.append({"type": "text", "value": f"--- {name} ---\n{f['content'].rstrip()}\n--- end of {name} ---"})
            else:
                raise InputError(src, f"{where}.inputs.files[{j}]", "a file is {path: FILE} (in the fixtures folder) or {path: NAME, content: TEXT}")
        if inputs.get("context"):
            notes.append(f"{where}.inputs.context: metadata of the task (waza passes it to its executor); not part of the prompt")
        if "expected" in task:
            notes.append(f"{where}.expected: described, not graded (waza's runner grades its graders only)")
        if "timeout_seconds" in task:
            notes.append(f"{where}.timeout_seconds: every task runs with the file's timeout (config.timeout_seconds) or --timeout")
        asserts: list[dict[str, Any]] = []
        graders = [
            *((f"graders[{k}]", g) for k, g in enumerate(global_graders)),
            *((f"{where}.graders[{k}]", g) for k, g in enumerate(_list(task.get("graders")))),
        ]
        graders += [(f"{where}.validators[{k}]", g) for k, g in enumerate(_list(task.get("validators")))]
        for gwhere, g in graders:
            try:
                asserts += grader_asserts(g, gwhere, base, notes)
            except InputError as err:
                errors.setdefault(tid, f"{err.field}: {err.message}")
        test: dict[str, Any] = {"id": tid, "input": [{"role": "user", "content": parts}] if len(parts) > 1 else prompt}
        if asserts:
            test["assert"] = asserts
        else:
            errors.setdefault(tid, f"{where}: no grader to score it (give the task or the eval graders)")
        meta = {k: task[k] for k in ("name", "description", "tags") if k in task}
        if meta:
            test["metadata"] = meta
        tests.append(test)
    if not tests:
        raise InputError(src, "tasks", "every task is disabled")
    out: dict[str, Any] = {"name": re.sub(r"[^A-Za-z0-9._-]+", "-", str(data.get("name") or base.name)).strip("-") or base.name, "tests": tests}
    if isinstance(data.get("description"), str):
        out["description"] = data["description"]
    trials = cfg.get("trials_per_task")
    if isinstance(trials, int) and not isinstance(trials, bool) and 1 <= trials <= 1000:
        out["evaluate_options"] = {"repeat": trials}
    timeout = cfg.get("timeout_seconds")
    skill_name = data.get("skill") if isinstance(data.get("skill"), str) else None
    found = find_skill_md(base, skill_name)
    if found is None:
        notes.append(f"skill: no SKILL.md for {skill_name!r} beside the eval or in skills/{skill_name}/ above it; the model runs alone (single arm)")
    return Translation(
        data=out,
        skill=read_skill(found) if found is not None else None,
        notes=notes,
        errors=errors,
        timeout=float(timeout) if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0 else None,
    )


def _fill(prompt: str, variables: dict[str, str], fixtures: Path) -> str:
    """waza's prompt templates: ``{{fixture:NAME}}`` (a fixture's text) and ``{{var}}`` (the
    spec's ``inputs``); anything else is left as written."""

    def repl(m: re.Match[str]) -> str:
        key = m.group(1).strip()
        if key.startswith("fixture:"):
            p = (fixtures / key[len("fixture:") :].strip()).resolve()
            if p.is_relative_to(fixtures.resolve()) and p.is_file():
                return p.read_text(encoding="utf-8", errors="replace")
            return m.group(0)
        return variables.get(key, m.group(0))

    return re.sub(r"\{\{\s*([^{}]+?)\s*\}\}", repl, prompt)


FORMAT = TranslatedFormat("waza", looks_like_waza, translate)
