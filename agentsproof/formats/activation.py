"""Activation suites in eval files, and a plugin's suites for ``agentsproof activation``.

eval.yaml::

    activation:
      should:
        - Summarise this CSV file for me          # a plain prompt: type implicit
        - {prompt: "Use csv-summary on data.csv", type: explicit}
      should_not:
        - {prompt: "Review this SQL query", type: near-miss}
      min_recall: 0.8        # --ci floors (defaults: model.activation)
      min_precision: 0.8

EVAL.yaml: every test with a ``skill-used`` assertion is a should prompt of the skill under
test, every test with ``not-skill-used`` (or ``skill-trigger`` with ``should_trigger``) a
should-not prompt; its ``input`` is the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.formats.activation_config import ActivationConfig as ActivationConfig  # re-exported
from agentsproof.model.activation import DEFAULT_SHOULD_NOT_TYPE, DEFAULT_SHOULD_TYPE, ActivationPrompt, ActivationSuite
from agentsproof.model.items import SkillFile


@dataclass
class PluginSuites:
    """A plugin's skills and the activation suites found for them."""

    name: str
    plugin_dir: Path
    skills: list[SkillFile]
    suites: list[ActivationSuite] = field(default_factory=list)
    agents: list[SkillFile] = field(default_factory=list)

    @property
    def without_suite(self) -> list[str]:
        """The names of the plugin's skills that no activation suite covers."""
        have = {s.skill.name for s in self.suites}
        return [s.name for s in self.skills if s.name not in have]


def eval_yaml_suite(path: Path, skill: SkillFile) -> ActivationSuite | None:
    """The ``activation:`` block of an eval.yaml (None when it has none)."""
    from agentsproof.core.inputs import display
    from agentsproof.core.validation import read_yaml
    from agentsproof.formats.eval_yaml.models import parse_eval_config

    cfg = parse_eval_config(read_yaml(path), display(path))
    if cfg.activation is None:
        return None
    a = cfg.activation
    return ActivationSuite(skill=skill, prompts=a.prompts(), source=display(path), min_recall=a.min_recall, min_precision=a.min_precision)


def eval_suite_yaml(path: Path, skill: SkillFile) -> ActivationSuite | None:
    """The tests of an EVAL.yaml that say whether the skill should load (None when none do)."""
    from agentsproof.core.inputs import display
    from agentsproof.core.validation import read_yaml
    from agentsproof.formats.agentevals.parse import parse_suite

    suite = parse_suite(read_yaml(path), path)
    prompts = []
    for test in suite.tests:
        for _where, entry in test.asserts:
            expect = _expects(entry, skill.name)
            if expect is None:
                continue
            kind = DEFAULT_SHOULD_TYPE if expect else DEFAULT_SHOULD_NOT_TYPE
            prompts.append(ActivationPrompt(test.prompt, expect, kind))
            break
    if not prompts:
        return None
    return ActivationSuite(skill=skill, prompts=prompts, source=display(path))


def _expects(entry: Any, name: str) -> bool | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
        return None
    kind: str = entry["type"].replace("_", "-")
    if kind in ("skill-used", "not-skill-used") and entry.get("value") in (None, name):
        return kind == "skill-used"
    if kind == "skill-trigger" and entry.get("skill") in (None, name):
        return entry.get("should_trigger", True) is not False
    return None


def _eval_files(folder: Path) -> list[Path]:
    names = ("eval.yaml", "eval.yml", "EVAL.yaml", "EVAL.yml")
    return [folder / sub / n for sub in ("", "evals") for n in names if (folder / sub / n).is_file()]


