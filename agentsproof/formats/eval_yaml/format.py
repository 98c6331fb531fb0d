"""eval.yaml (versions 1 and 2): one skill or agent, its tasks and graders, as one item.

The models and the loader are in :mod:`agentsproof.formats.eval_yaml.models`; how a loaded file
becomes an item in :func:`agentsproof.formats.eval_yaml.items.item_from_eval`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentsproof.core.errors import InputError
from agentsproof.formats.base import ItemRequest, Loaded
from agentsproof.formats.eval_yaml.items import item_from_eval, plugin_name_for_eval
from agentsproof.formats.eval_yaml.models import load_eval

if TYPE_CHECKING:
    from agentsproof.formats.lint.checks import FileView

NAMES = ("eval.yaml", "eval.yml")


class EvalYaml:
    """The eval.yaml format: one skill or agent, its tasks as the cases of one item."""

    name = "eval.yaml"

    def detect(self, path: Path) -> bool:
        """A folder holding an eval.yaml, a file named eval.yaml, or a YAML file that is not an EVAL.yaml."""
        from agentsproof.formats.agentevals.items import is_eval_yaml

        if path.is_dir() or path.name in NAMES:
            return True
        return path.suffix.lower() in (".yaml", ".yml") and not is_eval_yaml(path)

    def discoverable(self, path: Path) -> bool:
        """A file named ``eval.yaml`` (or ``eval.yml``)."""
        return path.name in NAMES

    def load(self, path: Path, request: ItemRequest) -> Loaded:
        """The file's one item (``--skill`` is refused: the file names its skill)."""
        if request.skill is not None:
            raise InputError("command line", "--skill", "is for an EVAL.yaml; an eval.yaml names its skill in 'skill'")
        ev = load_eval(path, live_source=request.live_source)
        item = item_from_eval(ev, trials=request.trials, threshold=request.threshold, target=request.target, all_tasks=request.all_tasks)
        return Loaded(
            self.name,
            ev.path,
            [item],
            ev.name,
            report="eval",
            plugin=plugin_name_for_eval(ev.path),
            skill_path=ev.source_path,
            eval_file=ev,
        )

    def lint_view(self, path: Path, src: str, loaded: Loaded | None = None) -> FileView:
        """``agentsproof lint``'s view of its tasks (:mod:`agentsproof.formats.lint.views`)."""
        from agentsproof.formats.lint.views import eval_yaml_view

        ev = loaded.eval_file if loaded is not None and loaded.eval_file is not None else load_eval(path)
        return eval_yaml_view(ev, src)


FORMAT = EvalYaml()
