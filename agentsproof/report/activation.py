"""Activation reports: the precision/recall table, dormancy violations, collisions and the
confusion matrix, as Markdown (also what the terminal shows) and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentsproof.stats.activation import NONE, ActivationStats, Interval, Misfire, as_dict

MAX_LISTED = 20
"""Misfiring prompts listed per skill and kind (the JSON report has them all)."""
PROMPT_CHARS = 90


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _ci(ci: Interval) -> str:
    return "" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def _short(text: str) -> str:
    one = " ".join(text.split()).replace("|", "\\|")
    return one if len(one) <= PROMPT_CHARS else one[: PROMPT_CHARS - 1] + "…"


def table(stats: ActivationStats) -> list[str]:
    """The per-skill table: precision, recall, F1 with their 95 % intervals, and the floors."""
    lines = [
        "| skill | precision | recall | F1 | TP | FN | FP | errored | --ci |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in stats.skills:
        gate = "fail: " + "; ".join(s.below_floor) if s.below_floor else f"ok (≥ {s.min_recall:.2f} / {s.min_precision:.2f})"
        lines.append(
            f"| {s.skill} | {_pct(s.precision)}{_ci(s.precision_ci)} | {_pct(s.recall)}{_ci(s.recall_ci)} | "
            f"{_pct(s.f1)}{_ci(s.f1_ci)} | {s.tp} | {s.fn} | {s.fp} | {s.errored} | {gate} |"
        )
    return lines


def _misfires(title: str, items: list[Misfire], owner: bool) -> list[str]:
    if not items:
        return []
    out = [f"- {title}:"]
    for m in items[:MAX_LISTED]:
        whose = f" ({m.owner}'s prompt)" if owner else ""
        out.append(f"  - {m.fired}/{m.trials} · {m.type or 'prompt'}{whose}: {_short(m.prompt)}")
    if len(items) > MAX_LISTED:
        out.append(f"  - … and {len(items) - MAX_LISTED} more (activation.json)")
    return out


def _matrix_lines(stats: ActivationStats) -> list[str]:
    cols = list(next(iter(stats.matrix.values()), {}))
    if not cols:
        return []
    out = ["| prompts of ↓ / loaded → | " + " | ".join(cols) + " | trials |", "|---|" + "---|" * (len(cols) + 1)]
    for row, cells, n in _matrix_rows(stats, cols):
        shown = [f"**{v}**" if bad else f"{v}" for v, bad in cells]
        out.append(f"| {row} | " + " | ".join(shown) + f" | {n} |")
    return out


def _matrix_rows(stats: ActivationStats, cols: list[str]) -> list[tuple[str, list[tuple[int, bool]], int]]:
    """(row, its cells as (count, wrong?), its trials) of the confusion matrix: a cell is
    wrong when another skill loaded on the row's prompts, or the row's own loaded on fewer
    than half of them."""
    rows = []
    for row, cells in stats.matrix.items():
        n = stats.row_trials.get(row, 0)
        shown = []
        for col in cols:
            v = cells.get(col, 0)
            shown.append((v, (col not in (row, NONE) and v > 0) or (col == row and v * 2 < n)))
        rows.append((row, shown, n))
    return rows


def errored_reasons(trials: list[Any] | None) -> list[tuple[str, int]]:
    """Each distinct reason of the errored trials, with how many trials had it, most first."""
    counts: dict[str, int] = {}
    for t in trials or []:
        if getattr(t, "error", None):
            counts[t.error] = counts.get(t.error, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def markdown(stats: ActivationStats, title: str, settings: dict[str, Any] | None = None, trials: list[Any] | None = None) -> str:
    """The activation report as Markdown: the settings line, the precision/recall table, errored trials' reasons,
    the prompts that fired wrongly, colliding pairs and the confusion matrix."""
    lines = [f"# Activation: {title}", ""]
    if settings:
        lines += ["  ".join(f"{k}: {v}" for k, v in settings.items() if v not in (None, "")), ""]
    lines += [f"{stats.trials} trials, {stats.errored} errored (left out of the scores). Intervals: 95 %.", ""]
    lines += table(stats) + [""]
    reasons = errored_reasons(trials)
    if reasons:
        lines += ["## Errored trials", "", *(f"- {n} × {' '.join(r.split())}" for r, n in reasons[:MAX_LISTED])]
        if len(reasons) > MAX_LISTED:
            lines.append(f"- … and {len(reasons) - MAX_LISTED} more reasons (activation.json)")
        lines.append("")
    problems = []
    for s in stats.skills:
        part = _misfires("dormancy violations (its should-not prompts loaded it)", s.dormancy, False)
        part += _misfires("collisions (other skills' prompts loaded it)", s.collisions, True)
        part += _misfires("missed (its should prompts did not load it)", s.missed, False)
        if part:
            problems += [f"### {s.skill}", "", *part, ""]
    if problems:
        lines += ["## Prompts that fired wrongly", "", *problems]
    if stats.collisions:
        lines += ["## Colliding pairs (worst first)", "", "| a ↔ b | a loaded on b's prompts | b loaded on a's prompts | rate [95 %] |", "|---|---|---|---|"]
        for c in stats.collisions:
            a_on_b = f"{c.a_on_b}/{c.b_prompts}" if c.b_prompts else "— (b has no suite)"
            lines.append(f"| {c.a} ↔ {c.b} | {a_on_b} | {c.b_on_a}/{c.a_prompts} | {c.rate:.2f}{_ci(c.ci)} |")
        lines.append("")
    if len(stats.matrix) > 1:
        lines += [
            "## Confusion matrix",
            "",
            "Rows: the skill whose should prompts ran; columns: the skill that loaded (bold: a sibling loaded, or the skill itself on fewer than half of its prompts).",
            "",
        ]
        lines += _matrix_lines(stats) + [""]
    return "\n".join(lines)


def report_paths(output: Path, plugin: str, stem: str = "activation") -> dict[str, Path]:
    """``<output>/<plugin>/<plugin>-<stem>.{md,json}`` (names made safe path components)."""
    from agentsproof.core.inputs import safe_name

    name = safe_name(plugin, "plugin")
    return {f: output / name / f"{name}-{stem}.{f}" for f in ("md", "json", "html")}


def write(
    stats: ActivationStats, paths: dict[str, Path], title: str, settings: dict[str, Any], trials: list[Any], *, manifest: dict[str, Any] | None = None
) -> dict[str, Path]:
    """The JSON report (every number and every trial, and its ``manifest`` for ``agentsproof verify``) and the Markdown one, at ``paths``."""
    from dataclasses import asdict

    from agentsproof.core.safepath import write_file

    data = {"title": title, "settings": settings, **as_dict(stats), "trial_log": [asdict(t) for t in trials]}
    if manifest is not None:
        data["manifest"] = manifest
    texts = {"json": json.dumps(data, indent=2, ensure_ascii=False) + "\n", "md": markdown(stats, title, settings, trials) + "\n"}
    if "html" in paths:
        texts["html"] = html(stats, title, settings, trials, manifest)
    for fmt, text in texts.items():  # through core.safepath: atomically, never through a link
        write_file(paths[fmt].parent, paths[fmt].name, text.encode("utf-8"))
    return paths


def plugin_arm_collisions(items: list[Any]) -> list[dict[str, Any]]:
    """From the plugin arms of a run (eval-all ``--arms baseline,skill,plugin``): every pair
    (skill under test, sibling that loaded in its plugin-arm trials), worst first, with the
    share of those trials and its 95 % Clopper–Pearson interval (each trial an independent run)."""
    from agentsproof.stats.activation import proportion

    pairs = []
    for it in items:
        inf = getattr(it, "interference", None)
        if not inf or not inf.get("siblings_loaded") or not inf.get("skill_loaded"):
            continue
        known = inf["skill_loaded"][1]
        for sibling, n in inf["siblings_loaded"].items():
            ci = proportion(n, known, known)
            pairs.append(
                {
                    "skill": it.name,
                    "sibling": sibling,
                    "loaded": n,
                    "trials": known,
                    "rate": n / known,
                    "ci": list(ci) if ci else None,
                    "verdict": inf.get("verdict"),
                }
            )
    pairs.sort(key=lambda p: (-p["rate"], p["skill"], p["sibling"]))
    return pairs


def html(
    stats: ActivationStats, title: str, settings: dict[str, Any] | None = None, trials: list[Any] | None = None, manifest: dict[str, Any] | None = None
) -> str:
    """A self-contained HTML page of the same report (no scripts, no outside resources)."""
    from html import escape as e

    def row(cells: list[str], tag: str = "td") -> str:
        return "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"

    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Activation: {e(title)}</title>",
        "<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}th{background:#f3f3f3}.bad{color:#b00;font-weight:600}"
        ".muted{color:#666}</style></head><body>",
        f"<h1>Activation: {e(title)}</h1>",
    ]
    if settings:
        parts.append("<p class='muted'>" + " · ".join(f"{e(str(k))}: {e(str(v))}" for k, v in settings.items() if v not in (None, "")) + "</p>")
    parts.append(f"<p>{stats.trials} trials, {stats.errored} errored (left out of the scores). Intervals: 95 %.</p>")
    parts.append("<table>" + row(["skill", "precision", "recall", "F1", "TP", "FN", "FP", "errored", "--ci"], "th"))
    for s in stats.skills:
        gate = f"<span class='bad'>fail: {e('; '.join(s.below_floor))}</span>" if s.below_floor else f"ok (≥ {s.min_recall:.2f} / {s.min_precision:.2f})"
        parts.append(
            row(
                [
                    e(s.skill),
                    _pct(s.precision) + _ci(s.precision_ci),
                    _pct(s.recall) + _ci(s.recall_ci),
                    _pct(s.f1) + _ci(s.f1_ci),
                    str(s.tp),
                    str(s.fn),
                    str(s.fp),
                    str(s.errored),
                    gate,
                ]
            )
        )
    parts.append("</table>")
    reasons = errored_reasons(trials)
    if reasons:
        parts.append("<h2>Errored trials</h2><ul>" + "".join(f"<li>{n} × {e(r)}</li>" for r, n in reasons) + "</ul>")
    for s in stats.skills:
        groups = [("dormancy violations", s.dormancy, False), ("collisions", s.collisions, True), ("missed", s.missed, False)]
        if not any(g[1] for g in groups):
            continue
        parts.append(f"<h3>{e(s.skill)}</h3>")
        for name, items, owner in groups:
            if items:
                lis = "".join(f"<li>{m.fired}/{m.trials} · {e(m.type or 'prompt')}{e(f' ({m.owner}) ' if owner else ' ')}{e(m.prompt)}</li>" for m in items)
                parts.append(f"<p>{e(name)}:</p><ul>{lis}</ul>")
    if stats.collisions:
        parts.append("<h2>Colliding pairs</h2><table>" + row(["a ↔ b", "a on b's prompts", "b on a's prompts", "rate [95 %]"], "th"))
        for c in stats.collisions:
            parts.append(
                row([e(f"{c.a} ↔ {c.b}"), f"{c.a_on_b}/{c.b_prompts}" if c.b_prompts else "—", f"{c.b_on_a}/{c.a_prompts}", f"{c.rate:.2f}{_ci(c.ci)}"])
            )
        parts.append("</table>")
    cols = list(next(iter(stats.matrix.values()), {}))
    if len(stats.matrix) > 1 and cols:
        parts.append("<h2>Confusion matrix</h2><table>" + row(["prompts of ↓ / loaded →", *[e(c) for c in cols], "trials"], "th"))
        for r, cells, n in _matrix_rows(stats, cols):
            shown = [f"<span class='bad'>{v}</span>" if bad else str(v) for v, bad in cells]
            parts.append(row([e(r), *shown, str(n)]))
        parts.append("</table>")
    if manifest:
        from agentsproof.report.manifest import manifest_html

        parts.append(manifest_html(manifest))
    parts.append("</body></html>")
    return "\n".join(parts)
