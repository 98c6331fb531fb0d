"""Re-grading recorded trials with (edited) graders, without running any target.

A trial's record holds what grading needs: the answer, the trajectory, skill use, usage,
and for agent trials the files it produced (their contents in the flight recorder's store,
:mod:`agentsproof.executor.recorder`). Each recorded trial is graded again with its case's
*current* graders: agent trials in a workspace rebuilt from the case's seed plus the
recorded files (deleted ones removed). The only calls are the judges' (cached as usual).

A grader that needs what a trial did not record is refused by name (:class:`NotRecorded`):
a ``files`` or ``script`` grader on an agent trial whose produced file has no recorded
content (over the cap, or a report from before the recorder).

**An item with an environment** (a Harbor task, an eval.yaml ``environment:``): its graders
that read the workspace (the Harbor ``verifier``, ``files``, ``script``) run again in a
*fresh* container of the arm's image (built again from the same digest if the engine no
longer has it), whose workdir is the rebuilt workspace: the seed, then the recorded files,
the recorded deletions applied inside too. What the agent changed outside the workdir was
never recorded and is not there (a verifier that reads it grades the image's original).
Every container is labelled and removed, as in a run.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.executor.armscores import panel_record
from agentsproof.executor.recorder import FileStore
from agentsproof.executor.runner import ItemRun
from agentsproof.grading.grade import Judge, TrialContext, combine, failed_gate, grade_all
from agentsproof.grading.registry import entry
from agentsproof.grading.skill_used import chat_skills
from agentsproof.model.items import EvalItem
from agentsproof.model.results import ArmResult, ItemResult, TrialResult
from agentsproof.targets.registry import is_agent

if TYPE_CHECKING:
    from agentsproof.isolation.container import Container
    from agentsproof.isolation.environments import Environments


class NotRecorded(Exception):
    """A grader needs something the saved trial did not record; ``str()`` names both."""


def _needs_workspace(graders: Sequence[Any]) -> list[str]:
    """The graders that read the trial's workspace (``reads_workspace`` in their registered
    entry): they need every produced file's content."""
    return [g.type for g in graders if entry(g.type).reads_workspace]


def _rebuild(item: EvalItem, trial: TrialResult, store: FileStore | None, folder: Path, needing: str) -> None:
    """The trial's workspace as grading saw it, in the new folder ``folder``: the seed (by
    the one tree copier, :mod:`agentsproof.core.treecopy`: links copied as links, bounded),
    then the recorded changes, each written without following a link
    (:mod:`agentsproof.core.safepath`)."""
    from agentsproof.core import safepath
    from agentsproof.core.treecopy import TreeProblem, copy_tree

    seed = item.case_at(trial.index).workspace_seed
    try:
        if seed is not None and seed.is_dir():
            copy_tree(seed, folder)
        else:
            folder.mkdir()
    except TreeProblem as err:
        raise NotRecorded(f"{needing}: the workspace seed {seed} cannot be copied: {err}") from None
    try:
        for rel, data in item.workspace_files:
            safepath.write_file(folder, rel, data)
        for rec in trial.files:
            if rec.status == "deleted":
                _delete(folder, rec.path)
                continue
            content = store.get(rec.sha256) if store is not None and rec.sha256 else None
            if content is None:
                safepath.parts(rec.path)  # a path that leaves the workspace is named as such first
                why = (
                    "its content was not recorded (over the size cap, or a report from before the flight recorder)"
                    if not rec.sha256
                    else "its content is missing from the file store"
                )
                raise NotRecorded(f"{needing} needs the file {rec.path!r} of the {trial.arm}-arm trial #{trial.index + 1}, but {why}")
            safepath.write_file(folder, rec.path, content)
    except safepath.UnsafePath as err:
        raise NotRecorded(f"{needing}: a recorded file is outside the workspace: {err.strerror}") from None


def _delete(folder: Path, rel: str) -> None:
    """Remove the recorded-deleted file ``rel`` (a regular file only; no link is followed)."""
    import os
    import stat

    from agentsproof.core import safepath

    names = safepath.parts(rel)
    try:
        fd = safepath.open_dir(folder, names[:-1], create=False)
    except (FileNotFoundError, safepath.UnsafePath):
        return
    try:
        if stat.S_ISREG(os.stat(names[-1], dir_fd=fd, follow_symlinks=False).st_mode):
            os.unlink(names[-1], dir_fd=fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)


