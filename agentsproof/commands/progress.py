"""Progress on stderr while trials run: a live line on a terminal, a heartbeat in a log.

On a terminal, a rich progress line rewritten in place: trials done of the total, elapsed
time, time left, errored trials, tokens and spend so far; each finished item prints its line
above it. Elsewhere (a CI log, a pipe), plain lines: one as soon as the first trial finishes,
then one every ``AGENTSPROOF_PROGRESS_S`` seconds (default 5) while trials finish, and one at
least every 30 s while none does, so a log shows the run is alive from its first seconds
without a line per trial. Once, when trials run one at a time and slowly enough that more at
once would save real time, and the provider has refused none for its rate limit, a hint
names the ``--parallel`` to try and what it would save.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from pathlib import Path

    from agentsproof.executor.runner import ItemRun
    from agentsproof.model.items import EvalItem
    from agentsproof.model.options import RunFlags
    from agentsproof.model.results import TrialResult

IDLE_S = 30.0
"""In a log, a line at least this often even when no trial finished (a long agent trial)."""
HINT_PARALLEL = 8
"""The ``--parallel`` the hint suggests."""
HINT_AFTER = 4
"""Trials finished before the hint may speak (the latencies of fewer say little)."""
HINT_SAVES_S = 20.0
"""The hint speaks only when more at once would save at least this long."""


def clock(s: float) -> str:
    """``1:02:03`` / ``2:03`` for ``s`` seconds."""
    s = max(0, int(round(s)))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


class Progress:
    """Progress on stderr while a run's trials run (a context manager around the run).

    ``total``: the trials the run will make (a cap under ``--adaptive``); ``parallel``: its
    ``--parallel``; ``more_allowed``: whether more at once could help (False for the
    embedded model, whose instances bound it); ``capped``: ``total`` is ``--adaptive``'s cap."""

    def __init__(
        self,
        total: int = 0,
        *,
        parallel: int = 1,
        more_allowed: bool = True,
        tty: bool | None = None,
        interval: float | None = None,
        capped: bool = False,
    ):
        from agentsproof.core.envcfg import env_number

        self.tty = sys.stderr.isatty() if tty is None else tty
        self.total = total
        self.parallel = parallel
        self.more_allowed = more_allowed
        self.capped = capped
        """``--adaptive``: the total is a cap the run may stop short of."""
        self.interval = interval if interval is not None else env_number("AGENTSPROOF_PROGRESS_S", 5.0, lo=0.05, hi=3600)
        self.trials = 0
        self.errored = 0
        self.tokens = 0
        self.spend: float | None = None
        self.latency = 0.0
        self.rate_limited = False
        self.hinted = False
        self.started = time.monotonic()
        self._last_line = 0.0
        self._lines_at = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._rich: Any = None
        self._task: Any = None

    # ------------------------------------------------------------------ lifetime

    def __enter__(self) -> Progress:
        self.started = self._last_line = time.monotonic()
        if self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._rich = Progress(
                TextColumn("  trials (all arms)"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("elapsed"),
                TimeElapsedColumn(),
                TextColumn("left"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[status]}"),
                console=Console(stderr=True),
                transient=True,
            )
            self._task = self._rich.add_task("trials", total=self.total or None, status=self._status())
            self._rich.start()
        else:
            self._thread = threading.Thread(target=self._beat, name="agentsproof-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._rich is not None:
            self._rich.stop()
            self._rich = None

    # ------------------------------------------------------------------ callbacks (on the event loop)

    def trial(self, item: EvalItem, trial: TrialResult) -> None:
        """Count a finished trial: its tokens, cost, latency and whether it errored."""
        self.trials += 1
        if trial.status == "errored":
            self.errored += 1
            if "429" in (trial.error or "") or "rate limit" in (trial.error or "").lower():
                self.rate_limited = True
        self.tokens += trial.usage.total_tokens
        if trial.cost_usd is not None:
            self.spend = (self.spend or 0.0) + trial.cost_usd
        self.latency += trial.latency_s
        if self._rich is not None:
            self._rich.update(self._task, completed=self.trials, status=self._status())
        elif self.trials == 1:  # the first sign of life in a log, at once
            self._line()
        self._maybe_hint()

    def item(self, run: ItemRun) -> None:
        """One line for a finished item: each arm's mean score and scored trials, and the errored count."""
        w, wo = run.with_arm, run.without_arm
        one_arm = tuple(run.item.arms) == ("with",)
        line = (
            f"  done: {run.item.id}  with {_fmt(w.mean_score, '.2f')} ({w.scored} scored)"
            + ("" if one_arm else f"  without {_fmt(wo.mean_score, '.2f')} ({wo.scored} scored)")
            + (f"  {w.errored + wo.errored} errored" if w.errored + wo.errored else "")
        )
        self._say(line)

    # ------------------------------------------------------------------ text

    def _status(self) -> str:
        spend = "spend unknown" if self.spend is None else f"${self.spend:,.4f}"
        return f"· {self.errored} errored · {self.tokens:,} tokens · {spend}"

    def eta_s(self) -> float | None:
        """Seconds left at the pace so far (None before the first trial or without a total)."""
        if not self.trials or not self.total:
            return None
        elapsed = time.monotonic() - self.started
        return max(0.0, elapsed / self.trials * (self.total - self.trials))

    def line(self) -> str:
        """The heartbeat line: trials done of the total, elapsed, time left, errored, tokens and spend."""
        elapsed = time.monotonic() - self.started
        eta = self.eta_s()
        of = (f"/{'at most ' if self.capped else ''}{self.total}") if self.total else ""
        left = f" · about {clock(eta)} left" if eta is not None and self.trials < self.total else ""
        return f"  progress: {self.trials}{of} trials (all arms) · {clock(elapsed)} elapsed{left} {self._status()}"

    def _line(self) -> None:
        self._say(self.line())
        self._last_line = time.monotonic()
        self._lines_at = self.trials

    def _say(self, text: str) -> None:
        from agentsproof.core.inputs import display

        with self._lock:
            if self._rich is not None:
                self._rich.console.print(display(text), markup=False, highlight=False, soft_wrap=True)
            else:
                click.echo(display(text), err=True)

    def _beat(self) -> None:
        """The heartbeat thread (not a terminal): a line every ``interval`` while trials finish, every IDLE_S while none does."""
        tick = min(self.interval, 1.0)
        while not self._stop.wait(tick):
            since = time.monotonic() - self._last_line
            if (since >= self.interval and self.trials != self._lines_at) or since >= max(IDLE_S, self.interval):
                self._line()

    def _maybe_hint(self) -> None:
        """Once: trials run one (or a few) at a time, slowly, and more at once would save real time."""
        if self.hinted or not self.more_allowed or self.rate_limited or self.parallel >= HINT_PARALLEL or self.trials < HINT_AFTER:
            return
        eta = self.eta_s()
        if eta is None:
            return
        faster = eta * self.parallel / HINT_PARALLEL
        if eta - faster < HINT_SAVES_S:
            return
        self.hinted = True
        mean = self.latency / self.trials
        self._say(
            f"hint: trials take {mean:.1f} s each and run {self.parallel} at a time, about {clock(eta)} left; "
            f"--parallel {HINT_PARALLEL} would take about {clock(faster)} if your provider allows it (none of its calls was rate-limited so far)"
        )


def _fmt(v: float | None, spec: str) -> str:
    return "—" if v is None else format(v, spec)


def run_total(items: list[EvalItem], prior: int = 0) -> int:
    """The trials a run will make: every arm of every item's trials, less those reused (resume, retry)."""
    return max(0, sum(it.trials * len(it.arms) for it in items) - prior)


def more_allowed(provider: str | None) -> bool:
    """Whether more trials at once could go faster: not on the embedded model, whose
    instances bound it. Cheap (no provider is asked): ``auto`` means the local model only
    when no endpoint is configured and the Copilot SDK is not installed."""
    import os

    from agentsproof.llm.byok import byok_env_set
    from agentsproof.llm.registry import entry

    name = (provider or os.environ.get("AGENTSPROOF_PROVIDER_TYPE") or "auto").strip().lower()
    if name != "auto":
        return name != "local"
    return byok_env_set() or not entry("copilot").missing()


def plan_wall_time_lines(command: str, items: list[EvalItem], cfg: RunFlags, plugin: str, stem: str) -> list[str]:
    """``--plan``'s wall time, from the last run of the same reports when there is one."""
    from agentsproof.core.errors import InputError
    from agentsproof.executor.costplan import _models
    from agentsproof.executor.walltime import plan_wall_time
    from agentsproof.report.files import report_targets

    try:
        json_report: Path | None = report_targets(command, cfg.output, plugin, stem, items[0].kind if command == "eval" and items else None)["json"]
    except InputError:
        json_report = None
    return plan_wall_time(items, _models(cfg)[0], cfg.parallel, json_report)
