"""Turn an LLM reply into a valid, normalized eval.yaml, or say exactly what is wrong.

Normalization fixes what is unambiguous without asking the model again: the version
becomes "2" (a v1 ``tasks`` list stays a list: in version 2 every task is a case), the
``skill:``/``agent:`` reference becomes the copied file's name, and ``defaults.trials``
becomes ``--trials``. Everything else must pass :func:`agentsproof.formats.eval_yaml.models.parse_eval_config`
unchanged, plus one design rule: no instruction may name the skill/agent, its file or
its technique (the file's title). The cases themselves are reviewed by
:mod:`agentsproof.generator.cases`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from agentsproof.core.errors import InputError
from agentsproof.core.validation import yaml_problem
from agentsproof.formats.eval_yaml.models import SkillEvalConfig, parse_eval_config
from agentsproof.generator.plugin import PluginItem

_FENCE = re.compile(r"```[ \t]*(?:ya?ml)?[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.S | re.I)


class InvalidEval(Exception):
    """A reply that is not a usable eval.yaml; ``field`` and ``message`` go back to the model."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass
class GeneratedEval:
    """A generated eval that validated: its config, the YAML to write, and the workspace seeds of an agent eval."""

    config: SkillEvalConfig
    text: str
    """The YAML to write: normalized, with a provenance comment on top."""
    seeds: dict[str, dict[str, str]] = field(default_factory=dict)
    """Agent evals: workspace folder (relative to the eval) → {relative path: text}."""


SEED_KEY = "seed_files"
MAX_SEED_FILES = 20
MAX_SEED_BYTES = 100_000
_SAFE_PATH = re.compile(r"^(?!/)(?!.*(?:^|/)\.\.?(?:/|$))[A-Za-z0-9._/-]{1,200}$")