def load_plugin_suites(plugin_dir: Path) -> PluginSuites:
    """Every skill of the plugin (any layout :func:`~agentsproof.formats.layout.find_layout`
    knows) with the activation suites of the eval files in its folder (``eval.yaml``,
    ``EVAL.yaml``, or the same under ``evals/``); InputError for a bad file or no suite at all."""
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_text
    from agentsproof.formats.eval_yaml.items import skill_file
    from agentsproof.formats.layout import find_layout

    layout = find_layout(Path(plugin_dir), option="PLUGIN_DIR")
    out = PluginSuites(name=layout.name, plugin_dir=Path(plugin_dir), skills=[])
    for item in layout.items:
        text = read_text(item.source, source=display(item.source), field=None, max_bytes=MAX_SOURCE_FILE_BYTES, what=f"{item.kind} file")
        seeds = tuple(p.resolve() for p in _eval_files(item.folder)) if item.folder else ()
        made = skill_file(item.name, item.kind, text, item.source, seeds)
        (out.skills if item.kind == "skill" else out.agents).append(made)
        if item.folder is None:
            continue
        for path in _eval_files(item.folder):
            from agentsproof.formats.agentevals.items import is_eval_yaml

            found = eval_suite_yaml(path, made) if is_eval_yaml(path) else eval_yaml_suite(path, made)
            if found is not None:
                _merge(out, found)
    if not out.suites:
        raise InputError(
            str(plugin_dir),
            None,
            f"none of its {len(out.skills)} skills has an activation suite (eval.yaml 'activation:' or EVAL.yaml "
            f"skill-used tests); write them with `agentsproof eval-generate --plugin-dir {plugin_dir}`",
        )
    return out


def _merge(out: PluginSuites, found: ActivationSuite) -> None:
    for suite in out.suites:
        if suite.skill.name == found.skill.name:
            seen = {(p.text, p.expect) for p in suite.prompts}
            suite.prompts += [p for p in found.prompts if (p.text, p.expect) not in seen]
            suite.source += f", {found.source}"
            return
    out.suites.append(found)


ARM_NAMES = {"baseline": "without", "skill": "with", "plugin": "plugin"}
DEFAULT_ARMS = "baseline,skill"


def parse_arms(value: str | None) -> tuple[str, ...]:
    """``--arms baseline,skill[,plugin]`` → the runner's arm names; InputError otherwise."""
    given = [a.strip() for a in (value or DEFAULT_ARMS).split(",") if a.strip()]
    unknown = [a for a in given if a not in ARM_NAMES]
    if unknown:
        raise InputError("command line", "--arms", f"{unknown[0]!r} is not an arm; use baseline,skill or baseline,skill,plugin")
    if "baseline" not in given or "skill" not in given or len(set(given)) != len(given):
        raise InputError("command line", "--arms", "give baseline,skill (the default) or baseline,skill,plugin")
    return tuple(ARM_NAMES[a] for a in ("skill", "baseline", "plugin") if a in given)


def plugin_skills_for(source: Path) -> list[SkillFile] | None:
    """Every skill and agent of the nearest plugin (a folder :func:`find_layout` reads) that
    holds ``source`` (a SKILL.md or agent file); None when there is none."""
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_text
    from agentsproof.formats.eval_yaml.items import skill_file
    from agentsproof.formats.layout import find_layout

    here = Path(source).resolve()
    for folder in list(here.parents)[1:6]:
        try:
            layout = find_layout(folder, option="--arms")
        except InputError:
            continue
        if not any(i.source.resolve() == here for i in layout.items):
            continue
        out = []
        for item in layout.items:
            text = read_text(item.source, source=display(item.source), field=None, max_bytes=MAX_SOURCE_FILE_BYTES, what=f"{item.kind} file")
            seeds = tuple(p.resolve() for p in _eval_files(item.folder)) if item.folder else ()
            out.append(skill_file(item.name, item.kind, text, item.source, seeds))
        return out
    return None


def with_plugin_arm(items: list[Any]) -> list[Any]:
    """``--arms baseline,skill,plugin``: each skill/agent item also runs with every skill of
    its plugin installed; InputError naming the eval when an item has no plugin."""
    import dataclasses

    out = []
    for it in items:
        if it.kind == "case":
            raise InputError(
                it.eval_path or it.source_path, "--arms", "the plugin arm is for skills and agents of a plugin (eval / eval-all), not tc-eval cases"
            )
        skills = plugin_skills_for(Path(it.source_path))
        if skills is None:
            raise InputError(
                it.eval_path or it.source_path, "--arms", f"{it.source_path} is not a skill or agent of a plugin (skills/<name>/SKILL.md, agents/<name>.md)"
            )
        own = it.skill or next((s for s in skills if Path(s.source_path or "").resolve() == Path(it.source_path).resolve()), None)
        installed = [s for s in skills if s.kind == "skill" or s is own]
        out.append(dataclasses.replace(it, arms=(*it.arms, "plugin"), plugin_skills=tuple(installed), skill=own))
    return out
