"""What ``compare`` reads: our JSON reports, agentprobe report files and agentv
``index.jsonl`` result files, each turned into a :class:`RunResult`.

The format is detected from the content, not the name: an object with ``items`` is one of
our reports; an object with ``run_id`` and ``results`` an agentprobe report; lines of
objects with ``test_id`` (or a folder holding ``index.jsonl``) an agentv run. Anything
else is one error line. A foreign run becomes a single-arm run: one case per test id, one
with-arm trial per result line; its errored runs stay errored (left out of the counts).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.model.results import ArmResult, ItemResult, RunResult, TrialResult, Usage
from agentsproof.model.settings import RunSettings

UNKNOWN = "unknown format: expected an agentsproof JSON report, an agentprobe report (.json) or an agentv index.jsonl"
MAX_BYTES = 2_000_000_000


def _read(path: Path) -> tuple[str, str]:
    from agentsproof.core.inputs import decode_text, display, read_regular

    src = display(path)
    if not path.exists():
        raise InputError(src, None, "file not found")
    if path.is_dir():
        index = path / "index.jsonl"
        if not index.is_file():
            raise InputError(src, None, "is a folder without an index.jsonl (an agentv run folder holds one)")
        path, src = index, display(index)
    return src, decode_text(read_regular(path, source=src, field=None, max_bytes=MAX_BYTES), source=src, field=None, name="the file")


def detect(text: str) -> str:
    """'agentsproof', 'agentprobe', 'agentv' or 'unknown'."""
    stripped = text.lstrip("\ufeff").strip()
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        if "items" in data:
            return "agentsproof"
        if "run_id" in data and "results" in data:
            return "agentprobe"
        if "test_id" in data:
            return "agentv"
        return "unknown"
    first = next((line for line in stripped.splitlines() if line.strip()), "")
    try:
        row = json.loads(first)
    except (ValueError, RecursionError):
        return "unknown"
    return "agentv" if isinstance(row, dict) and "test_id" in row else "unknown"


def load_any(path: Path) -> RunResult:
    """A run from ``path`` in whichever format it is (ours, an agentprobe report, agentv results); InputError when none."""
    from agentsproof.report.saved import load_run

    path = Path(path)
    src, text = _read(path)
    kind = detect(text)
    if kind == "agentsproof":
        return load_run(path if not path.is_dir() else path / "index.jsonl")
    if kind == "agentprobe":
        return from_agentprobe(json.loads(text.lstrip("\ufeff")), src)
    if kind == "agentv":
        return from_agentv(text, src)
    raise InputError(src, None, UNKNOWN)


def _case(case_id: str, trials: list[TrialResult], source: str, threshold: float = 1.0) -> ItemResult:
    arm = ArmResult(arm="with", system_prompt_kind="agent", trials=trials).summarize()
    item = ItemResult(
        id=f"case-{case_id}",
        name=case_id,
        kind="case",
        source_path=source,
        source_sha256="",
        task_name=case_id,
        instruction="",
        threshold=threshold,
        trials_requested=len(trials),
        with_arm=arm,
        without_arm=ArmResult(arm="without", system_prompt_kind="baseline"),
        pass_rate=arm.pass_rate,
    )
    from agentsproof.stats.single_arm import grade_single_arm

    return grade_single_arm(item, incomplete=False)


def _run(plugin: str, items: list[ItemResult], provider: str, model: str, created: str, settings: RunSettings) -> RunResult:
    from agentsproof.executor.finalize import build_run

    run = build_run("tc-eval", plugin or "run", items, provider=provider, model=model, judge_model="", settings=settings)
    if created:
        run.created_at = created
    return run


def _str(v: Any) -> str:
    return "" if v is None else str(v)


def from_agentprobe(data: dict[str, Any], src: str) -> RunResult:
    """An agentprobe ``RunReport`` (run_id, dataset, adapter, results[], agent_config)."""
    results = data.get("results")
    if not isinstance(results, list):
        raise InputError(src, "results", "must be a list (an agentprobe report)")
    by_case: dict[str, list[TrialResult]] = {}
    for i, r in enumerate(results):
        if not isinstance(r, dict) or not isinstance(r.get("case_id"), str) or not isinstance(r.get("passed"), bool):
            raise InputError(src, f"results[{i}]", "needs a string case_id and a boolean passed")
        trials = by_case.setdefault(r["case_id"], [])
        errored = bool(r.get("errored"))
        reasons = [str(x) for x in r.get("failure_reasons") or []]
        trials.append(
            TrialResult(
                index=len(trials),
                arm="with",
                status="errored" if errored else "scored",
                error=_str(r.get("error")) or ("; ".join(reasons) if errored else None),
                response=_str(r.get("answer")),
                latency_s=float(r.get("latency_ms") or 0) / 1000,
                score=None if errored else (1.0 if r["passed"] else 0.0),
                passed=None if errored else r["passed"],
                log=[],
                graders=[],
            )
        )
    config = data.get("agent_config") or {}
    if not isinstance(config, dict):
        raise InputError(src, "agent_config", "must be an object")
    items = [_case(cid, trials, src) for cid, trials in by_case.items()]
    return _run(
        _str(data.get("dataset")),
        items,
        "agentprobe",
        _str(data.get("adapter")),
        _str(data.get("started_at")),
        RunSettings(baseline="none", config={str(k): str(v) for k, v in config.items()}, source_format="agentprobe", run_id=_str(data.get("run_id"))),
    )


def from_agentv(text: str, src: str) -> RunResult:
    """agentv ``index.jsonl``: one line per test result (test_id, score, execution_status)."""
    by_case: dict[str, list[TrialResult]] = {}
    suite = target = created = ""
    for n, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as err:
            raise InputError(src, f"line {n}", f"not JSON: {err}") from None
        if not isinstance(row, dict) or not isinstance(row.get("test_id"), str):
            raise InputError(src, f"line {n}", "needs a string test_id (an agentv result line)")
        suite, target, created = suite or _str(row.get("suite")), target or _str(row.get("target")), created or _str(row.get("timestamp"))
        status = _str(row.get("execution_status"))
        score = row.get("score")
        for key in ("score", "duration_ms"):
            value = row.get(key)
            if isinstance(value, float) and not math.isfinite(value):
                raise InputError(src, f"line {n}", f"{key} is {value} (NaN or infinite), not a number")
        errored = status == "execution_error" or not isinstance(score, (int, float)) or isinstance(score, bool)
        verdicts = [s.get("verdict") for s in row.get("scores") or [] if isinstance(s, dict)]
        passed = status == "ok" if status else all(v == "pass" for v in verdicts)
        usage = row.get("token_usage") or {}
        tokens = (int(usage.get("input") or 0), int(usage.get("output") or 0)) if isinstance(usage, dict) else (0, 0)
        trials = by_case.setdefault(row["test_id"], [])
        trials.append(
            TrialResult(
                index=len(trials),
                arm="with",
                status="errored" if errored else "scored",
                error=(_str(row.get("error")) or f"execution_status {status or 'missing'}") if errored else None,
                latency_s=float(row.get("duration_ms") or 0) / 1000,
                usage=Usage(prompt_tokens=tokens[0], completion_tokens=tokens[1], total_tokens=sum(tokens)),
                score=None if errored or not isinstance(score, (int, float)) else float(score),
                passed=None if errored else passed,
            )
        )
    if not by_case:
        raise InputError(src, None, "has no result lines")
    items = [_case(cid, trials, src) for cid, trials in by_case.items()]
    return _run(suite, items, "agentv", target, created, RunSettings(baseline="none", source_format="agentv"))


__all__ = ["UNKNOWN", "detect", "from_agentprobe", "from_agentv", "load_any"]