async def _fresh_container(envs: Environments, item: EvalItem, trial: TrialResult, folder: Path) -> Container:
    """A fresh container of the trial's arm's image with ``folder`` (the rebuilt workspace) as
    its workdir, the recorded deletions applied inside too (ContainerError: it cannot be had)."""
    from agentsproof.core.errors import ContainerError

    assert item.environment is not None
    where = f"regrade/{item.id}/{trial.arm}/{trial.index}"
    box = await envs.start(item.environment, trial=where, workspace=folder, baseline=trial.arm == "without")
    try:
        gone = [f"{box.workdir.rstrip('/')}/{rec.path}" for rec in trial.files if rec.status == "deleted"]
        if gone:  # a file of the image's own workdir the agent deleted: not in the rebuilt folder, still in the image
            got = await box.exec(["rm", "-f", "--", *gone], timeout=60.0, user="root")
            if got.returncode != 0:
                raise ContainerError(f"the recorded deletions could not be applied in the container: {got.stderr.decode('utf-8', 'replace').strip()[:200]}")
    except BaseException:
        await envs.remove(box)
        raise
    return box


async def regrade_trial(
    item: EvalItem, trial: TrialResult, store: FileStore | None, judge: Judge | None, environments: Environments | None = None
) -> TrialResult:
    """``trial`` graded again with its case's current graders (a trial whose target failed
    has nothing to grade and is kept as it is); an item with an environment grades in a
    fresh container of ``environments`` (see the module docstring)."""
    if trial.status == "errored" and not trial.graders:
        return trial
    case = item.case_at(trial.index)
    eval_dir = Path(item.eval_path).parent if item.eval_path else None
    agent = is_agent(item.target)
    needs = _needs_workspace(case.graders) if agent else []
    tmp = tempfile.mkdtemp(prefix="agentsproof-regrade-") if needs else None
    box = None
    try:
        folder = None
        if tmp is not None:
            folder = Path(tmp) / "workspace"
            label = f"item {item.id!r} case {case.name!r}: grader {needs[0]!r}"
            _rebuild(item, trial, store, folder, label)
            if item.environment is not None and environments is not None:
                from agentsproof.core.errors import TrialError

                try:
                    box = await _fresh_container(environments, item, trial, folder)
                except TrialError as err:  # the engine could not start or seed it: this trial's grading errored
                    reason = f"regrade: the trial's fresh container could not be had: {err}"
                    return trial.model_copy(update={"status": "errored", "error": reason, "score": None, "passed": None})
        ctx = TrialContext(
            answer=trial.response,
            replies=list(trial.replies or [trial.response]),
            workspace=folder,
            files=list(trial.files),
            trajectory=list(trial.trajectory),
            skill_used=trial.skill_used,
            skills_invoked=trial.skills_invoked if trial.skills_invoked is not None or agent else chat_skills(item.skill, trial.arm),
            skill_name=item.skill.name if item.skill else item.name,
            timeout=item.timeout,
            eval_dir=eval_dir,
            environment=box,
            usage=trial.usage,
            latency_s=trial.latency_s,
            cost_usd=trial.cost_usd,
            llm_calls=len(trial.replies or [trial.response]) if not agent else None,
        )
        graders = await grade_all(trial.response, case.graders, judge, case.prompt, timeout=item.timeout, context=ctx)
    finally:
        if box is not None and environments is not None:
            await environments.remove(box)
        if tmp is not None:
            from agentsproof.core.rmtree import remove_tree

            remove_tree(Path(tmp))
    score = combine(graders)
    if score is None:
        reason = "; ".join(f"grader {g.type} errored: {g.error}" for g in graders if g.errored)
        return trial.model_copy(update={"status": "errored", "error": reason, "graders": graders, "score": None, "passed": None})
    passed = score >= item.threshold - 1e-9 and not failed_gate(case.graders, graders)
    return trial.model_copy(update={"status": "scored", "error": None, "graders": graders, "score": score, "passed": passed})


