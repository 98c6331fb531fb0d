"""The replay target: a trial's answer and steps read from a recording, not from a model.

agentv's ``replay`` provider (``.agentv/providers.yaml``: ``{id: replay, label, source_target,
fixtures | transcripts, suite}``) substitutes a recorded run of the ``source_target`` for a
live call, so graders run fresh on it, offline. As agentv looks it up:

- ``fixtures``: JSONL of ``agentv.replay_fixture.v1`` records, one per run; the record whose
  ``test_id`` is the test's, whose ``source_target`` is the entry's, whose ``suite`` is the
  entry's ``suite`` (when it gives one) and whose ``attempt`` is 0 (the first trial; trial
  N reads attempt N when recorded, else 0);
- ``transcripts``: JSONL of ``agentv.transcript.v1`` lines (one message a line, with
  ``message_index``), grouped by ``test_id`` and ``target``.

No match, or more than one, errors the trial with the key, as in agentv. The answer is the
last assistant message's text; every ``tool_calls`` entry a step of the trajectory
(``tool``, ``input``, ``output``, ``duration_ms``); the skills the agent loaded are agentv's
(a ``Skill`` tool call's ``skill``/``name``, a ``Read`` of ``skills/<name>/SKILL.md``);
tokens, duration and cost are the recorded ones. Nothing runs and nothing is sent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from agentsproof.model.graders import FieldError, Strict
from agentsproof.model.results import ToolCall, Usage
from agentsproof.targets.base import Target, TargetError, TrialInput, TrialRecord

MAX_RECORDING_BYTES = 50 * 1024 * 1024
_SKILL_PATH = re.compile(r"(?:^|[/\"'\s])(?:\.agents/)?skills/([^/\"'\s]+)/SKILL\.md(?:$|[)\"'\s,;:])")


class ReplayTargetSpec(Strict):
    """A recorded run to replay (agentv's ``replay`` provider)."""

    type: Literal["replay"]
    source_target: str = Field(min_length=1, description="The target whose runs were recorded (the records' source_target / target).")
    fixtures: str | None = Field(None, description="JSONL of agentv replay fixtures (absolute path).")
    transcripts: str | None = Field(None, description="JSONL of agentv transcript lines (absolute path).")
    suite: str | None = Field(None, description="The fixtures' suite to match (default: any).")

    @model_validator(mode="after")
    def _one_source(self) -> ReplayTargetSpec:
        if (self.fixtures is None) == (self.transcripts is None):
            raise FieldError("fixtures", "give exactly one replay source: fixtures or transcripts")
        return self


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type", "text") == "text")
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _skills(calls: list[dict[str, Any]]) -> list[str]:
    """agentv's skill calls (deriveSkillCallsFromToolCalls): a Skill tool call, a Read of a SKILL.md, a path in a Bash command or an output."""
    names: list[str] = []
    for call in calls:
        tool = str(call.get("tool", call.get("name", ""))).lower()
        raw = call.get("input")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if tool == "skill":
            name = args.get("skill", args.get("name"))
            names += [name.strip()] if isinstance(name, str) and name.strip() else []
            continue
        texts = [str(args.get("file_path", args.get("path", args.get("filePath", ""))))] if tool == "read" else []
        texts += [str(args.get("command", ""))] if tool == "bash" else []
        texts += [_json(call["output"])] if "output" in call else []
        names += [m.group(1) for t in texts for m in _SKILL_PATH.finditer(t)]
    return list(dict.fromkeys(names))


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    prompt, completion = int(raw.get("input") or 0), int(raw.get("output") or 0)
    return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion, cache_read_tokens=int(raw.get("cached") or 0))


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        if path.stat().st_size > MAX_RECORDING_BYTES:
            raise TargetError(f"replay: {path} is larger than {MAX_RECORDING_BYTES // 2**20} MiB")
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise TargetError(f"replay: cannot read {path}: {err.strerror or err}") from None
    out = []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise TargetError(f"replay: {path.name} line {i} is not JSON") from None
        if isinstance(obj, dict):
            out.append(obj)
    return out


