"""Result models: check → grader → trial → arm → item → run.

These pydantic models are the JSON report (``RunResult.model_dump_json``); the HTML and
Markdown reports render from the same objects. ``SCHEMA_VERSION`` changes whenever a field
is renamed or removed; new optional fields do not change it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

SCHEMA_VERSION = "1"

Grade = Literal["A", "B", "C", "F"]
GRADE_BANDS: list[tuple[Grade, float]] = [("A", 0.30), ("B", 0.15), ("C", 0.0)]


def compute_grade(delta: float) -> Grade:
    """A ≥ +0.30, B ≥ +0.15, C ≥ 0.00, F < 0, on the delta **as printed** (two decimals).

    A grade is read beside the number it is printed with: +0.1499 prints "+0.15" and is
    a B, −0.0001 prints "+0.00" and is a C (the label never contradicts its own numbers).
    Deltas are rounded to 9 decimals first, so 0.45 − 0.15 (= 0.30000000000000004 or
    0.29999999999999993 in binary floating point) lands on the boundary it means.
    """
    d = round(round(delta, 9), 2)
    for grade, low in GRADE_BANDS:
        if d >= low:
            return grade
    return "F"


class Usage(BaseModel):
    """Tokens of one or more model calls, as the provider counted them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cache_read_tokens: int = Field(0, description="Of prompt_tokens, those read from the provider's prompt cache.")
    cache_write_tokens: int = Field(0, description="Of prompt_tokens, those written to the provider's prompt cache.")

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class CheckResult(BaseModel):
    """One check of a grader: a string/regex check, an assertion, or a rubric verdict."""

    kind: str = Field(description="mustContain | mustNotContain | regexMatch | assertion | rubric")
    target: str = Field(description="The string, pattern, assertion text or rubric checked.")
    passed: bool
    evidence: str = Field("", description="Why: the matched text, a quote from the judge, or what was missing.")


class GraderResult(BaseModel):
    """One grader on one trial: its score, its checks and the judge tokens it used."""

    type: str = Field(description="deterministic | llm_rubric | assertions")
    weight: float
    score: float | None = Field(None, description="0..1; None when the grader errored.")
    errored: bool = False
    error: str | None = None
    checks: list[CheckResult] = Field(default_factory=list)
    reasoning: str | None = Field(None, description="The judge's reasoning, for LLM graders.")
    usage: Usage = Field(default_factory=Usage)


class LogEvent(BaseModel):
    """One entry of a trial's session log."""

    t: float = Field(description="Seconds since the trial started.")
    role: str = Field(description="system | user | assistant | judge | error | info | tool")
    text: str


class ToolCall(BaseModel):
    """One step of an agent's trajectory."""

    name: str
    arguments: str = Field("", description="The call's arguments (JSON text or a command line), capped.")
    result: str = Field("", description="A short summary of what the tool returned.")
    latency_s: float | None = None
    ok: bool | None = Field(None, description="False when the tool reported a failure; None when unknown.")


class FileRecord(BaseModel):
    """A file the agent created, changed or deleted in its workspace."""

    path: str = Field(description="Relative to the workspace, '/'-separated.")
    status: Literal["created", "changed", "deleted"]
    size: int = 0
    preview: str | None = Field(None, description="The start of a text file; None for binary files.")
    sha256: str | None = Field(
        None, description="Its content's digest in the report's file store (<report>.files/), for regrade; None: not recorded (deleted, over the size cap)."
    )


Arm = Literal["with", "without", "plugin"]
"""Which arm a trial ran in: with the skill, without it (the baseline), or with every skill of
the plugin installed (``--arms ...,plugin``)."""


class TrialResult(BaseModel):
    """One trial of one arm: the reply, its grades, cost and what an agent did."""

    index: int
    arm: Arm = Field(description="'plugin': with every skill of the plugin installed (--arms ...,plugin).")
    case: str | None = Field(None, description="The task (case) this trial ran, for an item with several tasks; None: the item's one task.")
    status: Literal["scored", "errored"]
    error: str | None = Field(None, description="Why the trial errored (provider failure, timeout, judge failure).")
    response: str = ""
    latency_s: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    score: float | None = Field(None, description="Weighted grader average; None when errored.")
    passed: bool | None = Field(None, description="score >= threshold; None when errored.")
    graders: list[GraderResult] = Field(default_factory=list)
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    log: list[LogEvent] = Field(default_factory=list)
    cached: bool = Field(False, description="The trial's reply came from the response cache (no call was made).")
    trajectory: list[ToolCall] = Field(default_factory=list, description="Every tool call of an agent trial, in order.")
    files: list[FileRecord] = Field(default_factory=list, description="Files created, changed or deleted in the trial's workspace.")
    skill_used: bool | None = Field(None, description="Whether the agent loaded or read the skill; None when unknown.")
    skills_invoked: list[str] | None = Field(None, description="The skills the agent loaded, in order (plugin arm); None when unknown or not asked.")
    replies: list[str] | None = Field(None, description="A multi-turn trial: the reply to each user message, in order (the last is response); None: one turn.")
    workspace: str | None = Field(None, description="The kept workspace folder (--keep-workspaces).")


