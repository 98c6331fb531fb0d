"""Turn loaded eval files into runner items."""

from __future__ import annotations

import hashlib
from pathlib import Path

from agentsproof.config import AssertionsGrader, GraderConfig, LLMRubricGrader, LoadedEval
from agentsproof.executor.runner import EvalItem
from agentsproof.schemas.tc_eval import LoadedTCEval

ASSERTION_WEIGHT_WITH_RUBRIC = 0.7
RUBRIC_WEIGHT_WITH_ASSERTIONS = 0.3


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_WARNED: set[tuple[str, str, str]] = set()


def warn_once(ev: LoadedEval) -> None:
    """Print each of the item's warnings to stderr once per process (they are also in its result)."""
    import sys

    for w in ev.warnings:
        key = (ev.kind, ev.name, w)
        if key not in _WARNED:
            _WARNED.add(key)
            print(f"warning: {ev.kind}s/{ev.name}: {w}", file=sys.stderr)


def item_from_eval(ev: LoadedEval, *, trials: int | None = None, threshold: float | None = None) -> EvalItem:
    warn_once(ev)
    cfg = ev.config
    task = cfg.primary_task
    return EvalItem(
        id=f"{ev.kind}s/{ev.name}",
        name=ev.name,
        kind=ev.kind,
        source_path=str(ev.source_path),
        system_prompt=ev.system_prompt or ev.source_text,
        task_name=task.name,
        prompt=task.instruction,
        graders=list(task.graders),
        trials=trials if trials is not None else cfg.defaults.trials,
        timeout=cfg.defaults.timeout,
        threshold=threshold if threshold is not None else cfg.defaults.threshold,
        eval_path=str(ev.path.resolve()),
        source_sha256=sha256_text(ev.system_prompt or ev.source_text),
        warnings=tuple(ev.warnings),
    )


def case_graders(expected_output: str | None, assertions: list[str]) -> list[GraderConfig]:
    """The spec's weight rule: 0.7/0.3 when both, 1.0 when one, no graders (score 1.0) when neither."""
    graders: list[GraderConfig] = []
    both = bool(assertions) and expected_output is not None
    if assertions:
        graders.append(
            AssertionsGrader(type="assertions", assertions=assertions, weight=ASSERTION_WEIGHT_WITH_RUBRIC if both else 1.0)
        )
    if expected_output is not None:
        rubric = (
            "Score how well the response delivers the expected output described below. 1.0 = fully delivers it, "
            "0.5 = partly, 0 = not at all.\n\nExpected output:\n" + expected_output
        )
        graders.append(LLMRubricGrader(type="llm_rubric", rubric=rubric, weight=RUBRIC_WEIGHT_WITH_ASSERTIONS if both else 1.0))
    return graders


def items_from_tc_eval(tc: LoadedTCEval, *, trials: int, threshold: float, timeout: float) -> list[EvalItem]:
    sha = sha256_text(tc.skill_text)
    items = []
    for lc in tc.cases:
        case = lc.case
        items.append(
            EvalItem(
                id=f"case-{case.id}",
                name=f"case {case.id}",
                kind="case",
                source_path=str(tc.skill_path),
                system_prompt=tc.skill_text,
                task_name=f"case-{case.id}",
                prompt=lc.full_prompt(),
                graders=case_graders(case.expected_output, case.assertions),
                trials=trials,
                timeout=timeout,
                threshold=threshold,
                eval_path=str(tc.path.resolve()),
                source_sha256=sha,
            )
        )
    return items


def plugin_name_for_eval(path: Path) -> str:
    """evals/<plugin>/skills/<skill>/eval.yaml -> <plugin>; else the eval's folder parent name."""
    parts = path.resolve().parts
    for marker in ("skills", "agents"):
        if marker in parts[:-1]:
            idx = len(parts) - 1 - parts[::-1].index(marker)
            if idx >= 1:
                return parts[idx - 1]
    return path.resolve().parent.name


def plugin_name_for_dir(directory: Path) -> str:
    d = directory.resolve()
    if d.name in ("skills", "agents") and d.parent.name:
        return d.parent.name
    return d.name
