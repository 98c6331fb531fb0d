"""``agentsproof convert``: evals.json ⇄ EVAL.yaml, eval.yaml and promptfooconfig.yaml → EVAL.yaml, and a saved run →
an agentprobe report (:mod:`agentsproof.interop.agentprobe`).

The field mapping is the agentv skill's: ``skill_name`` → ``name``, ``evals[].id`` →
``tests[].id``, ``prompt`` → ``input``, ``expected_output`` kept (and a criteria sentence
that points at it), ``assertions`` → ``rubrics``. What the target format cannot hold is
named in one ``warning: lossy: ...`` line per field on stderr (``--strict``: an error, nothing
written). The output is loaded back by agentsproof's own loader for its format, from a temporary
copy in the folder it is written to (so relative paths resolve as they will), before it is
written: output agentsproof itself would refuse is never written (:func:`write_checked`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from agentsproof.core.errors import InputError

if TYPE_CHECKING:
    from agentsproof.formats.agentevals.parse import EvalTest
    from agentsproof.model.graders import GraderSpec

FORMATS = ("EVAL.yaml", "eval-yaml", "evals-json", "agentprobe-report")
CRITERIA = "The response delivers what the expected output describes."
"""The criteria an evals.json case gets from its expected_output (dropped on the way back)."""


def convert(path: Path, to: str, skill: Path | None = None, out_dir: Path | None = None) -> tuple[str, list[str]]:
    """(the converted text, lossy-field warnings); paths in an evals.json written are relative to ``out_dir`` (default: the input's folder)."""
    from agentsproof.core.inputs import display, read_json_file
    from agentsproof.formats.agentevals.items import is_eval_yaml

    if not path.is_file():
        raise InputError(display(path), None, "file not found")
    if to == "agentprobe-report":
        from agentsproof.interop.agentprobe import agentprobe_report

        return json.dumps(agentprobe_report(path), indent=2, ensure_ascii=False) + "\n", []
    if path.suffix.lower() == ".json":
        data = read_json_file(path)
        if isinstance(data, dict) and "items" in data and "command" in data:
            raise InputError(display(path), None, "is a run report; convert it with --to agentprobe-report")
        if to == "evals-json":
            raise InputError(display(path), "--to", "the file is an evals.json already")
        return _dump_yaml(*evals_json_to_eval_yaml(path))
    from agentsproof.formats.promptfoo import is_config_name

    translated = _translated(path)
    if translated is not None:
        if to not in ("EVAL.yaml", "eval-yaml"):
            raise InputError(display(path), "--to", "a waza or skillgrade eval.yaml converts to EVAL.yaml (--to EVAL.yaml)")
        return _dump_yaml(*translated)
    if is_config_name(path.name):
        if to != "EVAL.yaml":
            raise InputError(display(path), "--to", "a promptfooconfig.yaml converts to EVAL.yaml (--to EVAL.yaml)")
        return _dump_yaml(*promptfoo_to_eval_yaml(path))
    if is_eval_yaml(path):
        if to != "evals-json":
            raise InputError(display(path), "--to", "the file is an EVAL.yaml already; convert it --to evals-json")
        data, warnings = eval_yaml_to_evals_json(path, skill, out_dir)
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n", warnings
    if to == "evals-json":
        raise InputError(display(path), "--to", "an eval.yaml converts to EVAL.yaml (--to EVAL.yaml)")
    return _dump_yaml(*eval_yaml_to_eval_yaml(path))


def _translated(path: Path) -> tuple[dict[str, Any], list[str]] | None:
    """A waza or skillgrade eval.yaml as the EVAL.yaml it runs as, and what it cannot carry
    (a task that errors is left out, named); None for any other file."""
    from agentsproof.formats import skillgrade, waza
    from agentsproof.formats.translated import load_yaml_mapping

    data = load_yaml_mapping(path)
    for fmt, looks in ((waza, waza.looks_like_waza), (skillgrade, skillgrade.looks_like_skillgrade)):
        if looks(data):
            tr = fmt.translate(path)
            out = dict(tr.data)
            out["tests"] = [t for t in out["tests"] if t["id"] not in tr.errors]
            warnings = [f"tasks: {tid!r} is left out: it errors when run ({why})" for tid, why in tr.errors.items()]
            warnings += [f"{n.split(': ', 1)[0]}: read, not carried ({n.split(': ', 1)[-1]})" for n in tr.notes]
            if not out["tests"]:
                raise InputError(str(path), "tasks", "every task errors when run; nothing to convert")
            return out, warnings
    return None


def strict_refusal(path: Path, warnings: list[str]) -> InputError | None:
    """``convert --strict``: the one-line error when anything could not be carried (None when nothing was dropped)."""
    from agentsproof.core.inputs import display

    if not warnings:
        return None
    more = f" (and {len(warnings) - 1} more, named above)" if len(warnings) > 1 else ""
    first = warnings[0].split(":", 1)[0]
    return InputError(display(path), first, f"cannot be carried over{more}; --strict: nothing written")


OUTPUT_NAMES = {"EVAL.yaml": "EVAL.yaml", "eval-yaml": "EVAL.yaml", "evals-json": "evals.json"}
"""The name the load-back check gives the output when it goes to stdout (written beside the input)."""


def write_checked(path: Path, to: str, text: str, out: Path | None, inputs: list[Path | None], skill: Path | None = None) -> None:
    """Load the converted ``text`` back before it is written (:func:`check_loads`), then write it
    to ``out`` (``None``: only checked, from a temporary copy beside ``path``, for stdout).

    The check reads a temporary file in the output's folder (relative paths resolve as they will),
    which becomes ``out`` only when it loads; otherwise nothing is written and the one-line
    :class:`InputError` names the input file and the problem."""
    from agentsproof.core.inputs import MAX_EVAL_FILE_BYTES, display
    from agentsproof.core.safepath import Staged, refuse_overwrite

    if out is not None:
        refuse_overwrite(out, inputs, "command line", "--out")
        if out.is_symlink():
            raise InputError("command line", "--out", f"{display(out)} is a symlink; not written through (give the file itself)")
        if not out.name or out.name in (".", ".."):
            raise InputError("command line", "--out", f"{display(out)} names no file")
    data = text.encode("utf-8")
    if to in OUTPUT_NAMES and len(data) > MAX_EVAL_FILE_BYTES:
        raise InputError(
            display(path),
            None,
            f"converted to {to} it is {len(data):,} bytes, over the {MAX_EVAL_FILE_BYTES:,}-byte cap agentsproof reads; nothing written (split the file)",
        )
    folder, name = (out.parent, out.name) if out is not None else (path.parent, OUTPUT_NAMES.get(to, path.name))
    try:
        staged = Staged(folder, name)
    except OSError as err:
        raise InputError(display(out or path), "--out" if out is not None else None, f"cannot write: {err.strerror or err}") from None
    try:
        staged.write(data)
        staged.fh.flush()
        if to in OUTPUT_NAMES:
            check_loads(path, to, staged.path.parent / staged.temp_name, skill)
        if out is not None:
            staged.commit()
    except OSError as err:
        raise InputError(display(out or path), "--out", f"cannot write: {err.strerror or err}") from None
    finally:
        staged.discard()


def check_loads(path: Path, to: str, copy: Path, skill: Path | None) -> None:
    """The converted file at ``copy`` read by agentsproof's own loader for ``to``; an
    :class:`InputError` naming the input ``path`` and the output's problem when it would refuse it.
    The loader's own notes are not shown (they would name the temporary copy; what convert
    leaves out is named by its lossy warnings)."""
    import contextlib
    import io

    from agentsproof.core.inputs import display

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            if to == "evals-json":
                from agentsproof.formats.evals_json import load_tc_eval

                load_tc_eval(copy)
            else:
                from agentsproof.formats.agentevals.items import load_suite

                broken = next((t for t in load_suite(copy, skill).suite.tests if t.load_error), None)
                if broken is not None:  # a file the source has that the copy's place does not reach
                    raise InputError(None, None, broken.load_error or "")
    except InputError as err:
        where = f"{err.field}: " if err.field else ""
        raise InputError(display(path), None, f"converted to {to} it would not load ({where}{err.message}); nothing written") from None


def _dump_yaml(data: dict[str, Any], warnings: list[str]) -> tuple[str, list[str]]:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), warnings


