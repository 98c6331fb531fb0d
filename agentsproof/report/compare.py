"""Terminal table and Markdown for a ``Comparison``."""

from __future__ import annotations

from agentsproof.stats.compare import Comparison, ItemComparison


def _count(passed: int | None, scored: int | None) -> str:
    if scored is None:
        return "—"
    return f"{passed}/{scored}" + (f" ({passed / scored:.0%})" if scored and passed is not None else "")


def _p(v: float | None) -> str:
    if v is None:
        return "—"
    return "< 0.001" if v < 0.001 else f"{v:.3f}"


def _delta(i: ItemComparison) -> str:
    def f(v: float | None) -> str:
        return "—" if v is None else f"{v:+.2f}"

    return f"{f(i.before_delta)} → {f(i.after_delta)}"


def _grade(i: ItemComparison) -> str:
    return f"{i.before_grade or '—'} → {i.after_grade or '—'}"


def _errored(i: ItemComparison) -> str:
    return f"{i.before_errored if i.before_errored is not None else '—'}/{i.after_errored if i.after_errored is not None else '—'}"


def _marker(i: ItemComparison) -> str:
    """↑ the pass rate rose, ↓ it fell, = unchanged; blank when a side has no rate."""
    b, a = i.before_rate, i.after_rate
    if b is None or a is None:
        return ""
    return "↑" if a > b + 1e-12 else "↓" if a < b - 1e-12 else "="


def _rows(cmp: Comparison) -> list[list[str]]:
    return [
        [
            i.id,
            _count(i.before_passed, i.before_scored),
            _count(i.after_passed, i.after_scored),
            _marker(i),
            i.verdict,
            _p(i.p_value),
            _delta(i),
            _grade(i),
            _errored(i),
        ]
        for i in cmp.items
    ]


def overall_row(cmp: Comparison) -> list[str]:
    """Pass rate over every scored with-arm trial of each run, and its change in points."""

    def rate(side: str) -> tuple[int, int]:
        return (sum(getattr(i, f"{side}_passed") or 0 for i in cmp.items), sum(getattr(i, f"{side}_scored") or 0 for i in cmp.items))

    (bp, bn), (ap, an) = rate("before"), rate("after")
    change = f"{(ap / an - bp / bn) * 100:+.1f} pts" if bn and an else "—"
    mark = "" if not (bn and an) else "↑" if ap * bn > bp * an else "↓" if ap * bn < bp * an else "="
    return ["pass rate", _count(bp, bn), _count(ap, an), mark, change, "", "", "", ""]


HEADER = ["item", "before", "after", "Δ", "verdict", "p", "delta", "grade", "errored b/a"]


def _summary(cmp: Comparison) -> str:
    counts = {k: v for k, v in cmp.counts().items() if v}
    return ", ".join(f"{v} {k}" for k, v in counts.items()) or "no items"


def render_terminal(cmp: Comparison) -> str:
    """``agentsproof compare`` as terminal text: the warnings, one aligned row per item, the overall pass rate, the result."""
    rows = [HEADER] + _rows(cmp) + [overall_row(cmp)]
    widths = [max(len(r[c]) for r in rows) for c in range(len(HEADER))]
    lines = [f"compare: {cmp.before_path} → {cmp.after_path} (two-sided Fisher exact test, alpha {cmp.alpha:g})"]
    for w in cmp.warnings:
        lines.append(f"warning: {w}")
    for r in rows:
        lines.append("  " + "  ".join(cell.ljust(widths[c]) for c, cell in enumerate(r)).rstrip())
    lines.append(f"result: {_summary(cmp)}")
    if any((i.before_errored or 0) + (i.after_errored or 0) for i in cmp.items):
        lines.append("note: errored trials are left out of the counts; re-run them (--retry-errors) before trusting a verdict")
    return "\n".join(lines)


def _md(cell: str) -> str:
    from agentsproof.core.mdtext import md_text

    return md_text(cell, limit=400)


def render_markdown(cmp: Comparison) -> str:
    """``agentsproof compare`` as a Markdown page: the runs, the test, a table of items and a legend."""
    out = [
        "# agentsproof compare",
        "",
        f"- before: {_md(str(cmp.before_path))}",
        f"- after: {_md(str(cmp.after_path))}",
        f"- test: two-sided Fisher exact test on the with-skill arm's pass/fail counts, alpha {cmp.alpha:g}",
        f"- result: {_summary(cmp)}",
        "",
    ]
    if cmp.warnings:
        out += ["**Warnings**", ""] + [f"- {_md(w)}" for w in cmp.warnings] + [""]
    out.append("| " + " | ".join(HEADER) + " |")
    out.append("|" + "|".join("---" for _ in HEADER) + "|")
    for r in _rows(cmp):
        out.append("| " + " | ".join(_md(c) for c in r) + " |")
    out.append("| " + " | ".join(f"**{_md(c)}**" if c else "" for c in overall_row(cmp)) + " |")
    out += [
        "",
        "↑ / ↓: the pass rate rose / fell (the verdict says whether chance explains it). SAME: identical pass rates. BETTER / WORSE: p < alpha. NOISE: a difference chance explains. "
        "NEW / REMOVED: in one run only. INCONCLUSIVE: a side has no scored trial. Errored trials are left out.",
        "",
    ]
    return "\n".join(out)
