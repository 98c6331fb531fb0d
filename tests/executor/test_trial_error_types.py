"""A failure where a trial runs (its seed, its container) is an errored trial with its own
reason, through the real runner: never "failed unexpectedly", never the end of the run."""

from __future__ import annotations

from pathlib import Path

from agentsproof.core.errors import ContainerError
from agentsproof.executor.runner import DualArmRunner, Scheduling
from agentsproof.model.items import EvalItem
from agentsproof.targets.base import Target, TrialInput, TrialRecord


class _Agent(Target):
    """An agent in a workspace whose set-up meets a container failure when told to."""

    kind = "agent-under-test"
    name = "agent-under-test"
    uses_workspace = True

    def __init__(self, fail_prepare: bool) -> None:
        self.fail_prepare = fail_prepare

    async def prepare(self, trial: TrialInput) -> None:
        if self.fail_prepare:
            raise ContainerError("the trial's container could not be started from img:1: no such image")

    async def run(self, trial: TrialInput) -> TrialRecord:
        assert trial.workspace is not None
        return TrialRecord(answer=(trial.workspace / "data.txt").read_text())


def _item(seed: Path) -> EvalItem:
    return EvalItem(id="s/t", name="t", kind="skill", source_path="SKILL.md", system_prompt="x", task_name="t", prompt="count",
                    graders=[], trials=1, timeout=30, threshold=0.5, target="agent-under-test", workspace_seed=seed, arms=("with",))


async def test_a_seed_that_cannot_be_copied_and_a_container_that_cannot_start_are_errored_trials(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "data.txt").write_text("42")
    ok = await DualArmRunner({"agent-under-test": _Agent(False)}, Scheduling(), judge=None).run_item(_item(seed))
    assert ok.with_arm.trials[0].response == "42"  # the same runner and target work with a seed that is there
    gone = await DualArmRunner({"agent-under-test": _Agent(False)}, Scheduling(), judge=None).run_item(_item(tmp_path / "gone"))
    (t,) = gone.with_arm.trials
    assert t.status == "errored" and t.error.startswith(f"cannot copy the workspace seed {tmp_path / 'gone'}"), t.error
    boxed = await DualArmRunner({"agent-under-test": _Agent(True)}, Scheduling(), judge=None).run_item(_item(seed))
    (t,) = boxed.with_arm.trials
    assert t.status == "errored" and t.error == "the trial's container could not be started from img:1: no such image", t.error