def _seed(where: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not value:
        raise InvalidEval(where, "must map relative file paths to their text")
    if len(value) > MAX_SEED_FILES:
        raise InvalidEval(where, f"at most {MAX_SEED_FILES} files")
    out: dict[str, str] = {}
    for path, text in value.items():
        if not isinstance(path, str) or not _SAFE_PATH.match(path) or path.startswith("."):
            raise InvalidEval(f"{where}.{path}", "must be a plain relative path (letters, digits, . _ - /; no .., no leading dot)")
        if not isinstance(text, str) or len(text.encode("utf-8")) > MAX_SEED_BYTES:
            raise InvalidEval(f"{where}.{path}", f"must be the file's text (at most {MAX_SEED_BYTES:,} bytes)")
        out[path] = text
    return out


def agent_mode(data: Any, target: str) -> tuple[Any, dict[str, dict[str, str]]]:
    """An agent eval: ``execution`` set to the target, ``seed_files`` (top level or per task)
    taken out and replaced by a ``workspace`` folder the writer fills."""
    if not isinstance(data, dict):
        return data, {}
    data = dict(data)
    seeds: dict[str, dict[str, str]] = {}
    if SEED_KEY in data:
        seeds["workspace"] = _seed(SEED_KEY, data.pop(SEED_KEY))
        data["workspace"] = "workspace"
    tasks = data.get("tasks")
    if isinstance(tasks, list):
        new = []
        for i, task in enumerate(tasks):
            if isinstance(task, dict) and SEED_KEY in task:
                task = dict(task)
                name = str(task.get("name") or f"task-{i + 1}")
                folder = f"workspaces/{re.sub(r'[^A-Za-z0-9._-]+', '-', name)}"
                seeds[folder] = {**seeds.get("workspace", {}), **_seed(f"tasks[{i}].{SEED_KEY}", task.pop(SEED_KEY))}
                task["workspace"] = folder
            new.append(task)
        data["tasks"] = new
    data["execution"] = {"mode": "agent", "target": target}
    return data, seeds


def extract_yaml(reply: str) -> str:
    """The YAML inside a reply: the first fenced block if there is one, else the whole text."""
    match = _FENCE.search(reply)
    if match:
        return match.group(1)
    return reply.strip()


def _load(text: str) -> Any:
    if not text.strip():
        raise InvalidEval("(reply)", "empty reply; expected an eval.yaml document")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where, problem = yaml_problem(exc)
        raise InvalidEval(where if where == "YAML" else f"YAML {where}", f"does not parse: {problem}") from None


def normalize(data: Any, item: PluginItem, trials: int) -> Any:
    """Apply the unambiguous fixes listed in the module docstring; leave the rest to validation."""
    if not isinstance(data, dict):
        return data
    rest = {k: v for k, v in data.items() if k not in ("version", "skill", "agent")}
    defaults = rest.get("defaults")
    if defaults is None:
        rest["defaults"] = {"trials": trials}
    elif isinstance(defaults, dict):
        rest["defaults"] = {**defaults, "trials": trials}
    return {"version": "2", item.kind: item.file_name, **rest}


def _mentions(text: str, needle: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(needle)}(?![\w-])", text, re.I) is not None


_TITLE = re.compile(r"#[ \t]+(.+?)[ \t#]*")
_FRONTMATTER = re.compile(r"\A---[ \t]*\n.*?\n---[ \t]*(\n|\Z)", re.S)


def title(source_text: str) -> str | None:
    """The file's first level-1 Markdown heading outside code fences (after any frontmatter)."""
    fenced = False
    for line in _FRONTMATTER.sub("", source_text, count=1).splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (m := _TITLE.fullmatch(line.rstrip())):
            return " ".join(m.group(1).split())
    return None


def technique_names(item: PluginItem, source_text: str = "") -> list[str]:
    """What an instruction must not say: the file name, a multi-word item name (``sql-review``
    and ``sql review``) and the file's multi-word title (``# Conventional commit messages``)."""
    names = [item.file_name]
    if re.search(r"[-_]", item.name):  # a slug like 'sql-review' only appears by quoting it
        names += [item.name, re.sub(r"[-_]+", " ", item.name)]
    heading = title(source_text)
    if heading and len(heading.split()) >= 2:
        names.append(heading)
    return list(dict.fromkeys(names))


def check_design(config: SkillEvalConfig, item: PluginItem, source_text: str = "") -> None:
    """Every instruction describes the user's problem; none points at the skill/agent or its technique."""
    names = technique_names(item, source_text)
    for i, task in enumerate(config.run_tasks()):
        for name in names:
            if _mentions(" ".join(task.instruction.split()), name):
                raise InvalidEval(
                    f"{config.task_field(i)}.instruction",
                    f"mentions {name!r}; describe the user's problem only, never the {item.kind} or its technique",
                )


def check_oracles(config: SkillEvalConfig) -> None:
    """A chat eval's oracle answers must pass their task's deterministic checks (the model is
    told the failing checks and asked again: the check is wrong, or the answer)."""
    if config.execution.mode != "chat":
        return
    from agentsproof.executor.oracle import answer_failures

    for i, task in enumerate(config.run_tasks()):
        oracle = task.oracle or config.oracle
        if oracle is None or oracle.answer is None:
            continue
        failing = answer_failures(oracle.answer, list(task.graders))
        if failing:
            where = f"{config.task_field(i)}.oracle" if task.oracle is not None else "oracle"
            raise InvalidEval(where, f"the oracle answer fails its own task's checks: {'; '.join(failing[:3])}; fix the check or the answer")


def build_eval(reply: str, item: PluginItem, trials: int, header: str = "", source_text: str = "", target: str | None = None) -> GeneratedEval:
    """Validate one reply for ``item`` (``source_text``: its file, for the design rule); raises InvalidEval naming the field.
    ``target``: an agent eval for that target (workspace seed files, agent graders)."""
    data = normalize(_load(extract_yaml(reply)), item, trials)
    seeds: dict[str, dict[str, str]] = {}
    if target is not None:
        data, seeds = agent_mode(data, target)
    try:
        config = parse_eval_config(data, "eval.yaml")
    except InputError as err:
        raise InvalidEval(err.field or "(top level)", err.message) from None
    check_design(config, item, source_text)
    check_oracles(config)
    return GeneratedEval(config=config, text=header + dump_eval(config), seeds=seeds)


# ------------------------------------------------------------------ writing YAML


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # Indent list items under their key, as people write YAML by hand.
        super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        return True


class _DoubleQuoted(str):
    pass


_REGEXY = re.compile(r"[\\()\[\]{}*#:|>&!%@`'\"]")


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        style: str | None = "|"
    elif _REGEXY.search(value):
        style = "'"  # backslashes stay literal, which keeps regexes readable
    else:
        style = None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _double(dumper: yaml.SafeDumper, value: _DoubleQuoted) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style='"')


_Dumper.add_representer(str, _str)
_Dumper.add_representer(_DoubleQuoted, _double)


def _plain_number(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def eval_dict(config: SkillEvalConfig) -> dict[str, Any]:
    """The config as the minimal dict that loads back to the same config."""
    data = config.model_dump(mode="json", exclude_none=True)
    if data.get("execution") == {"mode": "chat"}:
        data.pop("execution")  # the default: generated chat evals stay as they always were
    data["version"] = _DoubleQuoted(data["version"])
    data["defaults"] = {k: _plain_number(v) for k, v in data["defaults"].items()}
    for task in data["tasks"] if "tasks" in data else [data["task"]]:
        if task.get("turns") == []:
            task.pop("turns")  # single-turn: the default
        oracle = task.get("oracle")
        if oracle and oracle.get("timeout") == 60.0 and "run" not in oracle and "script" not in oracle:
            oracle.pop("timeout")  # the default, and only a command's
        for grader in task["graders"]:
            if grader["type"] == "deterministic":
                checks = grader["checks"]
                grader["checks"] = {k: v for k, v in checks.items() if v not in ([], False)}
    return data


def keep_tasks(config: SkillEvalConfig, keep: list[int]) -> SkillEvalConfig:
    """The config with only the tasks at ``keep`` (the distinct cases)."""
    tasks = config.run_tasks()
    if len(keep) == len(tasks):
        return config
    return config.model_copy(update={"tasks": [tasks[i] for i in keep], "task": None})


def dump_eval(config: SkillEvalConfig) -> str:
    """The config as eval.yaml text (:func:`eval_dict`, lists indented under their key, keys in field order, no anchors)."""
    return yaml.dump(eval_dict(config), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=4096)
