"""What lint reads of a loaded file: its cases as :class:`~.checks.CaseView` values.

Each format that lint checks case by case has a ``lint_view(path, src, loaded=None)`` hook
(no list of formats in lint): eval.yaml's calls :func:`eval_yaml_view`, the others
:func:`cases_view` with how their file names a case's fields (:class:`CaseFields`). A
format without the hook is loaded and said to be unchecked (:mod:`.lint`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentsproof.core.errors import InputError
from agentsproof.formats.lint.checks import CaseView, FileView
from agentsproof.formats.lint.problems import Problem, fix_for

if TYPE_CHECKING:
    from agentsproof.formats.base import Loaded
    from agentsproof.formats.eval_yaml.models import LoadedEval


@dataclass(frozen=True)
class CaseFields:
    """How a format's file names a case's fields in lint's messages."""

    cases: str
    """The list of cases: ``evals[3]``, ``tests[0]``."""
    graders: str
    """A case's graders: ``assertions``, ``assert``."""
    prompt: str
    """A case's prompt: ``prompt``, ``input``."""
    by_name: bool = False
    """A case is named by its name, not an index into the list (a promptfoo case is a
    prompt x test x provider)."""


def eval_yaml_view(ev: LoadedEval, src: str) -> FileView:
    """An eval.yaml's tasks as lint's cases, with the notes of what its loader accepts
    (a missing oracle script, an activation check, an unknown target)."""
    from agentsproof.formats.eval_yaml.items import item_from_eval

    item_from_eval(ev, trials=None, threshold=None, target=None, all_tasks=True)  # what a run builds (its errors too)
    cfg = ev.config
    cases = []
    for i, task in enumerate(cfg.run_tasks(all_tasks=True)):
        at = cfg.task_field(i)
        cases.append(
            CaseView(
                field=at,
                name=task.name,
                prompt=task.instruction,
                graders=list(task.graders),
                grader_fields=[f"{at}.graders[{j}]" for j in range(len(task.graders))],
                workspace=ev.task_workspaces.get(i, ev.workspace),
            )
        )
    view = FileView(src, ev.path, cases, skill_text=ev.source_text, agent_mode=cfg.execution.mode == "agent")
    for i, task in enumerate(cfg.run_tasks(all_tasks=True)):
        oracle, at = (task.oracle, f"{cfg.task_field(i)}.oracle") if task.oracle is not None else (cfg.oracle, "oracle")
        if oracle is not None and oracle.script is not None and not (ev.path.parent / oracle.script).is_file():
            view.notes.append(
                Problem(src, f"{at}.script", "missing-file", f"{oracle.script!r} is not beside {ev.path.name}", "add the script there or correct the path")
            )
            break
    if cfg.activation is not None:
        from agentsproof.formats.lint.activation import check_activation
        from agentsproof.model.skillfolder import split_frontmatter

        try:
            meta, _ = split_frontmatter(ev.source_text)
        except Exception:  # noqa: BLE001 - a skill file without usable frontmatter: no description to compare
            meta = {}
        found = meta.get("description")
        description = found if isinstance(found, str) else ""
        view.notes.extend(check_activation(src, cfg.activation, description))
    if cfg.execution.target:
        from agentsproof.targets.config import check_target_name

        try:
            check_target_name(cfg.execution.target, ev.path, src, "execution.target")
        except InputError as err:
            rule, fix = fix_for(err.message)
            view.notes.append(Problem(err.source or src, err.field or "", rule, err.message, fix))
    return view


def cases_view(loaded: Loaded, src: str, fields: CaseFields) -> FileView:
    """A loaded file's items as lint's cases."""
    cases = []
    skill = ""
    for i, item in enumerate(loaded.items):
        at = f"case {item.name!r}" if fields.by_name else f"{fields.cases}[{i}]"
        cases.append(
            CaseView(
                field=at,
                name=item.name if fields.by_name else item.task_name,  # a provider's copy has the case's task name
                prompt=item.prompt,
                graders=list(item.graders),
                grader_fields=[f"{at}.{fields.graders}" for _ in item.graders],
                workspace=item.workspace_seed,
                prompt_field=fields.prompt,
            )
        )
        if not loaded.single_arm:
            skill = item.skill.text if item.skill is not None else item.system_prompt
    errs = [(i, item.load_error) for i, item in enumerate(loaded.items) if item.load_error]  # a missing file: that case errors
    notes = [
        Problem(
            src, f"{fields.cases}[{i}]", "case-errors", f"this case errors when run (the others run): {why}", "add the file, or correct its path", "warning"
        )
        for i, why in errs
    ]
    return FileView(src, loaded.path, cases, skill_text=skill, case_word="case", cases_field=fields.cases, exact_fields=False, notes=notes)