class ArmResult(BaseModel):
    """The trials of one arm of an item and their totals."""

    arm: Arm
    system_prompt_kind: str = Field(description="'skill', 'agent' or 'baseline'.")
    trials: list[TrialResult] = Field(default_factory=list)
    scored: int = 0
    errored: int = 0
    mean_score: float | None = None
    pass_rate: float | None = None
    passed_trials: int = 0
    mean_latency_s: float | None = None
    total_usage: Usage = Field(default_factory=Usage)
    mean_total_tokens: float | None = None
    total_cost_usd: float | None = None
    tool_counts: dict[str, int] = Field(default_factory=dict, description="Tool calls by tool name, over all trials.")
    skill_used_rate: float | None = Field(None, description="Of the trials that could tell, the share that loaded the skill.")

    def summarize(self) -> ArmResult:
        """Recompute the totals from ``trials`` in place; returns the arm itself."""
        scored = [t for t in self.trials if t.status == "scored"]
        self.scored = len(scored)
        self.errored = len(self.trials) - len(scored)
        self.passed_trials = sum(1 for t in scored if t.passed)
        self.mean_score = sum(t.score or 0.0 for t in scored) / len(scored) if scored else None
        self.pass_rate = self.passed_trials / len(scored) if scored else None
        lat = [t.latency_s for t in scored]
        self.mean_latency_s = sum(lat) / len(lat) if lat else None
        total = Usage()
        for t in self.trials:
            total = total + t.usage
        self.total_usage = total
        self.mean_total_tokens = sum(t.usage.total_tokens for t in scored) / len(scored) if scored else None
        costs = [t.cost_usd for t in self.trials if t.cost_usd is not None]
        self.total_cost_usd = sum(costs) if costs else None
        counts: dict[str, int] = {}
        for t in self.trials:
            for step in t.trajectory:
                counts[step.name] = counts.get(step.name, 0) + 1
        self.tool_counts = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        known = [t.skill_used for t in self.trials if t.skill_used is not None]
        self.skill_used_rate = sum(1 for k in known if k) / len(known) if known else None
        return self


class ItemResult(BaseModel):
    """One skill/agent eval, or one tc-eval case."""

    id: str = Field(description="Stable id used by `compare`: '<kind>s/<name>' or 'case-<id>'.")
    name: str
    kind: Literal["skill", "agent", "case"]
    eval_path: str | None = None
    source_path: str
    source_sha256: str
    task_name: str
    instruction: str
    instructions: list[dict[str, str]] | None = Field(
        None, description="Several tasks (eval.yaml tasks:): every case's {name, instruction}, in order; 'instruction' is the first."
    )
    threshold: float
    trials_requested: int
    target: str = Field("chat", description="What ran the trials: 'chat' (one chat call) or an agent target's name.")
    model: str | None = Field(None, description="The item's own model when it is not the run's (promptfoo's several providers).")
    with_arm: ArmResult
    without_arm: ArmResult
    plugin_arm: ArmResult | None = Field(None, description="--arms baseline,skill,plugin: the skill with every skill/agent of its plugin installed.")
    interference: dict[str, Any] | None = Field(
        None, description="With a plugin arm: the skill's delta alone and within its plugin, their difference with its interval, and the verdict."
    )
    delta: float | None = Field(None, description="with mean − without mean; None when an arm has no scored trial.")
    grade: Grade | None = None
    pass_rate: float | None = Field(None, description="Passed / scored trials of the with-skill arm.")
    passed: bool = False
    status: Literal["complete", "errored", "incomplete"] = "complete"
    status_reason: str | None = None
    suggestions: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list, description="About the item itself, e.g. declared tools that cannot run in a chat trial.")
    stats: dict[str, Any] = Field(default_factory=dict, description="Uncertainty: intervals, p-values, grade confidence.")
    assertion_results: list[dict[str, Any]] = Field(
        default_factory=list,
        description="tc-eval: per assertion {text, passed (in every scored with-arm trial), passed_trials, trials, evidence}.",
    )
    summary: dict[str, Any] | None = Field(None, description="tc-eval: {passed, failed, total, pass_rate} over the case's assertions.")
    oracle: dict[str, Any] | None = Field(
        None, description="The oracle preflight: {score, tasks: [{task, score, passed, failing, not_checked}]}; None: no oracle (or --no-oracle)."
    )

    @property
    def not_run(self) -> bool:
        """The run stopped before any trial of this item started."""
        return self.status == "incomplete" and not self.with_arm.trials and not self.without_arm.trials


class Summary(BaseModel):
    """Counts over the items of one kind (skills, agents or cases) of a run."""

    total: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    not_run: int = 0
    """Items no trial of which started before the run stopped (not counted as failed)."""
    avg_delta: float | None = None
    grades: dict[str, int] = Field(default_factory=dict)


class RunResult(BaseModel):
    """One run: its settings, every item's result and the summaries (the JSON report)."""

    schema_version: str = SCHEMA_VERSION
    tool: str = "agentsproof"
    tool_version: str
    command: Literal["eval", "eval-all", "tc-eval"]
    plugin: str
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    provider: str
    model: str
    judge_model: str
    settings: dict[str, Any] = Field(default_factory=dict)
    items: list[ItemResult] = Field(default_factory=list)
    skills: Summary = Field(default_factory=Summary)
    agents: Summary = Field(default_factory=Summary)
    cases: Summary = Field(default_factory=Summary)
    overall: Summary = Field(default_factory=Summary)
    verdict: Literal["PASS", "FAIL", "ERROR", "INCOMPLETE", "UNPROVEN"] = "PASS"
    incomplete: bool = False
    incomplete_reason: str | None = None
    duration_s: float = 0.0
    regraded: dict[str, Any] | None = Field(
        None, description="Set by `agentsproof regrade`: {from, eval, changes, target_calls (always 0), judge_calls}; None for a run that ran its trials."
    )
    manifest: dict[str, Any] | None = Field(
        None,
        description="What the report is about, for `agentsproof verify`: files' SHA-256, programs' and models' versions, the masked command line, "
        "the options that decide the exit code and that code, the trials' digest (docs/verify.md); None: an older report.",
    )
