"""agentprobe-style JSONL datasets for ``tc-eval cases.jsonl``.

One case per line: ``id``, ``input``, ``expected_answer``, ``answer_match`` (``exact``, the
default, or ``contains``), ``expected_tools`` and ``tags``. Checked on load: bad JSON,
unknown keys, empty inputs, duplicate ids and empty expected answers are one error line
naming the line, exit 30.

Matching (agentprobe's rules): ``exact`` compares the whole answer, surrounding white
space ignored. ``contains`` needs the expected value as a *standalone* value in the
answer, case-insensitively; commas between digits are ignored on both sides (``422,734``
matches ``422734``) and ``50`` does not match inside ``500``, ``1.50`` or ``1,500``. Both
become a regex check of the deterministic grader; expected tools become a ``tool_calls``
grader (the same tools, as many calls). Each failing check's evidence says why the run
failed: wrong answer, empty answer, or wrong tools.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import InputError
from agentsproof.formats.base import ItemRequest, Loaded
from agentsproof.targets.registry import CHAT, is_agent

if TYPE_CHECKING:
    from agentsproof.model.results import ItemResult, RunResult

MAX_BYTES = 20_000_000
KEYS = {"id", "input", "expected_answer", "answer_match", "expected_tools", "tags"}


@dataclass(frozen=True)
class DatasetCase:
    """One line of a JSONL dataset: the prompt, what the answer or the tool calls must be, and the line it is on."""

    id: str
    input: str
    expected_answer: str | None = None
    answer_match: str = "exact"
    expected_tools: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    line: int = 0
    no_tools: bool = False
    """``expected_tools: []`` given: no tool may be called (absent: the tools are not checked)."""


@dataclass
class Dataset:
    """A JSONL dataset's cases, in file order."""

    path: Path
    cases: list[DatasetCase] = field(default_factory=list)


def _strings(value: Any, src: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InputError(src, where, "must be a list of non-empty strings")
    return tuple(value)


def load_dataset(path: Path) -> Dataset:
    """Read and validate a JSONL dataset, one case per non-blank line; InputError naming the line and key otherwise."""
    from agentsproof.core.inputs import check_values, decode_text, display, read_regular

    src = display(path)
    if not path.exists():
        raise InputError(src, None, "file not found")
    text = decode_text(read_regular(path, source=src, field=None, max_bytes=MAX_BYTES), source=src, field=None, name="the file")
    ds = Dataset(path=path)
    seen: dict[str, int] = {}
    for n, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        if not line.strip():
            continue
        at = f"line {n}"
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as err:
            raise InputError(src, at, f"not JSON: {err}") from None
        if not isinstance(row, dict):
            raise InputError(src, at, "expected a JSON object (one case per line)")
        check_values(row, src, at + ":")
        unknown = sorted(set(row) - KEYS)
        if unknown:
            raise InputError(src, f"{at}: {unknown[0]}", f"unknown key; expected one of {', '.join(sorted(KEYS))}")
        cid = row.get("id")
        if isinstance(cid, int) and not isinstance(cid, bool):
            cid = str(cid)
        if not isinstance(cid, str) or not cid.strip():
            raise InputError(src, f"{at}: id", "is missing or empty")
        if cid in seen:
            raise InputError(src, f"{at}: id", f"{cid!r} is also the id on line {seen[cid]}; ids must be unique")
        seen[cid] = n
        inp = row.get("input")
        if not isinstance(inp, str) or not inp.strip():
            raise InputError(src, f"{at}: input", "is missing or empty")
        expected = row.get("expected_answer")
        if expected is not None and (not isinstance(expected, str) or not expected.strip()):
            raise InputError(src, f"{at}: expected_answer", "is empty; leave it out to check only the tools")
        match = row.get("answer_match", "exact")
        if match not in ("exact", "contains"):
            raise InputError(src, f"{at}: answer_match", f"{match!r}: expected 'exact' or 'contains'")
        tools = _strings(row.get("expected_tools", []), src, f"{at}: expected_tools")
        tags = _strings(row.get("tags", []), src, f"{at}: tags")
        # neither an expected answer nor expected tools: the case runs with nothing to check (score 1.0, outputs shown)
        ds.cases.append(DatasetCase(cid, inp, expected, match, tools, tags, n, no_tools="expected_tools" in row and not tools))
    if not ds.cases:
        raise InputError(src, None, "has no cases (one JSON object per line)")
    return ds


# ---------------------------------------------------------------------------- matching

_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d)")


def answer_pattern(expected: str, match: str) -> str:
    """The regex (RE2-compatible: no lookarounds) a ``regexMatch`` check runs."""
    if match == "exact":
        return r"^\s*" + re.escape(expected.strip()) + r"\s*$"
    wanted = _DIGIT_COMMA.sub("", expected.strip())
    body = []
    for i, ch in enumerate(wanted):
        body.append(re.escape(ch))
        if ch.isdigit() and i + 1 < len(wanted) and wanted[i + 1].isdigit():
            body.append(",?")
    # before: start, a character that is not a word character, '.' or ',', or a comma
    # that follows a non-digit; after: end, a non-word character other than ',', or a
    # comma not followed by a digit. A comma between digits is part of the number.
    before = r"(?:^|^,|[^\w.,]|\D,)"
    after = r"(?:$|[^\w,]|,\D|,$)"
    return "(?i)" + before + "".join(body) + after


