"""``agentsproof lint`` on a Harbor task folder: what a run would refuse, and what would make its result mean less.

The folder is read as a run reads it (:func:`agentsproof.formats.harbor.task.read_task`
and the skills' rule): a key that cannot be honoured, a missing ``tests/test.sh``, an
unreadable skill is an error, with its fix. Then, without an engine or a model:

- ``harbor-no-oracle`` (warning): no ``solution/solve.sh``: nothing shows that the verifier
  can give the full reward;
- ``harbor-no-reward`` (warning): ``tests/test.sh`` names neither ``reward.txt`` nor
  ``reward.json`` (nor runs another file of ``tests/`` that does): a verifier that writes
  no reward errors every trial;
- ``harbor-internet`` (warning): no ``[environment] network_mode`` (or ``allow_internet``): Harbor's default, the
  host's network, is what the container gets.
"""

from __future__ import annotations

from pathlib import Path

from agentsproof.core.errors import InputError
from agentsproof.formats.lint.problems import Problem, fix_for

REWARD_NAMES = ("reward.txt", "reward.json")


def _mentions_reward(tests: Path) -> bool:
    for p in sorted(tests.rglob("*"))[:200]:
        if p.is_file() and not p.is_symlink() and p.stat().st_size <= 2_000_000:
            text = p.read_text(encoding="utf-8", errors="replace")
            if any(name in text for name in REWARD_NAMES):
                return True
    return False


def lint_task(path: Path) -> list[Problem]:
    """Every lint problem of the Harbor task at ``path`` (its folder or its task.toml)."""
    from agentsproof.core.inputs import display
    from agentsproof.formats.harbor.skills import find_skills
    from agentsproof.formats.harbor.task import read_task, task_folder

    folder = task_folder(Path(path))
    src = display(folder / "task.toml")
    try:
        task = read_task(folder)
        find_skills(task.folder / "environment", task.dockerfile, task.skills_dir, task.source)
    except InputError as err:
        rule, fix = fix_for(err.message)
        if "cannot run this Harbor task" in err.message:
            rule, fix = "harbor-refused", "run the task with Harbor itself, or remove the key (docs/harbor.md lists what is read)"
        return [Problem(err.source or src, err.field or "", rule, err.message, fix)]
    problems = [
        Problem(src, key, "unknown-key", f"{key} is not a key agentsproof knows; a run ignores it", "remove it, or check docs/harbor.md", "warning")
        for key in task.ignored
    ]
    if task.solution is None:
        problems.append(
            Problem(
                src,
                "solution/solve.sh",
                "harbor-no-oracle",
                "the task has no solution/solve.sh: nothing shows its verifier can give the full reward",
                "add the reference solution",
                "warning",
            )
        )
    if not _mentions_reward(task.tests):
        problems.append(
            Problem(
                display(task.tests / "test.sh"),
                "",
                "harbor-no-reward",
                "no file of tests/ names reward.txt or reward.json: a verifier that writes no reward errors every trial",
                "write the reward to /logs/verifier/reward.txt",
                "warning",
            )
        )
    if not {"allow_internet", "network_mode"} & _environment_keys(task.toml):
        problems.append(
            Problem(
                src,
                "environment.allow_internet",
                "harbor-internet",
                "not given: Harbor's default (true) gives the container the host's network",
                'set network_mode = "no-network" unless the task needs the network',
                "warning",
            )
        )
    return problems


def _environment_keys(toml: Path) -> set[str]:
    import tomllib

    try:
        data = tomllib.loads(toml.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    env = data.get("environment")
    return set(env) if isinstance(env, dict) else set()
