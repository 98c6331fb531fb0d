"""mgechev/skillgrade's ``eval.yaml``: a skill's tasks, run as skillgrade runs them.

::

    version: "1"
    skill: path/to/skill            # optional: else the SKILL.md beside the file, or skills/*/
    defaults: {agent: gemini, provider: docker, trials: 5, timeout: 300, threshold: 0.8, docker: {...}}
    tasks:
      - name: fix-linting-errors
        instruction: Use superlint to fix app.js.   # inline text, or a file beside the eval
        workspace: [{src: fixtures/app.js, dest: app.js}]
        graders:
          - {type: deterministic, run: bash graders/check.sh, weight: 0.7}
          - {type: llm_rubric, rubric: rubrics/quality.md, weight: 0.3}

Each task is one case. A ``deterministic`` grader is a bash script run in the trial's
workspace whose stdout JSON ``{"score", "details", "checks"}`` is the score (agentsproof's
script grader reads that format; the files a script names beside the eval, such as
``graders/check.js``, are run from there, as skillgrade copies them); ``llm_rubric`` is an LLM
rubric. ``instruction``, ``run`` and ``rubric`` may name a file (its text is used).
``workspace`` files are attached to the case (a chat trial: in the prompt; an agent trial: in
its workspace, at their ``dest``; a ``src`` that does not exist is skipped, as skillgrade skips it). ``defaults.trials`` / ``timeout`` / ``threshold`` are the run's unless the
command line says otherwise; the agent, provider, Docker and grader model are read with a
note (``--target`` and ``--judge-model`` choose them).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.formats.translated import (
    TranslatedFormat,
    Translation,
    as_map,
    find_skill_md,
    read_skill,
)

TOP_KEYS = {"version", "skill", "defaults", "tasks"}
DEFAULT_NOTED = {
    "agent": "the agent is --target (a targets.yaml name); without one the chat model runs",
    "provider": "trials run on the host or in the target's container",
    "docker": "a container image is the target's (targets.yaml) or an eval.yaml environment",
    "environment": "resource limits are the container target's",
    "acp": "an ACP agent is a targets.yaml 'acp' target",
    "grader_model": "the judge is --judge-model (or the run's model)",
}
TASK_KEYS = {"name", "instruction", "workspace", "graders", "solution", "agent", "provider", "trials", "timeout", "grader_model", "docker", "environment"}
GRADER_KEYS = {"type", "setup", "run", "rubric", "model", "weight"}


def looks_like_skillgrade(data: Any) -> bool:
    """skillgrade's eval.yaml: tasks with an ``instruction`` and skillgrade's ``defaults``
    (agent, provider, docker, ...), a ``workspace`` list, or a ``deterministic`` grader with ``run``."""
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        return False
    tasks = [t for t in data["tasks"] if isinstance(t, dict)]
    if not tasks or not all("instruction" in t for t in tasks):
        return False
    defaults = as_map(data.get("defaults"))
    graders = [g for t in tasks for g in (t.get("graders") or []) if isinstance(g, dict)]
    return (
        any(k in defaults for k in DEFAULT_NOTED)
        or any(isinstance(t.get("workspace"), list) for t in tasks)
        or any(g.get("type") == "deterministic" and "run" in g for g in graders)
    )


def _file_or_inline(value: str, base: Path) -> str:
    """skillgrade's ``resolveFileOrInline``: a value naming a file beside the eval is that file's text."""
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_text

    text = value.strip()
    if "\n" in text or not text:
        return value
    cand = (base / text).resolve()
    if cand.is_file() and cand.is_relative_to(base):
        return read_text(cand, source=display(cand), field=None, max_bytes=MAX_SOURCE_FILE_BYTES).strip()
    return value


REF = re.compile(r"[\w./-]+\.\w{1,4}")


def _script_command(run: str, base: Path) -> list[str]:
    """A deterministic grader's bash script, with each file it names beside the eval
    (``graders/check.js``) given by its full path: the script runs in the trial's workspace."""

    def repl(m: re.Match[str]) -> str:
        ref = m.group(0)
        cand = (base / ref).resolve()
        if "/" in ref and not ref.startswith("/") and cand.is_file() and cand.is_relative_to(base):
            return shlex.quote(str(cand))
        return ref

    return ["bash", "-c", REF.sub(repl, run)]


