"""The gate: one rule for a run's verdict, its exit code and the one line that says why.

The verdict line, the report badges, JUnit and the step summary all read ``run.verdict``;
the exit code and its reason come from :func:`gate` on the same run, so they never
disagree:

- **INCOMPLETE** / **ERROR** (exit 30): the run stopped early, or a trial errored;
- **FAIL** (exit 1 under ``--ci``): an item failed (pass rate under its threshold, or a
  grade F), or with ``--ci --fail-on-underpowered`` an item is underpowered;
- **UNPROVEN** (exit 1 under ``--ci``): nothing failed, but an item passed on too few
  scored trials to say anything — never shown as a green PASS;
- **PASS** (exit 0).

Every non-zero exit ends with one line, ``exit 1: sql-review pass rate 0 % < 60 %; 2 items
underpowered (--fail-on-underpowered)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from agentsproof.core.errors import EXIT_ERROR, EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from agentsproof.model.results import ItemResult, RunResult

Verdict = Literal["PASS", "FAIL", "ERROR", "INCOMPLETE", "UNPROVEN"]

SHOWN = 3
"""Items named in the reason line; more are counted."""


@dataclass
class Gate:
    """What a run comes to: its verdict, exit code and the reasons for a non-zero exit."""

    verdict: Verdict
    code: int
    reasons: list[str] = field(default_factory=list)

    @property
    def line(self) -> str | None:
        """``exit N: reason; reason``; None for exit 0."""
        return f"exit {self.code}: " + "; ".join(self.reasons) if self.code != EXIT_OK else None


def unproven(item: ItemResult) -> bool:
    """An item that reached its threshold on too few scored trials to say anything (its result reads UNPROVEN)."""
    from agentsproof.report.views import item_result_label

    return item_result_label(item) == "UNPROVEN"


def underpowered(item: ItemResult) -> bool:
    """An item whose verdict is underpowered (fewer than 5 usable cases, or an interval for tasks like these spanning grade bands)."""
    return (item.stats or {}).get("verdict") == "underpowered"


def _names(items: list[ItemResult]) -> str:
    names = ", ".join(it.name for it in items[:SHOWN])
    return names + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def failure_reason(item: ItemResult) -> str:
    """``sql-review pass rate 0 % < 60 %``, ``csv grade F (delta -0.20)``, or both."""
    parts = []
    if item.pass_rate is not None and item.pass_rate < item.threshold - 1e-9:
        parts.append(f"pass rate {item.pass_rate * 100:.0f} % < {item.threshold * 100:.0f} %")
    if item.grade == "F":
        parts.append(f"grade F (delta {item.delta:+.2f})" if item.delta is not None else "grade F")
    return f"{item.name} " + (" and ".join(parts) if parts else "did not pass")


def base_verdict(run: RunResult) -> Verdict:
    """The verdict without the command line's options: INCOMPLETE, ERROR, FAIL, UNPROVEN or PASS."""
    if run.incomplete:
        return "INCOMPLETE"
    if run.overall.errored:
        return "ERROR"
    if run.overall.failed:
        return "FAIL"
    if any(unproven(it) for it in run.items):
        return "UNPROVEN"
    return "PASS"


def gate(run: RunResult, *, ci: bool = False, fail_on_underpowered: bool = False) -> Gate:
    """The run's verdict, exit code and reasons under ``--ci`` (and ``--fail-on-underpowered``)."""
    if run.incomplete:
        return Gate("INCOMPLETE", EXIT_ERROR, [f"the run is incomplete: {run.incomplete_reason or 'stopped early'}"])
    if run.overall.errored:
        errored = [it for it in run.items if it.status == "errored" and not it.not_run]
        trials = sum(it.with_arm.errored + it.without_arm.errored + (it.plugin_arm.errored if it.plugin_arm else 0) for it in errored)
        first = next((it.status_reason for it in errored if it.status_reason), None)
        why = f"{_plural(len(errored), 'item')} errored, no grade ({_names(errored)}; {_plural(trials, 'errored trial')}"
        why += f"; first: {first})" if first else ")"
        return Gate("ERROR", EXIT_ERROR, [why, "--retry-errors reruns only the errored trials"])
    failed = [it for it in run.items if not it.not_run and it.status != "errored" and not it.passed]
    weak = [it for it in run.items if unproven(it)]
    under = [it for it in run.items if underpowered(it)] if fail_on_underpowered else []
    verdict: Verdict = "FAIL" if failed or (ci and under) else "UNPROVEN" if weak else "PASS"
    if not ci:
        return Gate(verdict, EXIT_OK)
    reasons = [failure_reason(it) for it in failed[:SHOWN]]
    if len(failed) > SHOWN:
        reasons.append(f"{len(failed) - SHOWN} more failed")
    if weak:
        reasons.append(f"{_plural(len(weak), 'item')} unproven (passed on fewer than 3 scored trials per arm: {_names(weak)}; run more trials)")
    if under:
        reasons.append(f"{_plural(len(under), 'item')} underpowered (--fail-on-underpowered)")
    return Gate(verdict, EXIT_FAILED if reasons else EXIT_OK, reasons)