# ---------------------------------------------------------------- evals.json → EVAL.yaml


def evals_json_to_eval_yaml(path: Path) -> tuple[dict[str, Any], list[str]]:
    """An evals.json as an EVAL.yaml mapping, and the lossy-field warnings."""
    from agentsproof.formats.eval_yaml.items import ASSERTION_WEIGHT_WITH_RUBRIC, RUBRIC_WEIGHT_WITH_ASSERTIONS
    from agentsproof.formats.evals_json import load_tc_eval, tc_eval_name

    tc = load_tc_eval(path)
    warnings: list[str] = []
    name = tc_eval_name(tc)
    standard = tc.skill_path.resolve() == (path.resolve().parent.parent / "SKILL.md") or tc.skill_path.resolve() == path.resolve().parent / "SKILL.md"
    if not standard:
        warnings.append(
            f"skill_name: {tc.config.skill_name!r} is not kept; an EVAL.yaml finds skills/<name>/SKILL.md above its evals/ folder, else give --skill"
        )
    tests = []
    for prompt, expect in tc.triggers:
        warnings.append(
            f"should_trigger: {prompt[:60]!r} (should_trigger {str(expect).lower()}) is an activation prompt; it is left out (run the evals.json with `agentsproof activation`)"
        )
    for lc in tc.cases:
        case = lc.case
        test: dict[str, Any] = {"id": case.id}
        if lc.error:
            warnings.append(f"{lc.error}: the case errors when run; its files are left out")
        if lc.file_paths:
            base = path.resolve().parent
            refs = [os.path.relpath(f.resolve(), base).replace(os.sep, "/") for f in lc.file_paths]
            test["input"] = [{"role": "user", "content": [{"type": "text", "value": case.prompt}] + [{"type": "file", "path": f} for f in refs]}]
        elif "{{" in case.prompt:  # text that looks like a template: a var is taken as it is (an input is rendered)
            test["vars"] = {"input": case.prompt}
        else:
            test["input"] = case.prompt
        if case.name is not None or case.metadata:  # skill-creator's name/category/kind: EVAL.yaml's metadata
            test["metadata"] = {**({"name": case.name} if case.name is not None else {}), **case.metadata}
        if case.expected_output is not None:
            test["criteria"] = CRITERIA
            test["expected_output"] = case.expected_output
        if case.assertions:
            test["rubrics"] = list(case.assertions)
            if case.expected_output is not None:  # keep the 0.7 / 0.3 split of the two graders
                n = len(case.assertions)
                rubric = "The response delivers the expected output:\n" + case.expected_output
                test["assert"] = [{"type": "llm-rubric", "value": rubric, "weight": round(n * RUBRIC_WEIGHT_WITH_ASSERTIONS / ASSERTION_WEIGHT_WITH_RUBRIC, 6)}]
        tests.append(test)
    return {"name": name, "tests": tests}, warnings