def _skills(data: dict[str, Any], base: Path, src: str, notes: list[str]) -> tuple[Path, str] | None:
    """The skill: ``skill:`` (a folder or its SKILL.md), else skillgrade's detection — the
    SKILL.md beside the file, else every ``skills/*``, ``.agents/skills/*``, ``.claude/skills/*``."""
    given = data.get("skill")
    if isinstance(given, str) and given.strip():
        cand = (base / given).resolve()
        md = cand if cand.name == "SKILL.md" else cand / "SKILL.md"
        if not cand.is_relative_to(base.parent) or not md.is_file():
            notes.append(f"skill: {given!r} has no SKILL.md (as skillgrade, running without it: single arm)")
            return None
        return read_skill(md)
    own = find_skill_md(base, None, levels=0)
    if own is not None:
        return read_skill(own)
    found = sorted(p for sub in ("skills", ".agents/skills", ".claude/skills") for p in (base / sub).glob("*/SKILL.md") if p.is_file() and not p.is_symlink())
    if not found:
        notes.append("no SKILL.md beside the eval or in skills/*/: the model runs alone (single arm)")
        return None
    if len(found) == 1:
        return read_skill(found[0])
    texts = [read_skill(p)[1] for p in found]
    names = ", ".join(p.parent.name for p in found)
    notes.append(f"{len(found)} skills found ({names}): the with-arm has all of them, their SKILL.md texts one after another")
    joined = "\n\n".join(f"<!-- skill: {p.parent.name} -->\n{t}" for p, t in zip(found, texts, strict=True))
    return found[0], joined


