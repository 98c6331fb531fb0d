"""Machine-readable outputs of a run: JUnit XML, one JSON line per trial, and the
Markdown summary for a CI job page (``GITHUB_STEP_SUMMARY``).

``--junit FILE`` and ``--jsonl FILE`` add their writer to the run's report targets (the
same dict of writers as the JSON, Markdown and HTML reports, so every format is rendered
before the first byte is written and each file is written atomically). The step summary
is appended, as GitHub expects, after the reports are written.

JUnit: one ``<testcase>`` per item (or tc-eval / EVAL.yaml case). A failed item carries a
``<failure>`` listing why (pass rate under the threshold, grade F) and its failing checks;
an errored item an ``<error>`` with the reason; an item that never ran ``<skipped>``. The
common JUnit schema (Jenkins / Surefire) has no properties on a test case, so each item's
grade, delta, interval and pass rate are suite properties named ``<item id>.<key>``, and
are repeated in the test case's ``<system-out>``.
"""

from __future__ import annotations

import json
import math
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from agentsproof.model.results import ItemResult, RunResult, TrialResult

EXTRA_FORMATS = ("junit", "jsonl")
_XML_BAD = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SECRET_KEY = re.compile(r"(api[_-]?key|secret|password|passwd|authorization|bearer|^key$|_key$|token$)", re.I)


def _x(value: Any) -> str:
    """Text that XML 1.0 can hold: control characters and lone surrogates dropped."""
    return _XML_BAD.sub("", str(value))


def _secs(v: float) -> str:
    return f"{max(0.0, v):.3f}"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.0f}%"


def _interval(v: Any, pct: bool = False) -> str:
    if not v or len(v) != 2 or v[0] is None or v[1] is None:
        return ""
    return f"[{v[0] * 100:.0f}%, {v[1] * 100:.0f}%]" if pct else f"[{v[0]:+.2f}, {v[1]:+.2f}]"


def single_arm(item: ItemResult) -> bool:
    """A run with ``--baseline none``: only the with-arm (or the target alone) ran."""
    return bool(item.stats.get("single_arm"))


def item_facts(item: ItemResult) -> dict[str, str]:
    """The numbers a CI page shows for one item (strings; empty ones left out)."""
    s = item.stats or {}
    w = s.get("with") or {}
    out = {
        "pass_rate": _pct(item.pass_rate),
        "pass_rate_ci": _interval(w.get("pass_rate_ci"), pct=True),
        "passed_trials": f"{item.with_arm.passed_trials}/{item.with_arm.scored}",
        "errored_trials": str(item.with_arm.errored + item.without_arm.errored + (item.plugin_arm.errored if item.plugin_arm else 0)),
        "threshold": f"{item.threshold:g}",
    }
    if not single_arm(item):
        out["grade"] = item.grade or "—"
        out["delta"] = "—" if item.delta is None else f"{item.delta:+.2f}"
        out["delta_ci"] = _interval(s.get("delta_ci"))
        if s.get("grade_label"):
            out["grade_label"] = str(s["grade_label"])
    else:
        out["flaky"] = "yes" if s.get("flaky") else "no"
    return {k: v for k, v in out.items() if v}


def failing_checks(item: ItemResult) -> list[str]:
    """'kind target: passed/total' for every check some with-arm trial failed, with the
    first failing evidence."""
    counts: dict[tuple[str, str], list[int]] = {}
    evidence: dict[tuple[str, str], str] = {}
    for t in item.with_arm.trials:
        if t.status != "scored":
            continue
        for g in t.graders:
            for c in g.checks:
                key = (c.kind, c.target)
                n = counts.setdefault(key, [0, 0])
                n[1] += 1
                if c.passed:
                    n[0] += 1
                elif key not in evidence:
                    evidence[key] = c.evidence
    lines = []
    for (kind, target), (passed, total) in counts.items():
        if passed < total:
            ev = evidence.get((kind, target), "")
            lines.append(f"{kind} {target!r}: {passed}/{total} trials passed" + (f" — {ev}" if ev else ""))
    return lines


UNPROVEN_REASON = "unproven: it reached its threshold on fewer than 3 scored trials per arm, too few to say anything; run more trials"


def failure_reasons(item: ItemResult) -> list[str]:
    """Why an item failed, one line each (pass rate under its threshold, grade F); "did not pass" when neither."""
    out = []
    if item.pass_rate is not None and item.pass_rate < item.threshold - 1e-9:
        out.append(f"pass rate {_pct(item.pass_rate)} is below the threshold {item.threshold * 100:.0f}%")
    if item.grade == "F":
        out.append(f"grade F: the with-arm scored below the baseline (delta {item.delta:+.2f})")
    return out or ["did not pass"]


# ---------------------------------------------------------------------------------- JUnit


