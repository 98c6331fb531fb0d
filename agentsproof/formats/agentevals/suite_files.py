"""agentv's suite keys that name other files: ``environment.workdir`` (a folder copied into
every agent trial's workspace) and ``tests: ./cases.yaml`` / ``./cases.jsonl``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError

ENVIRONMENT_KEYS = {"type", "workdir", "setup", "env"}  # setup and env: formats/agentevals/setup.py


def _err(src: str, where: str | None, message: str) -> InputError:
    return InputError(src, where, message)


def environment_workdir(src: str, env: Any, path: Path) -> Path | None:
    """``environment: {type: host, workdir: DIR}``: the folder each agent trial starts in (copied)."""
    from agentsproof.core.project import resolve_ref

    if env is None:
        return None
    if isinstance(env, str):  # agentv: environment: file://../../environment.yaml, a recipe shared by several suites
        env, path = _environment_file(src, env, path)
    if not isinstance(env, dict):
        raise _err(src, "environment", "must be a mapping (type: host, workdir: DIR) or a file://… environment file")
    if env.get("type") == "docker":  # a container recipe: formats/agentevals/setup.py docker_environment
        return None
    if env.get("type", "host") != "host":
        raise _err(src, "environment.type", f"{env.get('type')!r}: expected host or docker (agentv's environment types)")
    extra = sorted(str(k) for k in env if k not in ENVIRONMENT_KEYS)
    if extra:
        raise _err(src, f"environment.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(ENVIRONMENT_KEYS))}")
    if env.get("workdir") is None:
        return None
    rel = env["workdir"]
    if not isinstance(rel, str) or not rel.strip():
        raise _err(src, "environment.workdir", "must be a folder path")
    target = resolve_ref(rel, path, "environment.workdir", search_up=True, must_exist=False)
    if not target.is_dir():
        if env.get("setup") is not None:  # agentv creates it, and its setup fills it: each trial starts empty
            return None
        raise _err(src, "environment.workdir", f"folder {rel!r} not found")
    return target


def _environment_file(src: str, ref: str, path: Path) -> tuple[Any, Path]:
    """``environment: file://…yaml``: the mapping it holds and the file (its paths are relative to it).

    It may sit anywhere under the folder above the nearest ``evals/`` folder (agentv keeps
    one recipe beside ``evals/`` for suites in its subfolders), else beside the eval."""
    from agentsproof.core.project import resolve_ref
    from agentsproof.core.validation import read_yaml

    rel = ref.strip().removeprefix("file://")
    if not rel:
        raise _err(src, "environment", "must be a mapping (type: host, workdir: DIR) or a file://… environment file")
    target = resolve_ref(rel, path, "environment", search_up=True, must_exist=False)
    if not target.is_file():
        raise _err(src, "environment", f"file {rel!r} not found")
    return read_yaml(target), target


def tests_list(src: str, raw: Any, path: Path) -> Any:
    """``tests``: a file reference (:func:`tests_file`), or a list whose ``file://`` entries are
    each such a file's tests, in place (agentv's ``tests: [file://../fixtures/x.jsonl]``)."""
    if isinstance(raw, str):
        return tests_file(src, raw, path)
    if isinstance(raw, list) and any(isinstance(t, str) and t.startswith("file://") for t in raw):
        return [one for t in raw for one in (tests_file(src, t, path) if isinstance(t, str) and t.startswith("file://") else [t])]
    return raw


def tests_file(src: str, ref: str, path: Path) -> list[Any]:
    """``tests: ./cases.yaml`` (a list of tests), ``./cases.jsonl`` (one test per line), ``./cases.csv`` or a
    folder of case folders (:mod:`agentsproof.formats.agentevals.cases`), beside the file or, for a file in an
    ``evals/`` folder, anywhere in the folder above it."""
    import json
    import os

    from agentsproof.core.inputs import MAX_EVAL_FILE_BYTES, check_values, read_text
    from agentsproof.core.project import resolve_ref
    from agentsproof.core.validation import read_yaml
    from agentsproof.formats.agentevals.cases import case_folder, csv_cases

    rel = ref.removeprefix("file://")
    target = resolve_ref(rel, path, "tests", search_up=True, must_exist=False)
    if target.is_dir() and not Path(os.path.normpath(path.resolve().parent / rel)).is_symlink():  # agentv: a folder of case folders
        return case_folder(src, target)
    if not target.is_file():
        raise _err(src, "tests", f"file {rel!r} not found")
    if target.suffix.lower() == ".csv":
        return csv_cases(src, target)
    if target.suffix.lower() == ".jsonl":
        out = []
        text = read_text(target, source=src, field="tests", max_bytes=MAX_EVAL_FILE_BYTES, what="tests file")
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError as err:
                    raise _err(src, "tests", f"{rel} line {n} is not JSON: {err}") from None
                check_values(out[-1], src, f"tests ({rel} line {n})")
        return out
    data = read_yaml(target)
    if not isinstance(data, list):
        raise _err(src, "tests", f"{rel} must hold a list of tests")
    return data


DEFAULT_TEST_KEYS = {"vars", "assert", "assertions", "threshold", "options", "metadata"}
OPTION_KEYS = {"rubric_prompt", "provider", "transform"}
"""agentv's ``default_test.options``: the judge prompt of plain criteria, the judge's provider, an output transform."""


def default_options(src: str, value: Any) -> tuple[str | None, list[str]]:
    """``default_test.options`` (``value``: the default_test mapping, or a file:// reference already read by
    :func:`default_test`) → (its ``rubric_prompt``, notes); InputError for what cannot be honoured. Its
    ``transform`` is read by parse_suite (formats/agentevals/transform.py)."""
    options = value.get("options") if isinstance(value, dict) else None
    if options is None:
        return None, []
    if not isinstance(options, dict):
        raise _err(src, "default_test.options", "must be a mapping (rubric_prompt, provider, transform)")
    extra = sorted(str(k) for k in options if k not in OPTION_KEYS)
    if extra:
        raise _err(src, f"default_test.options.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(OPTION_KEYS))}")
    notes = []
    if options.get("provider") is not None:
        notes.append(f"default_test.options.provider: {options['provider']!r} (agentv's judge) is not used; the judge is --judge-model / --model")
    prompt = options.get("rubric_prompt")
    if prompt is not None and (not isinstance(prompt, str) or not prompt.strip()):
        raise _err(src, "default_test.options.rubric_prompt", "must be the judge prompt's text")
    return prompt, notes


def threshold_value(src: str, where: str, value: Any) -> float:
    """A pass mark: a number from 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise _err(src, where, "must be a number from 0 to 1 (a test's pass mark)")
    return float(value)


def default_test(src: str, value: Any, path: Path) -> tuple[dict[str, Any], list[tuple[str, Any]], float | None, dict[str, Any] | None]:
    """agentv's ``default_test`` (a mapping, or ``file://…yaml``), merged into every test:
    its ``vars`` (a test's own win), its ``assert`` (after the suite's) and its ``threshold``; and the
    mapping itself (its ``options``: :func:`default_options`)."""
    from agentsproof.core.project import resolve_ref
    from agentsproof.core.validation import read_yaml

    if value is None:
        return {}, [], None, None
    if isinstance(value, str):
        rel = value.strip().removeprefix("file://")
        target = resolve_ref(rel, path, "default_test", search_up=True, must_exist=False)
        if not target.is_file():
            raise _err(src, "default_test", f"file {rel!r} not found")
        value = read_yaml(target)
    if not isinstance(value, dict):
        raise _err(src, "default_test", "must be a mapping (vars, assert, threshold) or a file://… file holding one")
    extra = sorted(str(k) for k in value if k not in DEFAULT_TEST_KEYS)
    if extra:
        raise _err(src, f"default_test.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(DEFAULT_TEST_KEYS))}")
    if "assert" in value and "assertions" in value:
        raise _err(src, "default_test.assertions", "is the same as 'assert'; keep one")
    variables = value.get("vars") or {}
    if not isinstance(variables, dict):
        raise _err(src, "default_test.vars", "must be a mapping of names to values")
    key = "assertions" if "assertions" in value else "assert"
    entries = value.get(key) or []
    if not isinstance(entries, list):
        raise _err(src, f"default_test.{key}", "must be a list")
    threshold = threshold_value(src, "default_test.threshold", value["threshold"]) if value.get("threshold") is not None else None
    return variables, [(f"default_test.{key}[{i}]", a) for i, a in enumerate(entries)], threshold, value


def default_transform(default_map: dict[str, Any] | None) -> tuple[str, Any] | None:
    """``default_test.options.transform`` as (field, spec), or None."""
    options = (default_map or {}).get("options")
    spec = options.get("transform") if isinstance(options, dict) else None
    return ("default_test.options.transform", spec) if spec is not None else None


def test_transform(src: str, where: str, options: Any, notes: list[str]) -> tuple[str, Any] | None:
    """A test's own ``options`` (agentv merges them over default_test's): its ``transform`` as (field, spec);
    its judge ``provider`` / ``rubric_prompt`` are noted as not used (the judge is --judge-model)."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise InputError(src, where, "must be a mapping (transform)")
    rest = sorted(str(k) for k in options if k != "transform")
    if rest:
        notes.append(f"{where}.{', '.join(rest)}: a test's own judge options are not used (the judge is --judge-model / --model)")
    return (f"{where}.transform", options["transform"]) if options.get("transform") is not None else None