# ---------------------------------------------------------------- EVAL.yaml → evals.json


def eval_yaml_to_evals_json(path: Path, skill: Path | None, out_dir: Path | None = None) -> tuple[dict[str, Any], list[str]]:
    """An EVAL.yaml as an evals.json mapping (its skill found beside it or given as ``skill``; paths relative to ``out_dir``, default the EVAL.yaml's folder), and the lossy-field warnings."""
    from agentsproof.core.validation import read_yaml
    from agentsproof.formats.agentevals.items import find_skill
    from agentsproof.formats.agentevals.parse import parse_suite

    raw = read_yaml(path)
    suite = parse_suite(raw, path)
    found = find_skill(path, skill)
    base = (out_dir or path.parent).resolve()
    warnings: list[str] = []
    from agentsproof.formats.evals_json import _named_skill

    near = next((n for n in dict.fromkeys((suite.name, suite.name.split(".")[0])) if n and _named_skill(n, base) is not None), None)
    if found is None and near is not None:
        skill_name = near  # the skill of that name near it (skills/<name>/SKILL.md; csv-analyzer.evals: csv-analyzer), as evals.json finds it
    elif found is None:
        skill_name = f"{suite.name}.md"
        warnings.append(f"skill_name: no skill found beside {path.name}; wrote {skill_name!r} (give --skill FILE)")
    else:
        skill_name = os.path.relpath(found[0].resolve(), base).replace(os.sep, "/")
    from agentsproof.core.inputs import display
    from agentsproof.formats.agentevals.suite_files import tests_list

    raw_tests = tests_list(display(path), raw.get(suite.tests_key), path)  # a file's, a cases folder's … too
    per = max(1, len(suite.tests) // max(1, len(raw_tests)))  # several prompts: each test once per prompt
    raw_tests = [rt for rt in raw_tests for _ in range(per)]
    evals = []
    used: set[int] = set()
    for i, (test, rt) in enumerate(zip(suite.tests, raw_tests, strict=False)):
        at = f"tests[{i}]"
        cid = int(test.id) if test.id.isdigit() and int(test.id) not in used else max(used | {0}) + 1
        if str(cid) != test.id:
            warnings.append(f"{at}.id: {test.id!r} is not a whole number; evals.json ids are, so it became {cid}")
        used.add(cid)
        case: dict[str, Any] = {"id": cid, "prompt": _plain_prompt(rt, test)}
        if test.expected_output is not None:
            case["expected_output"] = test.expected_output
        if test.criteria and test.criteria != CRITERIA:
            warnings.append(f"{at}.criteria: evals.json has no criteria; it is left out")
        assertions: list[str] = []
        for where, entry in test.asserts:
            if isinstance(entry, str):
                assertions.append(entry)
            elif not _is_converted_rubric(entry, test):
                warnings.append(f"{where}: a {entry.get('type')!r} assertion has no evals.json form; it is left out")
        for where, r in test.rubrics:
            if isinstance(r, str):
                assertions.append(r)
            elif isinstance(r, dict) and isinstance(r.get("outcome"), str):
                assertions.append(r["outcome"])
                if set(r) - {"id", "outcome"}:
                    warnings.append(f"{where}: weight, required and score_ranges have no evals.json form; kept the outcome only")
        if assertions:
            case["assertions"] = assertions
        if test.files:
            case["files"] = [os.path.relpath(p, base).replace(os.sep, "/") for _, p in test.files]
        if test.turns:
            warnings.append(f"{at}.turns: evals.json has one prompt per case; the {len(test.turns)} later turn(s) are left out")
        evals.append(case)
    for key in ("execution", "target", "providers", "assert", "assertions", "description", "tags", "environment", "workspace", "extensions"):
        if key in raw and key not in ("assert", "assertions"):
            warnings.append(f"{key}: evals.json has no such field; it is left out")
    return {"skill_name": skill_name, "evals": evals}, warnings


def _plain_prompt(raw_test: dict, test: EvalTest) -> str:
    """The prompt without attached files (they go to ``files``)."""
    if not isinstance(raw_test, dict):
        return test.prompt
    inp = raw_test.get("input", (raw_test.get("vars") or {}).get("input"))
    if isinstance(inp, list) and test.files:
        texts = []
        for msg in inp:
            content = msg.get("content") if isinstance(msg, dict) else msg
            for part in [content] if isinstance(content, str) else (content or []):
                if isinstance(part, str):
                    texts.append(part)
                elif isinstance(part, dict) and part.get("type") == "text":
                    texts.append(str(part.get("value", part.get("text", ""))))
        return "\n\n".join(texts)
    prompt: str = test.prompt
    return prompt


def _is_converted_rubric(entry: dict, test: EvalTest) -> bool:
    """The llm-rubric an evals.json case with both assertions and expected_output gets."""
    return entry.get("type") == "llm-rubric" and test.expected_output is not None and str(entry.get("value", "")).endswith(test.expected_output)


# ---------------------------------------------------------------- promptfooconfig.yaml → EVAL.yaml


def promptfoo_to_eval_yaml(path: Path) -> tuple[dict[str, Any], list[str]]:
    """Every prompt × test as one EVAL.yaml test (defaultTest merged into each)."""
    from agentsproof.core.validation import read_yaml
    from agentsproof.formats.promptfoo import IGNORED_KEYS, to_eval_yaml

    data, providers = to_eval_yaml(path)
    warnings: list[str] = []
    if len(providers) > 1:
        names = ", ".join(label for label, _ in providers)
        warnings.append(f"providers: an EVAL.yaml runs one target; {names} are left out (run the EVAL.yaml once per --model)")
    elif providers:
        warnings.append(f"providers[0]: {providers[0][0]!r} is left out; an EVAL.yaml runs the target or --model it is given")
    raw = read_yaml(path)
    warnings += _promptfoo_left_out(raw, sorted(IGNORED_KEYS - {"$schema"}))
    return data, warnings


def _promptfoo_left_out(raw: dict[str, Any], ignored: list[str]) -> list[str]:
    """The keys of a promptfooconfig.yaml (already loaded, so well-formed) that its EVAL.yaml does not carry, each named."""
    out: list[str] = []
    entries = raw.get("providers")
    for i, p in enumerate(entries if isinstance(entries, list) else []):
        cfg = p.get("config") if isinstance(p, dict) else None
        for key in cfg if isinstance(cfg, dict) else {}:
            out.append(f"providers[{i}].config.{key}: an EVAL.yaml has no provider settings; it is left out")
    if raw.get("tags"):
        out.append("tags: an EVAL.yaml made from a promptfooconfig.yaml keeps no tags; they are left out")
    default = raw.get("defaultTest")
    if isinstance(default, dict) and default.get("metadata"):
        out.append("defaultTest.metadata: an EVAL.yaml test has no metadata; it is left out")
    tests = raw.get("tests")
    for i, t in enumerate(tests if isinstance(tests, list) else []):
        if isinstance(t, dict) and t.get("metadata"):
            out.append(f"tests[{i}].metadata: an EVAL.yaml test has no metadata; it is left out")
    out += [f"{key}: not used by agentsproof; it is left out" for key in ignored if key in raw]
    return out


# ---------------------------------------------------------------- eval.yaml → EVAL.yaml


def eval_yaml_to_eval_yaml(path: Path) -> tuple[dict[str, Any], list[str]]:
    """An eval.yaml as an EVAL.yaml mapping (every task of a version 2 file), and the lossy-field warnings."""
    from agentsproof.formats.eval_yaml.models import load_eval

    ev = load_eval(path)
    cfg = ev.config
    warnings: list[str] = []
    if cfg.kind == "agent":
        warnings.append("agent: an EVAL.yaml evaluates skills; give the agent file with --skill when you run it")
    elif ev.source_path.name != "SKILL.md" or ev.source_path.resolve().parent not in (path.resolve().parent, path.resolve().parent.parent):
        warnings.append(f"skill: {cfg.skill!r} is not kept; an EVAL.yaml finds skills/<name>/SKILL.md above its evals/ folder, else give --skill")
    tasks = cfg.run_tasks()
    if cfg.tasks and len(cfg.tasks) > len(tasks):  # version 1: its first task is what it means
        left = len(cfg.tasks) - len(tasks)
        warnings.append(
            f'tasks[1]: a version 1 eval.yaml runs its first task only (unless --all-tasks); the other {left} are left out (make it version: "2" to keep them)'
        )
    for key in ("defaults", "workspace"):
        if key in cfg.model_fields_set:
            warnings.append(f"{key}: EVAL.yaml has no such field (give --trials, --threshold on the command line)")
    tests: list[dict[str, Any]] = []
    for ti, task in enumerate(tasks):
        asserts: list[Any] = []
        for i, g in enumerate(task.graders):
            asserts += _grader_to_asserts(g, f"{cfg.task_field(ti)}.graders[{i}]", ev.name, warnings)
        if task.workspace is not None:
            warnings.append(f"{cfg.task_field(ti)}.workspace: EVAL.yaml has no per-test workspace; it is left out")
        tests.append({"id": task.name, "input": task.instruction, "assert": asserts})
    out: dict[str, Any] = {"name": ev.name}
    if cfg.description:
        out["description"] = cfg.description
    if cfg.execution.target:
        out["execution"] = {"target": cfg.execution.target}
    out["tests"] = tests
    return out, warnings


def _grader_to_asserts(g: GraderSpec, where: str, skill: str, warnings: list[str]) -> list[Any]:
    """The grader's EVAL.yaml assertions, from its registered ``to_agentevals`` hook
    (:class:`agentsproof.grading.base.GraderEntry`); a grader without one is left out, saying so."""
    from agentsproof.grading.hooks import ConvertCase
    from agentsproof.grading.registry import entry

    if getattr(g, "turn", None) is not None:
        warnings.append(f"{where}.turn: EVAL.yaml has no turn-scoped grader; it grades the last reply")
    weight = getattr(g, "weight", 1.0)
    case = ConvertCase(where, skill, {"weight": weight} if weight != 1.0 else {}, warnings)
    hook = entry(g.type).to_agentevals
    return hook(g, case) if hook is not None else case.left_out(g.type)