def translate(path: Path) -> Translation:
    """A skillgrade eval.yaml as the EVAL.yaml mapping it means; InputError naming the field
    of a file-wide problem."""
    from agentsproof.core.inputs import display
    from agentsproof.core.validation import read_yaml

    src = display(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError(src, None, "expected a YAML mapping at the top level")
    base = path.resolve().parent
    notes = [f"{k}: not a skillgrade key; ignored" for k in sorted(set(data) - TOP_KEYS)]
    defaults = as_map(data.get("defaults"))
    for key, why in DEFAULT_NOTED.items():
        if key in defaults:
            notes.append(f"defaults.{key}: {why}")
    notes += [f"defaults.{k}: not a skillgrade key; ignored" for k in sorted(set(defaults) - set(DEFAULT_NOTED) - {"trials", "timeout", "threshold"})]
    tasks = data.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise InputError(src, "tasks", "give at least one task")
    tests: list[dict[str, Any]] = []
    errors: dict[str, str] = {}
    dests: dict[str, dict[str, str]] = {}
    seen: set[str] = set()
    for i, task in enumerate(tasks):
        where = f"tasks[{i}]"
        if not isinstance(task, dict):
            raise InputError(src, where, "a task is a mapping (name, instruction, graders)")
        name = task.get("name")
        if not isinstance(name, str) or not name.strip():
            raise InputError(src, f"{where}.name", "a task needs its name")
        tid = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or f"task-{i + 1}"
        if tid in seen:
            raise InputError(src, f"{where}.name", f"{name!r} is the name of another task too")
        seen.add(tid)
        instruction = task.get("instruction")
        if not isinstance(instruction, str) or not instruction.strip():
            raise InputError(src, f"{where}.instruction", "a task needs its instruction")
        instruction = _file_or_inline(instruction, base)
        notes += [f"{where}.{k}: not a skillgrade task key; ignored" for k in sorted(set(task) - TASK_KEYS)]
        for key in ("agent", "provider", "docker", "environment", "grader_model"):
            if key in task:
                notes.append(f"{where}.{key}: {DEFAULT_NOTED[key]}")
        if "trials" in task or "timeout" in task:
            notes.append(f"{where}: per-task trials/timeout: every task runs with the file's defaults or the command line's")
        if "solution" in task:
            notes.append(f"{where}.solution: a reference solution for skillgrade --validate; not run (agentsproof's oracle is an eval.yaml's)")
        parts: list[dict[str, Any]] = [{"type": "text", "value": instruction}]
        for j, w in enumerate(task.get("workspace") or []):
            at = f"{where}.workspace[{j}]"
            if not isinstance(w, dict) or not isinstance(w.get("src"), str):
                raise InputError(src, at, "a workspace entry is {src: FILE, dest: PATH}")
            srcp = (base / w["src"]).resolve()
            if not srcp.is_relative_to(base):
                raise InputError(src, f"{at}.src", f"{w['src']!r} is outside the eval's folder")
            if srcp.is_dir():
                files = sorted(f for f in srcp.rglob("*") if f.is_file() and not f.is_symlink())
            elif srcp.is_file():
                files = [srcp]
            else:  # skillgrade copies only what exists
                notes.append(f"{at}.src: {w['src']!r} not found; not attached (skillgrade skips it too)")
                continue
            dest = str(w.get("dest") or "").strip()
            for f in files:
                rel = os.path.relpath(f, base).replace(os.sep, "/")
                parts.append({"type": "file", "value": rel})
                if dest and not dest.startswith("/") and ".." not in Path(dest).parts:
                    under = f.relative_to(srcp).as_posix() if srcp.is_dir() else ""
                    dests.setdefault(tid, {})[rel] = f"{dest.rstrip('/')}/{under}" if under else dest
            if dest.startswith("/"):
                notes.append(f"{at}.dest: {dest!r} is a path in skillgrade's container; in an agent's workspace the file is {w['src']!r}")
            if w.get("chmod"):
                notes.append(f"{at}.chmod: not applied (attached files are not executable)")
        asserts: list[dict[str, Any]] = []
        for k, g in enumerate(task.get("graders") or []):
            at = f"{where}.graders[{k}]"
            if not isinstance(g, dict):
                raise InputError(src, at, "a grader is a mapping with a 'type'")
            notes += [f"{at}.{key}: not a skillgrade grader key; ignored" for key in sorted(set(g) - GRADER_KEYS)]
            weight = g.get("weight", 1.0)
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0:
                raise InputError(src, f"{at}.weight", "must be a number of at least 0")
            if g.get("type") == "deterministic":
                run = g.get("run")
                if not isinstance(run, str) or not run.strip():
                    errors.setdefault(tid, f"{at}.run: a deterministic grader without 'run' runs tests/test.sh, which this task does not have")
                    continue
                if g.get("setup"):
                    notes.append(f"{at}.setup: skillgrade installs it in its image; install it in the target's environment")
                asserts.append({"type": "code-grader", "command": _script_command(_file_or_inline(run, base), base), "weight": float(weight)})
            elif g.get("type") == "llm_rubric":
                rubric = g.get("rubric")
                if not isinstance(rubric, str) or not rubric.strip():
                    raise InputError(src, f"{at}.rubric", "an llm_rubric grader needs its rubric (text or a file)")
                if g.get("model"):
                    notes.append(f"{at}.model: the judge is --judge-model (or the run's model)")
                asserts.append({"type": "llm-rubric", "value": _file_or_inline(rubric, base), "weight": float(weight)})
            else:
                raise InputError(src, f"{at}.type", f"{g.get('type')!r} is not a skillgrade grader (deterministic, llm_rubric)")
        test: dict[str, Any] = {"id": tid, "input": [{"role": "user", "content": parts}] if len(parts) > 1 else instruction}
        if asserts:
            test["assert"] = asserts
        else:
            errors.setdefault(tid, f"{where}.graders: no grader to score it")
        tests.append(test)
    out: dict[str, Any] = {"name": base.name, "tests": tests}
    trials, timeout, threshold = defaults.get("trials"), defaults.get("timeout"), defaults.get("threshold")
    if isinstance(trials, int) and not isinstance(trials, bool) and 1 <= trials <= 1000:
        out["evaluate_options"] = {"repeat": trials}
    if isinstance(threshold, (int, float)) and not isinstance(threshold, bool) and 0 <= threshold <= 1:
        out["threshold"] = float(threshold)
    return Translation(
        data=out,
        skill=_skills(data, base, src, notes),
        notes=notes,
        errors=errors,
        timeout=float(timeout) if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0 else None,
        dests=dests,
    )


FORMAT = TranslatedFormat("skillgrade", looks_like_skillgrade, translate)
