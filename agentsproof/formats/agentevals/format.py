"""EVAL.yaml (AgentEvals), both dialects: one item per test, through the tc-eval engine."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentsproof.formats.agentevals.items import NAMES, is_eval_yaml, label_checks, load_suite, suite_items
from agentsproof.formats.base import ItemRequest, Loaded

if TYPE_CHECKING:
    from agentsproof.formats.lint.checks import FileView


class EvalYamlSuite:
    """The EVAL.yaml format (AgentEvals, both dialects): one item per test."""

    name = "EVAL.yaml"

    def detect(self, path: Path) -> bool:
        """A YAML file that is an EVAL.yaml (by name, or by its ``tests`` and no ``skill``/``agent``), or agentv's JSONL tests."""
        return path.suffix.lower() in (".yaml", ".yml", ".jsonl") and is_eval_yaml(path)

    def discoverable(self, path: Path) -> bool:
        """A file named ``EVAL.yaml`` (or ``EVAL.yml``), or agentv's ``<name>.eval.yaml`` (``.eval.yml``)."""
        return path.name in NAMES or path.name.lower().endswith((".eval.yaml", ".eval.yml"))

    def load(self, path: Path, request: ItemRequest) -> Loaded:
        """The suite's tests as items (``--trials``, else ``evaluate_options.repeat``), single-armed when no skill is found."""
        from agentsproof.core.inputs import display

        loaded = load_suite(Path(path), request.skill)
        trials, timeout = request.trials or loaded.suite.repeat or 1, request.case_timeout()
        prefix = loaded.name + "/" if request.in_plugin else ""
        items = suite_items(
            loaded,
            trials=trials,
            threshold=request.threshold,
            timeout=timeout,
            target=request.target,
            targets_file=request.targets_file,
            prefix=prefix,
        )
        settings = {"trials": trials, "threshold": items[0].threshold, "timeout": timeout, "eval_yaml": display(path)}
        return Loaded(
            self.name,
            Path(path),
            items,
            loaded.name,
            settings=settings,
            single_arm=loaded.skill is None,
            skill_path=loaded.skill[0] if loaded.skill else None,
            after=lambda run: label_checks(loaded, run, prefix=prefix),
        )

    def lint_view(self, path: Path, src: str, loaded: Loaded | None = None) -> FileView:
        """``agentsproof lint``'s view of its cases (:mod:`agentsproof.formats.lint.views`)."""
        from agentsproof.formats.lint.views import CaseFields, cases_view

        return cases_view(loaded or self.load(path, ItemRequest()), src, CaseFields("tests", "assert", "input"))


FORMAT = EvalYamlSuite()
