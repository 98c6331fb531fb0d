"""An eval.yaml's oracles, as the preflight checks them (:mod:`agentsproof.executor.oracle`),
built from the file as the run loaded it."""

from __future__ import annotations

from agentsproof.core.inputs import display
from agentsproof.executor.oracle import OraclePlan, OracleTask
from agentsproof.formats.eval_yaml.models import LoadedEval


def oracle_tasks(ev: LoadedEval, agent: bool, all_tasks: bool = True) -> list[OracleTask]:
    """The tasks of a loaded eval.yaml that have an oracle (their own, else the eval's)."""
    cfg = ev.config
    out = []
    for i, task in enumerate(cfg.run_tasks(all_tasks)):
        oracle = task.oracle or cfg.oracle
        if oracle is None:
            continue
        at = f"{cfg.task_field(i)}.oracle" if task.oracle is not None else "oracle"
        seed = ev.task_workspaces.get(i, ev.workspace) if agent else None
        out.append(OracleTask(task.name, at, task.instruction, list(task.graders), oracle, seed, agent))
    return out


def oracle_plan(ev: LoadedEval, agent: bool, all_tasks: bool) -> OraclePlan:
    """What the preflight checks of ``ev``: its tasks with an oracle, the eval's defaults."""
    defaults = ev.config.defaults
    return OraclePlan(
        source=display(ev.path),
        eval_dir=ev.path.resolve().parent,
        tasks=oracle_tasks(ev, agent, all_tasks),
        threshold=defaults.threshold,
        timeout=defaults.timeout,
    )