def graders_for(case: DatasetCase) -> list[Any]:
    """The case's graders: its expected answer as a regex check, its expected tools as a tool_calls check (``expected_tools: []`` alone: no call allowed)."""
    from agentsproof.grading.deterministic import DeterministicGrader
    from agentsproof.grading.tool_calls import ToolCallsGrader

    graders: list[Any] = []
    if case.expected_answer is not None:
        graders.append(DeterministicGrader(type="deterministic", checks={"regexMatch": [answer_pattern(case.expected_answer, case.answer_match)]}))
    if case.expected_tools:
        graders.append(
            ToolCallsGrader(
                type="tool_calls", must_call=sorted(set(case.expected_tools)), min_steps=len(case.expected_tools), max_steps=len(case.expected_tools)
            )
        )
    elif case.no_tools and case.expected_answer is None:  # `expected_tools: []` alone: no tool may be called
        graders.append(ToolCallsGrader(type="tool_calls", max_steps=0))
    return graders


def explain(case: DatasetCase, run: ItemResult) -> None:
    """Relabel the item's checks with the reason a run failed (wrong answer, empty answer,
    wrong tools); the verdicts themselves are the graders'."""
    for arm in (run.with_arm, run.without_arm):
        for t in arm.trials:
            for g in t.graders:
                for c in g.checks:
                    if c.kind == "regexMatch" and case.expected_answer is not None:
                        c.kind, c.target = f"answer ({case.answer_match})", case.expected_answer
                        if not c.passed:
                            got = " ".join(t.response.split())[:120]
                            c.evidence = "empty answer" if not got else f"wrong answer ({case.answer_match}): expected {case.expected_answer!r}, got {got!r}"
                    elif g.type == "tool_calls" and not c.passed:
                        used = [s.name for s in t.trajectory]
                        c.evidence = f"wrong tools: expected {list(case.expected_tools)}, got {used}"


def dataset_items(ds: Dataset, *, skill: tuple[Path, str] | None, trials: int, threshold: float, timeout: float, target: str | None) -> list[Any]:
    """One runner item per case. Without a skill there is nothing to compare against: the
    run is single-armed (the model or target alone, with the plain baseline prompt)."""
    import dataclasses

    from agentsproof.formats.eval_yaml.items import sha256_text
    from agentsproof.model.items import BASELINE_SYSTEM_PROMPT, EvalItem, SkillFile

    agent = target is not None and is_agent(target)
    prompt = skill[1] if skill else BASELINE_SYSTEM_PROMPT
    source = str(skill[0]) if skill else str(ds.path)
    items = []
    for case in ds.cases:
        item = EvalItem(
            id=f"case-{case.id}",
            name=case.id,
            kind="case",
            source_path=source,
            system_prompt=prompt,
            task_name=case.id,
            prompt=case.input,
            graders=graders_for(case),
            trials=trials,
            timeout=timeout,
            threshold=threshold,
            eval_path=str(ds.path.resolve()),
            source_sha256=sha256_text(prompt),
            target=target if agent and target is not None else CHAT,
            skill=SkillFile(name=skill[0].parent.name if skill[0].name == "SKILL.md" else skill[0].stem, kind="skill", text=skill[1], source_path=skill[0])
            if agent and skill
            else None,
        )
        items.append(item if skill else dataclasses.replace(item, arms=("with",)))
    return items


def _explain_run(ds: Dataset, run: RunResult) -> None:
    by_id = {f"case-{c.id}": c for c in ds.cases}
    for item in run.items:
        case = by_id.get(item.id)
        if case is not None:
            explain(case, item)


class JsonlDataset:
    """agentprobe-style JSONL datasets (``tc-eval cases.jsonl``): one item per line."""

    name = "jsonl"

    def detect(self, path: Path) -> bool:
        """A ``.jsonl`` file (not agentv's tests one a line, which are an EVAL.yaml's)."""
        from agentsproof.formats.agentevals.cases import is_agentv_jsonl

        return path.suffix.lower() == ".jsonl" and not is_agentv_jsonl(path)

    def discoverable(self, path: Path) -> bool:
        """Never: a dataset is run on its own, not by ``eval-all``."""
        return False  # eval-all runs a plugin's eval files; a dataset is run on its own

    def load(self, path: Path, request: ItemRequest) -> Loaded:
        """One item per case, on ``--skill`` when given (else single-armed), its failed checks relabelled with the reason after the run."""
        from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_text

        ds = load_dataset(path)
        skill = None
        if request.skill is not None:
            given = Path(request.skill)
            if not given.is_file():
                raise InputError(display(given), "--skill", "file not found")
            text = read_text(given, source=display(given), field="--skill", max_bytes=MAX_SOURCE_FILE_BYTES, what="skill file")
            if not text.strip():
                raise InputError(display(given), "--skill", "is empty")
            skill = (given, text)
        trials, threshold, timeout = request.case_trials(), request.case_threshold(), request.case_timeout()
        items = dataset_items(ds, skill=skill, trials=trials, threshold=threshold, timeout=timeout, target=request.target)
        if any(it.graders and not is_agent(it.target) and any(g.type == "tool_calls" for g in it.graders) for it in items):
            from agentsproof.core.notice import note

            note("cases with expected_tools are graded on the agent's tool calls; a chat trial makes none (run with --target NAME)")
        settings = {"trials": trials, "threshold": threshold, "timeout": timeout, "dataset": display(path)}
        return Loaded(
            self.name,
            Path(path),
            items,
            Path(path).stem,
            settings=settings,
            single_arm=skill is None,
            skill_path=skill[0] if skill else None,
            after=lambda run: _explain_run(ds, run),
        )


FORMAT = JsonlDataset()
