"""Verifier grader: a Harbor task's ``tests/test.sh``, run in the trial's container after the agent.

The task's ``tests/`` folder (beside the eval file, out of the agent's sight until now) is
copied to ``/tests`` in the trial's own container, ``/logs/verifier/`` is made empty (what
the agent may have left there does not count), and ``bash /tests/test.sh`` runs in the
container's workspace folder with the grader's ``env`` (Harbor's ``[verifier] env``), as
its ``user`` when one is given, bounded by its ``timeout``. The script is made executable
and run itself (its ``#!`` line; bash when it has none), as Harbor runs it. Its score is the reward it
wrote, as Harbor reads it:

- ``/logs/verifier/reward.json``: an object (or a bare number); its ``reward`` when it has
  one, else the mean of its numbers (each one a check);
- else ``/logs/verifier/reward.txt``: one number (``1``, ``0``, ``0.75``).

A reward that is missing, not a number, or outside 0..1, and a verifier that times out or
cannot run, make the grader (so the trial) *errored* with the reason, never a 0: a broken
verifier is not the agent's failure. test.sh's exit status is evidence only (Harbor's
verifiers exit 0 after writing a 0).
"""

from __future__ import annotations

import json
import math
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import Field, field_validator

from agentsproof.core.units import seconds
from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.model.graders import MAX_WEIGHT, FieldError, Strict, script_path
from agentsproof.model.results import CheckResult, GraderResult

TESTS_DIR = "/tests"
LOGS_DIR = "/logs/verifier"
REWARD_TXT = f"{LOGS_DIR}/reward.txt"
REWARD_JSON = f"{LOGS_DIR}/reward.json"
MAX_REWARD_BYTES = 64 * 1024
MAX_VERIFIER_TIMEOUT = 24 * 3600.0
DEFAULT_TIMEOUT = 600.0
"""Harbor's default ``[verifier] timeout_sec``."""
TAIL_CHARS = 1_500


