"""Running EVAL.yaml files: ``eval`` / ``tc-eval`` on one, ``eval-all`` beside eval.yaml files."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from agentsproof.model.evalfile import DEFAULT_TIMEOUT
from agentsproof.formats.evalyaml.items import label_checks, load_suite, suite_items


def run_eval_yaml(path: Path, cfg: Any) -> tuple[Any, dict[str, Path]]:
    """One EVAL.yaml: a case per test, reported like tc-eval (``<name>-tc-eval.*``)."""
    from agentsproof.commands.run import _interop_settings, _run
    from agentsproof.core.inputs import display

    loaded = load_suite(Path(path), cfg.skill)
    trials = cfg.trials or 1
    timeout = cfg.timeout if cfg.timeout is not None else DEFAULT_TIMEOUT
    items = suite_items(loaded, trials=trials, threshold=cfg.threshold, timeout=timeout, target=cfg.target, targets_file=cfg.targets_file)
    if loaded.skill is None:  # nothing to compare against: the model or target alone
        cfg = cfg.replace(baseline="none")
    settings = {"trials": trials, "threshold": items[0].threshold, "timeout": timeout, "eval_yaml": display(path), **_interop_settings(cfg)}
    name = loaded.name
    return _run("tc-eval", name, items, cfg, name, settings, after=lambda run: label_checks(loaded, run))


def eval_all_items(paths: list[Path], cfg: Any) -> tuple[list[Any], list[Any]]:
    """Items of every file eval-all found: eval.yaml (one item each), EVAL.yaml and
    evals/evals.json (one case per test, ids prefixed with the suite's name so that two
    skills' cases stay apart). Returns (items, the loaded EVAL.yaml suites)."""
    loaded = [load_eval_file(p) for p in paths]  # everything is validated before the first call
    items: list[Any] = []
    for kind, p, obj in loaded:
        items += eval_file_items(kind, p, obj, cfg)
    return items, [obj for kind, _, obj in loaded if kind == "EVAL"]


def load_eval_file(p: Path) -> tuple[str, Path, Any]:
    """One file eval-all runs, loaded and validated: ("json", path, evals.json),
    ("yaml", path, eval.yaml) or ("EVAL", path, the EVAL.yaml suite with its layout skill)."""
    from agentsproof.model.evalfile import load_eval
    from agentsproof.formats.evalyaml.items import is_eval_yaml
    from agentsproof.model.tc_eval import load_tc_eval

    if p.suffix.lower() == ".json":
        return "json", p, load_tc_eval(p)
    if p.name in ("eval.yaml", "eval.yml") or not is_eval_yaml(p):
        return "yaml", p, load_eval(p)
    return "EVAL", p, load_suite(p, None)


def eval_file_items(kind: str, p: Path, obj: Any, cfg: Any) -> list[Any]:
    """The eval-all items of one file loaded by :func:`load_eval_file` (ids as eval-all makes them)."""
    from agentsproof.commands.run import tc_eval_name
    from agentsproof.model.evalfile import DEFAULT_THRESHOLD
    from agentsproof.formats.plan import item_from_eval, items_from_tc_eval

    timeout = cfg.timeout if cfg.timeout is not None else DEFAULT_TIMEOUT
    if kind == "yaml":
        return [item_from_eval(obj, trials=cfg.trials, threshold=cfg.threshold, target=cfg.target, all_tasks=cfg.all_tasks)]
    if kind == "json":
        prefix = tc_eval_name(obj) + "/"
        built = items_from_tc_eval(obj, trials=cfg.trials or 1, threshold=cfg.threshold if cfg.threshold is not None else DEFAULT_THRESHOLD,
                                   timeout=timeout, target=cfg.target)
        return [dataclasses.replace(it, id=prefix + it.id, name=prefix + it.name) for it in built]
    return suite_items(obj, trials=cfg.trials or 1, threshold=cfg.threshold, timeout=timeout, target=cfg.target,
                       targets_file=cfg.targets_file, prefix=obj.name + "/")


def label_all(suites: list[Any], run: Any) -> None:
    for s in suites:
        label_checks(s, run, prefix=s.name + "/")