class ReplayTarget(Target):
    """A recorded run, read back (see the module docstring)."""

    spec_model = ReplayTargetSpec
    kind = "replay"
    uses_workspace = False

    def __init__(self, name: str, spec: ReplayTargetSpec, shown: ReplayTargetSpec, *, model: str | None = None, source: str = "targets.yaml"):
        self.name = name
        self.spec = spec
        self.shown = shown
        self.source = source

    def _messages(self, test_id: str, attempt: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """(the recorded messages, the record's usage/duration/cost fields) of this test."""
        spec = self.spec
        if spec.fixtures is not None:
            rows = [
                r
                for r in _lines(Path(spec.fixtures))
                if r.get("test_id") == test_id and r.get("source_target") == spec.source_target and (spec.suite is None or r.get("suite") == spec.suite)
            ]
            picked = [r for r in rows if int(r.get("attempt") or 0) == attempt] or [r for r in rows if int(r.get("attempt") or 0) == 0]
            key = f"test_id={test_id} source_target={spec.source_target}" + (f" suite={spec.suite}" if spec.suite else "")
            if len(picked) != 1:
                raise TargetError(f"replay: the fixtures hold {'no' if not picked else len(picked)} record(s) for {key}")
            rec = picked[0]
            out = rec.get("output")
            return (out if isinstance(out, list) else []), {"usage": rec.get("token_usage"), "ms": rec.get("duration_ms"), "cost": rec.get("cost_usd")}
        assert spec.transcripts is not None
        lines = [r for r in _lines(Path(spec.transcripts)) if r.get("test_id") == test_id and r.get("target") == spec.source_target]
        if not lines:
            raise TargetError(f"replay: the transcripts hold no record for test_id={test_id} source_target={spec.source_target}")
        lines.sort(key=lambda r: int(r.get("message_index") or 0))
        first = lines[0]
        return lines, {"usage": first.get("transcript_token_usage"), "ms": first.get("transcript_duration_ms"), "cost": first.get("transcript_cost_usd")}

    async def run(self, trial: TrialInput) -> TrialRecord:
        """The recorded answer, steps, skills and usage of this test (no model is called)."""
        import asyncio

        test_id = trial.item.task_name or trial.item.name
        messages, meta = await asyncio.to_thread(self._messages, test_id.split("@", 1)[0], trial.slot[2] if trial.slot else 0)
        calls = [c for m in messages if isinstance(m, dict) for c in (m.get("tool_calls") or []) if isinstance(c, dict)]
        steps = [
            ToolCall(
                name=str(c.get("tool", c.get("name", "tool"))),
                arguments=_json(c.get("input", ""))[:2000],
                result=_json(c.get("output", ""))[:300],
                latency_s=c["duration_ms"] / 1000 if isinstance(c.get("duration_ms"), (int, float)) else None,
                ok=False if isinstance(c.get("output"), dict) and (c["output"].get("status") == "error" or "error" in c["output"]) else None,
            )
            for c in calls
        ]
        said = [_text(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "assistant" and m.get("content") is not None]
        ms, cost = meta["ms"], meta["cost"]
        return TrialRecord(
            answer=said[-1] if said else "",
            trajectory=steps,
            usage=_usage(meta["usage"]) or Usage(),
            latency_s=ms / 1000 if isinstance(ms, (int, float)) else 0.0,
            cost_usd=float(cost) if isinstance(cost, (int, float)) else None,
            skills_invoked=_skills(calls),
        )

    def describe(self) -> dict[str, Any]:
        """The recording replayed (its file and source target)."""
        return {
            "target": self.name,
            "target_type": self.kind,
            "source_target": self.spec.source_target,
            "recording": self.spec.fixtures or self.spec.transcripts,
        }