def check_recorded(item: EvalItem, saved: ItemResult, store: FileStore | None) -> None:
    """Refuse before any judge call when a grader needs what the trials did not record, or
    when a trial's task is no longer the one its index runs in the eval (tasks renamed,
    removed or reordered: its graders would be another task's)."""
    names = [c.name for c in item.cases]
    for arm in (saved.with_arm, saved.without_arm):
        for t in arm.trials:
            if t.case is not None and names and item.case_at(t.index).name != t.case:
                raise NotRecorded(
                    f"item {item.id!r}: the {t.arm}-arm trial #{t.index + 1} answered task {t.case!r}, "
                    f"which the eval now has {'elsewhere' if t.case in names else 'no more'} (its trial would run {item.case_at(t.index).name!r}); "
                    "keep the tasks' names and order to re-grade, or run again"
                )
            if t.case is None and names and len(names) > 1:
                raise NotRecorded(f"item {item.id!r}: the run had one task, the eval now has {len(names)}; run again")
    if not is_agent(item.target):
        return
    for arm in (saved.with_arm, saved.without_arm):
        for t in arm.trials:
            if t.status == "errored" and not t.graders:
                continue
            case = item.case_at(t.index)
            needs = _needs_workspace(case.graders)
            if not needs:
                continue
            for rec in t.files:
                if not _inside_workspace(rec.path):
                    raise NotRecorded(
                        f"item {item.id!r} case {case.name!r}: the {t.arm}-arm trial #{t.index + 1} records the file {rec.path!r}, "
                        "which is not a path inside its workspace (the record was altered)"
                    )
                if rec.status == "deleted":
                    continue
                why = _content_problem(rec.sha256, store)
                if why:
                    raise NotRecorded(
                        f"item {item.id!r} case {case.name!r}: grader {needs[0]!r} needs the file {rec.path!r} of the "
                        f"{t.arm}-arm trial #{t.index + 1}, whose content {why}"
                    )


def _inside_workspace(path: str) -> bool:
    """True for a relative, '/'-separated path with no '..', '.' or empty part (what the
    recorder writes); anything else was not written by a run."""
    from pathlib import PurePosixPath

    if not path or "\x00" in path or "\\" in path or path.startswith("/"):
        return False
    parts = path.split("/")
    return all(p not in ("", ".", "..") for p in parts) and not PurePosixPath(path).is_absolute()


def _content_problem(digest: str | None, store: FileStore | None) -> str | None:
    """Why a recorded file's content cannot be had (None: it can): not recorded, missing
    from the store, or not what its digest says (the store was altered)."""
    if not digest:
        return "was not recorded (over the size cap, or a report from before the flight recorder)"
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        return f"has a digest {digest[:80]!r} that is not a SHA-256 (the record was altered)"
    if store is None or not store.path(digest).is_file():
        return "is missing from the file store"
    if store.get(digest) is None:
        return "in the file store does not match its digest (the store was altered)"
    return None


async def regrade_item(item: EvalItem, saved: ItemResult, store: FileStore | None, judge: Judge | None, parallel: int = 4) -> ItemRun:
    """``saved`` graded again; with eval.yaml ``judge_models`` every judged verdict is asked
    of the panel, as in a run, and the item's ``judge_panel`` record is made anew."""
    limit = asyncio.Semaphore(max(1, parallel))
    tally = None
    if judge is not None and item.judge_models:
        from agentsproof.grading.judge import PanelTally

        tally = PanelTally()
        judge = judge.with_panel(tuple(item.judge_models), item.judge_combine, tally)

    envs = None
    if item.environment is not None:
        from agentsproof.isolation.environments import Environments

        envs = Environments()

    async def one(t: TrialResult) -> TrialResult:
        async with limit:
            return await regrade_trial(item, t, store, judge, envs)

    arms = []
    try:
        if envs is not None:
            await envs.prepare([item.environment] if item.environment is not None else [])
        for arm in (saved.with_arm, saved.without_arm):
            trials = list(await asyncio.gather(*(one(t) for t in arm.trials)))
            arms.append(ArmResult(arm=arm.arm, system_prompt_kind=arm.system_prompt_kind, trials=trials).summarize())
    finally:
        if envs is not None:
            await envs.close()
    run = ItemRun(item=item, with_arm=arms[0], without_arm=arms[1], incomplete=saved.status == "incomplete")
    run.judge_panel = panel_record(item, tally)
    return run


def per_pair(items: Sequence[EvalItem]) -> bool:
    """Whether any case of ``items`` has a grader that judges both arms' trials as a pair (``per_pair``)."""
    return any(entry(g.type).per_pair for it in items for c in (it.cases or (it.case_at(0),)) for g in c.graders)
