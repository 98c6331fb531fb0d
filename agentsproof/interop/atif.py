"""ATIF (Harbor's Agent Trajectory Interchange Format) trajectories of agent trials, both ways.

**Export** (``--atif DIR``): one ``<item>/<arm>-<n>.json`` per agent trial (a Harbor
task's trial as Harbor writes it: ``<task>__<arm>-<n>/agent/trajectory.json``, its reward
in ``<task>__<arm>-<n>/verifier/reward.txt``), schema
``ATIF-v1.4``: a system step (the trial's system prompt), a user step (the instruction),
one agent step per tool call (``tool_calls`` with its ``observation``), and a final agent
step whose message is the answer and whose ``metrics`` hold the trial's usage;
``final_metrics`` totals them. The produced files' contents are copied to
``DIR/files/<sha256[:2]>/<sha256>`` (the flight recorder's layout).

**Import** (``agentsproof import atif``): every ``*.json`` trajectory below a folder (schema
``ATIF-v1.0`` to ``ATIF-v1.7``) becomes a trial: the last agent step's message is the answer,
every tool call a trajectory step (its observation the result), the metrics the usage.

What has no ATIF counterpart travels in ``extra.agentsproof`` (ours, read back on import):
the arm, trial index, case, skill use, produced files, status, error and score. Other tools'
``reasoning_content``, ``logprobs``, token ids, subagent references and timestamps have no
place in a trial and are dropped (named in docs/lint-oracle-regrade.md).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.model.results import FileRecord, RunResult, ToolCall, TrialResult, Usage
from agentsproof.targets.registry import is_agent

SCHEMA_VERSION = "ATIF-v1.4"
READS = re.compile(r"^ATIF-v1\.[0-7]$")
MAX_TRAJECTORY_BYTES = 50_000_000
MAX_FILES = 10_000
NS = uuid.UUID("6f1b3c1e-4d0a-4c55-9a51-2f4a6b0a9e11")


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text.strip().startswith("{") else None
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"input": text}


def trajectory(run: RunResult, item_id: str, target: str, trial: TrialResult) -> dict[str, Any]:
    """One agent trial as an ATIF document."""
    system = next((e.text for e in trial.log if e.role == "system"), "")
    user = next((e.text for e in trial.log if e.role == "user"), "")
    steps: list[dict[str, Any]] = [
        {"step_id": 1, "source": "system", "message": system},
        {"step_id": 2, "source": "user", "message": user},
    ]
    raw: dict[str, str] = {}
    for i, call in enumerate(trial.trajectory, start=1):
        cid = f"call_{i}"
        raw[cid] = call.arguments
        step: dict[str, Any] = {
            "step_id": len(steps) + 1,
            "source": "agent",
            "message": "",
            "tool_calls": [{"tool_call_id": cid, "function_name": call.name, "arguments": _arguments(call.arguments)}],
            "observation": {"results": [{"source_call_id": cid, "content": call.result}]},
        }
        extra = {k: v for k, v in (("latency_s", call.latency_s), ("ok", call.ok)) if v is not None}
        if extra:
            step["extra"] = {"agentsproof": extra}
        steps.append(step)
    u = trial.usage
    metrics: dict[str, Any] = {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens, "cached_tokens": u.cache_read_tokens}
    if trial.cost_usd is not None:
        metrics["cost_usd"] = trial.cost_usd
    if u.cache_write_tokens:
        metrics["extra"] = {"cache_creation_input_tokens": u.cache_write_tokens}
    steps.append({"step_id": len(steps) + 1, "source": "agent", "message": trial.response, "metrics": metrics})
    final: dict[str, Any] = {
        "total_prompt_tokens": u.prompt_tokens,
        "total_completion_tokens": u.completion_tokens,
        "total_cached_tokens": u.cache_read_tokens,
        "total_steps": len(steps),
    }
    if trial.cost_usd is not None:
        final["total_cost_usd"] = trial.cost_usd
    ours = {
        "item": item_id,
        "arm": trial.arm,
        "index": trial.index,
        "case": trial.case,
        "status": trial.status,
        "error": trial.error,
        "score": trial.score,
        "passed": trial.passed,
        "skill_used": trial.skill_used,
        "latency_s": trial.latency_s,
        "files": [f.model_dump(mode="json") for f in trial.files],
        "arguments": raw,
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "session_id": str(uuid.uuid5(NS, f"{run.created_at}|{item_id}|{trial.arm}|{trial.index}")),
        "agent": {"name": target, "version": run.tool_version, "model_name": run.model, "extra": {"harness": "agentsproof"}},
        "notes": f"agentsproof {run.command} trial: {item_id}, {trial.arm} arm, trial {trial.index + 1}",
        "steps": steps,
        "final_metrics": final,
        "extra": {"agentsproof": ours},
    }


def write_atif(run: RunResult, folder: Path, store: Path | None = None) -> list[Path]:
    """Every agent trial of ``run`` as an ATIF file below ``folder``; the paths written.
    Every file goes through :mod:`agentsproof.core.safepath`: a symlink planted in
    ``folder`` (an item's folder, ``files/``) is refused, never written through."""
    from agentsproof.core.inputs import safe_name
    from agentsproof.core.safepath import write_file

    written: list[Path] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for it in run.items:
            if not is_agent(it.target):
                continue
            for arm in (it.with_arm, it.without_arm):
                for t in arm.trials:
                    reward = next((g for g in t.graders if g.type == "verifier"), None)
                    if reward is None:
                        rel = f"{safe_name(it.id)}/{t.arm}-{t.index + 1}.json"
                    else:  # a Harbor task's trial: Harbor's trial folder, agent/trajectory.json and verifier/reward.txt
                        trial_dir = f"{safe_name(it.name)}__{t.arm}-{t.index + 1}"
                        rel = f"{trial_dir}/agent/trajectory.json"
                        if reward.score is not None:
                            write_file(folder, f"{trial_dir}/verifier/reward.txt", f"{reward.score:g}\n".encode())
                    write_file(folder, rel, json.dumps(trajectory(run, it.id, it.target, t), indent=1).encode("utf-8"))
                    written.append(folder / rel)
                    _copy_files(t, store, folder)
    except OSError as err:
        raise InputError(str(folder), "--atif", f"cannot write: {err.strerror or err}") from None
    return written


def _copy_files(t: TrialResult, store: Path | None, folder: Path) -> None:
    """The trial's recorded files, from the store to ``folder/files/`` (read without
    following a link; an entry of the store that is not a regular file is skipped)."""
    from agentsproof.core.safepath import UnsafePath, copy_file

    if store is None:
        return
    for rec in t.files:
        if rec.sha256 and len(rec.sha256) == 64 and all(c in "0123456789abcdef" for c in rec.sha256):
            src = store / rec.sha256[:2] / rec.sha256
            try:
                copy_file(src, folder, f"files/{rec.sha256[:2]}/{rec.sha256}", cap=1 << 40, exist="keep")
            except FileNotFoundError:
                continue
            except UnsafePath as err:
                if err.filename == str(src):  # the store's entry, not the destination
                    continue
                raise


# ------------------------------------------------------------------ import


class Imported:
    """One trajectory read back: the trial, and what it says about itself (ours only)."""

    def __init__(self, path: Path, trial: TrialResult, item: str | None, has_files: bool, agent: str):
        self.path = path
        self.trial = trial
        self.item = item
        self.has_files = has_files
        self.agent = agent


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def read_trajectory(path: Path, src: str) -> Imported:
    """One ATIF trajectory read back as a trial (``src`` names it in errors); InputError naming the field of the first problem."""
    from agentsproof.core.inputs import read_json_file

    data = read_json_file(path, max_bytes=MAX_TRAJECTORY_BYTES, allow_nul=True)  # an agent's output may hold a NUL
    if not isinstance(data, dict):
        raise InputError(src, None, "expected an ATIF trajectory (a JSON object)")
    version = data.get("schema_version")
    if not isinstance(version, str) or not READS.match(version):
        raise InputError(src, "schema_version", f"{version!r}: expected an ATIF version from ATIF-v1.0 to ATIF-v1.7")
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        raise InputError(src, "steps", "must be a non-empty list of steps")
    agent = _dict(data.get("agent"))
    ours = _dict(_dict(data.get("extra")).get("agentsproof"))
    raw_args = _dict(ours.get("arguments"))
    calls: list[ToolCall] = []
    answer = ""
    usage = Usage()
    cost = 0.0
    costed = False
    system = user = ""
    for i, step in enumerate(steps):
        at = f"steps[{i}]"
        if not isinstance(step, dict) or step.get("source") not in ("system", "user", "agent"):
            raise InputError(src, f"{at}.source", "must be 'system', 'user' or 'agent'")
        message = _text(step.get("message"))
        if step["source"] == "system" and not system:
            system = message
        elif step["source"] == "user" and not user:
            user = message
        if step["source"] != "agent":
            continue
        results: dict[str | None, str] = {}
        found = _dict(step.get("observation")).get("results")
        for r in found if isinstance(found, list) else []:
            if isinstance(r, dict):
                results[r.get("source_call_id")] = _text(r.get("content"))
        extra = _dict(_dict(step.get("extra")).get("agentsproof"))
        tool_calls = step.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise InputError(src, f"{at}.tool_calls", "must be a list")
        for j, call in enumerate(tool_calls):
            if not isinstance(call, dict) or not isinstance(call.get("function_name"), str) or not call["function_name"]:
                raise InputError(src, f"{at}.tool_calls[{j}].function_name", "must be a non-empty string")
            cid = call.get("tool_call_id")
            args = raw_args.get(cid) if isinstance(cid, str) and isinstance(raw_args.get(cid), str) else _text(call.get("arguments") or {})
            calls.append(
                ToolCall(
                    name=call["function_name"],
                    arguments=args,
                    result=results.get(cid, ""),
                    latency_s=_number(extra.get("latency_s")),
                    ok=extra.get("ok") if isinstance(extra.get("ok"), bool) else None,
                )
            )
        if message:
            answer = message  # the last agent message is the final answer
        m = step.get("metrics")
        if isinstance(m, dict):
            usage = usage + Usage(
                prompt_tokens=_int(m.get("prompt_tokens")),
                completion_tokens=_int(m.get("completion_tokens")),
                total_tokens=_int(m.get("prompt_tokens")) + _int(m.get("completion_tokens")),
                cache_read_tokens=_int(m.get("cached_tokens")),
                cache_write_tokens=_int(_dict(m.get("extra")).get("cache_creation_input_tokens")),
            )
            if isinstance(m.get("cost_usd"), (int, float)) and not isinstance(m.get("cost_usd"), bool):
                cost += float(m["cost_usd"])
                costed = True
    files = []
    for k, f in enumerate(ours.get("files") or []):
        try:
            files.append(FileRecord.model_validate(f))
        except ValueError:
            raise InputError(src, f"extra.agentsproof.files[{k}]", "is not a file record") from None
    from agentsproof.model.results import LogEvent

    arm = ours.get("arm") if ours.get("arm") in ("with", "without") else "with"
    trial = TrialResult(
        index=_int(ours.get("index")),
        arm=arm,
        case=ours.get("case") if isinstance(ours.get("case"), str) else None,
        status="scored",
        response=answer,
        usage=usage,
        cost_usd=cost if costed else None,
        trajectory=calls,
        files=files,
        skill_used=ours.get("skill_used") if isinstance(ours.get("skill_used"), bool) else None,
        latency_s=_number(ours.get("latency_s")) or 0.0,
        log=[LogEvent(t=0.0, role="system", text=system), LogEvent(t=0.0, role="user", text=user), LogEvent(t=0.0, role="assistant", text=answer)],
    )
    item = ours.get("item") if isinstance(ours.get("item"), str) else None
    return Imported(path, trial, item, "files" in ours, str(agent.get("name") or "imported"))


def find_trajectories(folder: Path) -> Iterator[Path]:
    """The ``*.json`` files below ``folder``, sorted (not the ``files/`` store, no symlinks), at most :data:`MAX_FILES`."""
    n = 0
    for p in sorted(folder.rglob("*.json")):
        if "files" in p.relative_to(folder).parts[:1]:
            continue
        if p.is_symlink() or not p.is_file():
            continue
        n += 1
        if n > MAX_FILES:
            return
        yield p