class VerifierGrader(Strict):
    """A Harbor verifier: ``tests/test.sh`` run in the trial's container, scored by the reward it writes.

    ``tests`` is the folder (relative to the eval file) copied to ``/tests``; ``script`` the
    file in it that runs. The score is ``/logs/verifier/reward.json`` (``reward``, or the
    mean of its numbers), else ``/logs/verifier/reward.txt`` (a number from 0 to 1); no reward, a malformed one or a timeout errors the trial, never scores 0.
    Needs the eval's ``environment:`` (a Harbor task folder has one).
    """

    type: Literal["verifier"]
    tests: str = Field("tests", description="The folder copied to /tests in the container, relative to the eval file.")
    script: str = Field("test.sh", description="The file in that folder that runs (its #! line; bash when it has none), e.g. test.sh.")
    timeout: float = Field(
        DEFAULT_TIMEOUT,
        gt=0,
        le=MAX_VERIFIER_TIMEOUT,
        strict=False,
        allow_inf_nan=False,
        description="Seconds the verifier may run (Harbor's [verifier] timeout_sec).",
    )
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables for the verifier (Harbor's [verifier] env).")
    user: str | None = Field(None, min_length=1, description="The OS user it runs as in the container; default: the container's.")
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")

    @field_validator("tests", "script")
    @classmethod
    def _relative(cls, value: str) -> str:
        return script_path(value)

    @field_validator("env")
    @classmethod
    def _names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not name or not (name[0].isalpha() or name[0] == "_") or not all(c.isalnum() or c == "_" for c in name):
                raise FieldError(f"env.{name}", "is not a variable name")
        return value


def _errored(spec: VerifierGrader, reason: str) -> GraderResult:
    return GraderResult(type="verifier", weight=spec.weight, errored=True, error=reason)


def _tail(data: bytes) -> str:
    from agentsproof.core.scrub import clip

    text = data.decode("utf-8", errors="replace").strip()
    return clip(" | ".join(line.strip() for line in text.splitlines()[-8:] if line.strip()), TAIL_CHARS, tail=True)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def parse_reward_txt(data: bytes) -> tuple[float | None, str]:
    """``reward.txt``'s number, or (None, what is wrong with it)."""
    text = data.decode("utf-8", errors="replace").strip()
    if not text:
        return None, f"{REWARD_TXT} is empty"
    try:
        value = float(text.split()[0]) if len(text.split()) == 1 else None
    except ValueError:
        value = None
    if value is None or not math.isfinite(value):
        shown = text if len(text) <= 60 else text[:59] + "…"
        return None, f"{REWARD_TXT} is not a number: {shown!r}"
    return value, ""


def parse_reward_json(data: bytes) -> tuple[float | None, list[CheckResult], str]:
    """``reward.json``'s reward (its ``reward``, else the mean of its numbers) and one check per number; or (None, [], the problem)."""
    try:
        obj = json.loads(data.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError) as err:
        return None, [], f"{REWARD_JSON} is not valid JSON ({err})"
    if _number(obj) is not None:  # a bare number, as Harbor accepts
        return float(obj), [], ""
    if not isinstance(obj, dict) or not obj:
        return None, [], f"{REWARD_JSON} is not a JSON object of rewards"
    numbers = {str(k): _number(v) for k, v in obj.items()}
    bad = [k for k, v in numbers.items() if v is None]
    if "reward" in obj:
        reward = numbers["reward"]
        if reward is None:
            return None, [], f"{REWARD_JSON}: 'reward' is not a number: {obj['reward']!r}"
    elif bad:
        return None, [], f"{REWARD_JSON}: {bad[0]!r} is not a number: {obj[bad[0]]!r}"
    else:
        values = [v for v in numbers.values() if v is not None]
        reward = sum(values) / len(values)
    checks = [
        CheckResult(kind="reward", target=k, passed=v is not None and v >= 1.0 - 1e-9, evidence=f"{k} = {v:g}") for k, v in numbers.items() if v is not None
    ]
    return reward, checks, ""


def _in_range(spec: VerifierGrader, reward: float, where: str) -> GraderResult | None:
    if not -1e-9 <= reward <= 1 + 1e-9:
        return _errored(spec, f"the verifier's reward {reward:g} ({where}) is outside 0..1")
    return None


def _tests_folder(spec: VerifierGrader, eval_dir: Path | None) -> Path | str:
    """The host folder copied to /tests, or why it cannot be used."""
    if eval_dir is None:
        return "the verifier has no eval folder to find its tests in"
    root = eval_dir.resolve()
    folder = (eval_dir / spec.tests).resolve()
    if not folder.is_relative_to(root):
        return f"tests folder {spec.tests!r} leads out of the eval's folder (a symlink); not run"
    if not folder.is_dir():
        return f"tests folder {spec.tests!r} not found beside the eval file"
    if not (folder / spec.script).is_file() or not (folder / spec.script).resolve().is_relative_to(folder):
        return f"{spec.tests}/{spec.script} not found (or a symlink out of it)"
    return folder


async def grade(spec: VerifierGrader, given: GradeInput) -> GraderResult:
    """Run the verifier in the trial's container; the reward it wrote is the score."""
    from agentsproof.core.errors import TrialError

    ctx = given.context
    env = getattr(ctx, "environment", None)
    if env is None:
        return _errored(
            spec, "the verifier runs in the trial's container, and this trial has none (give the eval an environment:, or run a Harbor task folder)"
        )
    folder = _tests_folder(spec, ctx.eval_dir)
    if isinstance(folder, str):
        return _errored(spec, folder)
    limit = spec.timeout  # the verifier's own ([verifier] timeout_sec), not the agent's
    script = str(PurePosixPath(TESTS_DIR) / spec.script)
    try:
        # what the agent left at /tests or /logs/verifier does not count: both start empty
        # (and /logs/verifier writable by a verifier [verifier] user runs as)
        prep = await env.exec(
            ["sh", "-c", f"rm -rf {TESTS_DIR} {LOGS_DIR} && mkdir -p {TESTS_DIR} {LOGS_DIR} /logs/agent /logs/artifacts && chmod 777 {LOGS_DIR}"],
            timeout=60.0,
            user="root",
        )
        if prep.returncode != 0:
            return _errored(spec, f"cannot prepare {TESTS_DIR} and {LOGS_DIR} in the container: {_tail(prep.stderr or prep.stdout)}")
        await env.copy_in(folder, TESTS_DIR)
        await env.exec(["chmod", "+x", script], timeout=60.0, user="root")
        # run as Harbor does: the script itself (its #! line), bash when it has none
        out = await env.exec(["bash", "-c", '"$0"', script], env=dict(spec.env), timeout=limit, user=spec.user)
    except TrialError as err:  # ContainerError: the container cannot run it
        return _errored(spec, f"the verifier could not run: {err}")
    status = f"test.sh exited {out.returncode}" + (f" ({out.limit})" if out.limit else "")
    if out.timed_out:
        return _errored(spec, f"the verifier timed out after {seconds(limit)}" + (f": {_tail(out.stdout)}" if out.stdout.strip() else ""))
    evidence = _tail(out.stdout) or _tail(out.stderr)
    raw = await env.read_file(REWARD_JSON, cap_bytes=MAX_REWARD_BYTES)  # Harbor reads reward.json first
    if raw is not None:
        reward, checks, problem = parse_reward_json(raw)
        if reward is None:
            return _errored(spec, f"{problem} ({status})")
        return _in_range(spec, reward, REWARD_JSON) or GraderResult(
            type="verifier", weight=spec.weight, score=min(max(reward, 0.0), 1.0), checks=checks, reasoning=f"reward {reward:g} from {REWARD_JSON} ({status})"
        )
    txt = await env.read_file(REWARD_TXT, cap_bytes=MAX_REWARD_BYTES)
    if txt is None:
        tail = f": {evidence}" if evidence else ""
        return _errored(spec, f"the verifier wrote no reward ({REWARD_TXT} or {REWARD_JSON}); {status}{tail}")
    reward, problem = parse_reward_txt(txt)
    if reward is None:
        return _errored(spec, f"{problem} ({status})")
    check = CheckResult(
        kind="reward", target=REWARD_TXT, passed=reward >= 1.0 - 1e-9, evidence=f"reward {reward:g}; {status}" + (f": {evidence}" if evidence else "")
    )
    return _in_range(spec, reward, REWARD_TXT) or GraderResult(
        type="verifier", weight=spec.weight, score=min(max(reward, 0.0), 1.0), checks=[check], reasoning=f"reward {reward:g} ({status})"
    )


GRADER = GraderEntry(
    type="verifier",
    config=VerifierGrader,
    grade=grade,
    agent_only=True,
    runs_last=True,
    reads_workspace=True,
)
