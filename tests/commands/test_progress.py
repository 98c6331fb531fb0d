"""Progress you can see (issue 46.4): in a log (stderr not a terminal), heartbeat lines with
trials done of the total, elapsed time, errored trials, tokens and spend; on a terminal a
rich live line; a hint to raise --parallel when trials run one at a time and more at once
would save real time; --plan estimates the wall time. No timing assertions: what is checked
is which lines appear and what they say."""

from __future__ import annotations

import re

from conftest import Rule, make_plugin, run_cli, simple_eval

from agentsproof.commands.progress import Progress, more_allowed, run_total

CHECKS = [{"type": "deterministic", "checks": ["hello"]}]


def test_heartbeat_lines_appear_in_a_log(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_PROGRESS_S", "0.05")
    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval(CHECKS, trials=4)}})
    byok_env.add(Rule(reply="hello", delay=0.2, usage=(10, 5)))
    code, _, err = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--output", tmp_path / "runs", "--parallel", "1"])
    assert code == 0, err
    beats = [ln for ln in err.splitlines() if ln.strip().startswith("progress: ")]
    assert beats, err
    assert beats[0].strip().startswith("progress: 1/8 trials (all arms) · "), "the first finished trial is reported at once, with the total"
    assert len(beats) >= 2, "and more lines follow while trials finish"
    last = beats[-1]
    assert re.search(r"progress: \d/8 trials \(all arms\) · \d+:\d\d elapsed", last) and "0 errored" in last and "tokens" in last
    assert "spend unknown" in last  # the model 'm' has no price: never shown as $0


def test_the_parallel_hint_speaks_once_when_more_at_once_would_save_time():
    p = Progress(total=400, parallel=1, tty=False, interval=3600)
    lines: list[str] = []
    p._say = lines.append  # type: ignore[method-assign]
    with p:
        p.started -= 40  # 4 trials took 40 s: 396 left at 10 s each, one at a time

        class T:
            status = "scored"
            error = None
            cost_usd = None
            latency_s = 10.0

            class usage:
                total_tokens = 3

        for _ in range(6):
            p.trial(None, T())  # type: ignore[arg-type]
    hints = [ln for ln in lines if ln.startswith("hint: ")]
    assert len(hints) == 1 and "--parallel 8" in hints[0] and "run 1 at a time" in hints[0]


def test_no_parallel_hint_after_a_rate_limit_or_on_the_embedded_model(monkeypatch):
    for kwargs, error in (({"more_allowed": True}, "HTTP 429: slow down"), ({"more_allowed": False}, None)):
        p = Progress(total=400, parallel=1, tty=False, interval=3600, **kwargs)
        lines: list[str] = []
        p._say = lines.append  # type: ignore[method-assign]
        with p:
            p.started -= 40

            class T:
                status = "errored" if error else "scored"
                cost_usd = None
                latency_s = 10.0

                class usage:
                    total_tokens = 0

            T.error = error  # type: ignore[attr-defined]
            for _ in range(6):
                p.trial(None, T())  # type: ignore[arg-type]
        assert not [ln for ln in lines if ln.startswith("hint: ")]
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "local")
    assert more_allowed(None) is False and more_allowed("openai") is True


def test_run_total_counts_every_arm_less_the_reused(tmp_path):
    class It:
        trials = 5
        arms = ("with", "without")

    assert run_total([It(), It()], prior=3) == 17  # type: ignore[list-item]


def test_plan_estimates_the_wall_time(byok_env, tmp_path):
    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval(CHECKS, trials=10)}})
    code, stdout, err = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--plan", "--output", tmp_path / "runs"])
    assert code == 0, err
    line = next(ln for ln in stdout.splitlines() if "wall time:" in ln)
    assert "at --parallel 1" in line and "at --parallel 8" in line and "no earlier run" in line
    assert byok_env.requests == []
    # after a run, the plan goes by what that run measured
    byok_env.add(Rule(reply="hello"))
    assert run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--output", tmp_path / "runs"])[0] == 0
    code, stdout, _ = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--plan", "--output", tmp_path / "runs"])
    assert "as the last run of these reports measured" in next(ln for ln in stdout.splitlines() if "wall time:" in ln)


def test_on_a_terminal_a_rich_live_line_carries_the_counts(capsys):
    from rich.progress import Progress as RichProgress

    p = Progress(total=4, parallel=2, tty=True)

    class T:
        status = "errored"
        error = "HTTP 500"
        cost_usd = 0.25
        latency_s = 1.0

        class usage:
            total_tokens = 1200

    with p:
        assert isinstance(p._rich, RichProgress)
        p.trial(None, T())  # type: ignore[arg-type]
        task = p._rich.tasks[0]
        assert task.total == 4 and task.completed == 1
        assert task.fields["status"] == "· 1 errored · 1,200 tokens · $0.2500"
        columns = [type(c).__name__ for c in p._rich.columns]
        assert {"BarColumn", "MofNCompleteColumn", "TimeElapsedColumn", "TimeRemainingColumn"} <= set(columns)
    assert p._rich is None  # stopped with the run: the summary that follows is not overdrawn


def test_an_adaptive_total_reads_as_a_cap():
    assert "progress: 0/at most 30 trials (all arms) · " in Progress(total=30, capped=True, tty=False).line()
    assert "progress: 0/30 trials (all arms) · " in Progress(total=30, tty=False).line()