def _props(parent: ET.Element, pairs: list[tuple[str, str]]) -> None:
    props = ET.SubElement(parent, "properties")
    for name, value in pairs:
        ET.SubElement(props, "property", name=_x(name), value=_x(value))


def _run_properties(run: RunResult) -> list[tuple[str, str]]:
    pairs = [("command", run.command), ("provider", run.provider), ("model", run.model), ("judge_model", run.judge_model), ("verdict", run.verdict)]
    config = run.settings.get("config") or {}
    for k, v in config.items():
        pairs.append((f"config.{k}", "(redacted)" if _SECRET_KEY.search(str(k)) else str(v)))
    if run.settings.get("baseline") == "none":
        pairs.append(("baseline", "none"))
    return pairs


def render_junit(run: RunResult) -> str:
    """The run as JUnit XML: one testcase per item (failed, errored or skipped when not run), times sharing the run's wall time."""
    from agentsproof.report.views import item_result_label

    failures = sum(1 for i in run.items if item_result_label(i) in ("FAIL", "UNPROVEN"))
    errors = sum(1 for i in run.items if i.status == "errored")
    skipped = sum(1 for i in run.items if i.not_run)
    counts = {"tests": str(len(run.items)), "failures": str(failures), "errors": str(errors)}
    root = ET.Element("testsuites", {"name": "agentsproof", "time": _secs(run.duration_s), **counts})
    suite = ET.SubElement(
        root,
        "testsuite",
        {"name": _x(f"{run.plugin} ({run.command})"), "skipped": str(skipped), "time": _secs(run.duration_s), "timestamp": _x(run.created_at), **counts},
    )
    pairs = _run_properties(run)
    for it in run.items:
        pairs += [(f"{it.id}.{k}", v) for k, v in item_facts(it).items()]
    _props(suite, pairs)
    # Trials run in parallel, so an item's summed trial time can exceed the run's wall time;
    # each testcase gets its share of the wall time (by its trials' time), so the cases add
    # up to the suite's time, as JUnit readers expect.
    busy = [sum(t.latency_s for t in _all_trials(it)) for it in run.items]
    scale = min(1.0, run.duration_s / sum(busy)) if sum(busy) > 0 else 0.0
    for it, spent in zip(run.items, busy, strict=True):
        trials = _all_trials(it)  # the plugin arm's too
        case = ET.SubElement(
            suite,
            "testcase",
            name=_x(it.name),
            classname=_x(f"{run.plugin}.{it.kind}s"),
            time=_secs(math.floor(spent * scale * 1000) / 1000),  # rounded down: the sum never passes the suite's
        )
        if it.not_run:
            ET.SubElement(case, "skipped", message=_x(it.status_reason or "not run"))
        elif it.status == "errored":
            err = ET.SubElement(case, "error", type="errored", message=_x(it.status_reason or "errored"))
            err.text = _x("\n".join(_errored_lines(trials)))
        elif not it.passed:
            reasons = failure_reasons(it)
            fail = ET.SubElement(case, "failure", type="failed", message=_x("; ".join(reasons)))
            fail.text = _x("\n".join(reasons + failing_checks(it)))
        elif item_result_label(it) == "UNPROVEN":  # passed on too few trials: never a green PASS (--ci fails it)
            ET.SubElement(case, "failure", type="unproven", message=_x(UNPROVEN_REASON))
        facts = item_facts(it)
        out = ET.SubElement(case, "system-out")
        out.text = _x(" · ".join(f"{k} {v}" for k, v in facts.items()))
        errored = _errored_lines(trials)
        if errored and it.status != "errored":
            ET.SubElement(case, "system-err").text = _x("\n".join(errored))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _all_trials(item: ItemResult) -> list[TrialResult]:
    return item.with_arm.trials + item.without_arm.trials + (item.plugin_arm.trials if item.plugin_arm else [])


def _errored_lines(trials: list[TrialResult]) -> list[str]:
    return [f"{t.arm}-arm trial {t.index + 1} errored (left out of the scores): {t.error}" for t in trials if t.status == "errored"]


# ---------------------------------------------------------------------------------- JSONL


def case_id(item: ItemResult) -> str | None:
    """A tc-eval item's case id (``case-3`` gives ``"3"``); None for a skill or agent item."""
    return item.id[len("case-") :] if item.kind == "case" and item.id.startswith("case-") else None


def _trial_record(run: RunResult, item: ItemResult, t: TrialResult) -> dict[str, Any]:
    return {
        "run": run.created_at,
        "command": run.command,
        "item": item.id,
        "case": case_id(item),
        "kind": item.kind,
        "target": item.target,
        "arm": t.arm,
        "trial": t.index,
        "status": t.status,
        "score": t.score,
        "passed": t.passed,
        "checks": [{"grader": g.type, "kind": c.kind, "target": c.target, "passed": c.passed, "evidence": c.evidence} for g in t.graders for c in g.checks],
        "graders": [{"type": g.type, "score": g.score, "weight": g.weight, "errored": g.errored, "error": g.error} for g in t.graders],
        "tokens": {"prompt": t.usage.prompt_tokens, "completion": t.usage.completion_tokens, "total": t.usage.total_tokens},
        "latency_s": round(t.latency_s, 6),
        "cached": t.cached,
        "error": t.error,
        "response": t.response,
    }


def render_jsonl(run: RunResult) -> str:
    """The run as JSON Lines: one line per with- and without-arm trial, by trial index, with its checks and tokens."""
    lines = []
    for it in run.items:
        for t in sorted(it.with_arm.trials + it.without_arm.trials, key=lambda t: (t.index, t.arm != "with")):
            lines.append(json.dumps(_trial_record(run, it, t), ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


# ----------------------------------------------------------------- the CI summary page


def render_step_summary(run: RunResult) -> str:
    """A short Markdown summary (a table of items), for GITHUB_STEP_SUMMARY."""
    from agentsproof.core.mdtext import md_text
    from agentsproof.report.views import item_result_label

    one_arm = any(single_arm(i) for i in run.items)
    out = [f"### agentsproof {run.command} · {md_text(run.plugin)} — {run.verdict}", ""]
    from agentsproof.report.identity import run_identity

    out.append(" · ".join(f"{k} {md_text(v)}" for k, v in run_identity(run)) + (" · single arm (`--baseline none`): no grades" if one_arm else ""))
    out.append("")
    if one_arm:
        out += ["| item | pass rate | 95 % interval | passed | flaky | errored | result |", "|---|---|---|---|---|---|---|"]
    else:
        out += ["| item | with | without | delta | 95 % interval | grade | pass rate | errored | result |", "|---|---|---|---|---|---|---|---|---|"]
    for it in run.items:
        f = item_facts(it)
        result = item_result_label(it)
        if one_arm:
            cells = [md_text(it.name), f["pass_rate"], f.get("pass_rate_ci", ""), f["passed_trials"], f.get("flaky", ""), f["errored_trials"], result]
        else:
            w, wo = it.with_arm.mean_score, it.without_arm.mean_score
            cells = [
                md_text(it.name),
                "—" if w is None else f"{w:.2f}",
                "—" if wo is None else f"{wo:.2f}",
                f.get("delta", "—"),
                f.get("delta_ci", "") + (" for tasks like these" if f.get("delta_ci") and (it.stats or {}).get("question") == "tasks" else ""),
                md_text(f.get("grade_label") or f.get("grade", "—")),
                f["pass_rate"],
                f["errored_trials"],
                result,
            ]
        out.append("| " + " | ".join(cells) + " |")
    o = run.overall
    unproven = sum(1 for it in run.items if item_result_label(it) == "UNPROVEN")
    out += [
        "",
        f"**{o.passed}/{o.total} passed**"
        + (f" · {unproven} unproven (too few trials)" if unproven else "")
        + (f" · {o.errored} errored" if o.errored else "")
        + (f" · {o.not_run} not run" if o.not_run else ""),
    ]
    if run.incomplete:
        out.append(f"\nincomplete: {md_text(run.incomplete_reason or '', 400)}")
    return "\n".join(out) + "\n\n"


def append_step_summary(run: RunResult) -> None:
    """Append the summary to ``$GITHUB_STEP_SUMMARY`` when it is set. The reports are
    already written: a file that cannot be appended to is a warning, not lost results."""
    from agentsproof.core.scrub import scrub

    target = os.environ.get("GITHUB_STEP_SUMMARY", "").strip()
    if not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(scrub(render_step_summary(run)))
    except OSError as err:
        from agentsproof.core.notice import warn

        warn(f"GITHUB_STEP_SUMMARY: {target}: cannot append: {err.strerror or err}")


# ------------------------------------------------------------------ targets and writing


def extra_targets(junit: Path | None, jsonl: Path | None) -> dict[str, Path]:
    """``--junit`` / ``--jsonl`` paths, checked before the first model call: the folder
    exists (or can be made) and is writable, and the path is not a folder."""
    from agentsproof.core.errors import InputError
    from agentsproof.core.inputs import display

    out: dict[str, Path] = {}
    for flag, path in (("--junit", junit), ("--jsonl", jsonl)):
        if path is None:
            continue
        path = Path(path)
        if path.is_dir():
            raise InputError(display(path), flag, "is a directory; give a file name")
        probe = path.parent
        while not probe.exists():
            probe = probe.parent
        if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
            raise InputError(display(path), flag, f"cannot write here ({display(probe)} is not a writable folder)")
        out[flag[2:]] = path
    if len(out) == 2 and out["junit"].resolve() == out["jsonl"].resolve():
        raise InputError(display(out["junit"]), "--jsonl", "is the same file as --junit")
    return out
