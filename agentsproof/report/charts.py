"""Inline SVG charts of deltas against the grade bands (no script, no CDN, no fonts fetched).

One drawing vocabulary for every chart: a delta axis from −1 to +1, the four grade bands
shaded behind it (F < 0 ≤ C < 0.15 ≤ B < 0.30 ≤ A), a dot for an estimate and a bar for
its interval. The HTML report draws its forest plot, per-case dots and the pairwise
preference bar here, and the server's trend chart (``agentsproof serve``) uses the same
functions. Every text that came from a run is escaped; the result is ``Markup``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

BANDS = (("F", -1.0, 0.0, "#fbe3e1"), ("C", 0.0, 0.15, "#fdf3d7"), ("B", 0.15, 0.30, "#e3effa"), ("A", 0.30, 1.0, "#e1f3e6"))
INK, MUTED, INTERVAL = "#1d2330", "#6b7280", "#3a6ea5"
FONT = 'font-family="system-ui, sans-serif"'


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".") if abs(v - round(v, 1)) < 1e-9 else f"{v:.2f}"


def _clip(v: float) -> float:
    return max(-1.0, min(1.0, v))


@dataclass
class Axis:
    """Maps a delta in [lo, hi] to x pixels in [left, right]."""

    left: float
    right: float
    lo: float = -1.0
    hi: float = 1.0

    def x(self, v: float) -> float:
        """The x pixel of delta ``v``, clipped to [lo, hi] and rounded to 0.1 px."""
        v = max(self.lo, min(self.hi, v))
        return round(self.left + (v - self.lo) / (self.hi - self.lo) * (self.right - self.left), 1)


def _bands_x(ax: Axis, top: float, height: float) -> list[str]:
    out = []
    for grade, a, b, fill in BANDS:
        x0, x1 = ax.x(a), ax.x(b)
        out.append(f'<rect class="band band-{grade}" x="{x0}" y="{top}" width="{round(x1 - x0, 1)}" height="{height}" fill="{fill}"/>')
        out.append(f'<text x="{round((x0 + x1) / 2, 1)}" y="{top + 11}" font-size="10" text-anchor="middle" fill="{MUTED}" {FONT}>{grade}</text>')
    return out


def _ticks_x(ax: Axis, y: float) -> list[str]:
    out = []
    for v in (-1.0, -0.5, 0.0, 0.15, 0.30, 0.5, 1.0):
        out.append(f'<text x="{ax.x(v)}" y="{y}" font-size="9" text-anchor="middle" fill="{MUTED}" {FONT}>{"+" if v > 0 else ""}{_num(v)}</text>')
    return out


@dataclass
class ForestRow:
    """One row of a forest plot: a label, its delta and interval, a note and an optional link."""

    label: str
    delta: float | None
    lo: float | None = None
    hi: float | None = None
    note: str = ""
    """Shown after the label, e.g. the grade and verdict."""
    href: str | None = None


def forest_plot(rows: Sequence[ForestRow], width: int = 720) -> Markup:
    """Every item's delta (dot) and interval (bar) against the grade bands, one row each."""
    row_h, top, label_w = 22, 18, 230
    height = top + row_h * max(1, len(rows)) + 22
    ax = Axis(label_w + 10, width - 12)
    parts = [
        f'<svg class="chart forest" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="forest plot: every item\'s delta with its interval against the grade bands">'
    ]
    parts += _bands_x(ax, 0, height - 16)
    parts.append(f'<line x1="{ax.x(0)}" x2="{ax.x(0)}" y1="0" y2="{height - 16}" stroke="{MUTED}" stroke-dasharray="3 3"/>')
    for i, r in enumerate(rows):
        y = top + row_h * i + row_h / 2
        label = escape(r.label if len(r.label) <= 32 else r.label[:31] + "…")
        note = f' <tspan fill="{MUTED}">{escape(r.note)}</tspan>' if r.note else ""
        text = f'<text x="4" y="{y + 4}" font-size="11" fill="{INK}" {FONT}>{label}{note}</text>'
        parts.append(f'<a href="{escape(r.href)}">{text}</a>' if r.href else text)
        if r.lo is not None and r.hi is not None:
            parts.append(
                f'<line class="ci" x1="{ax.x(r.lo)}" x2="{ax.x(r.hi)}" y1="{y}" y2="{y}" stroke="{INTERVAL}" stroke-width="3" stroke-linecap="round">'
                f"<title>{escape(r.label)}: interval [{r.lo:+.2f}, {r.hi:+.2f}]</title></line>"
            )
        if r.delta is not None:
            parts.append(
                f'<circle class="est" cx="{ax.x(r.delta)}" cy="{y}" r="4.5" fill="{INK}"><title>{escape(r.label)}: delta {r.delta:+.2f}</title></circle>'
            )
    parts += _ticks_x(ax, height - 4)
    parts.append("</svg>")
    return Markup("".join(parts))


def case_dots(cases: Sequence[tuple[str, float | None]], delta: float | None, lo: float | None, hi: float | None, width: int = 520) -> Markup:
    """One dot per case delta on the band axis, with the item's delta and interval above them."""
    height = 64
    ax = Axis(12, width - 12)
    parts = [
        f'<svg class="chart case-dots" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="per-case deltas">'
    ]
    parts += _bands_x(ax, 0, height - 14)
    parts.append(f'<line x1="{ax.x(0)}" x2="{ax.x(0)}" y1="0" y2="{height - 14}" stroke="{MUTED}" stroke-dasharray="3 3"/>')
    if lo is not None and hi is not None:
        parts.append(
            f'<line class="ci" x1="{ax.x(lo)}" x2="{ax.x(hi)}" y1="20" y2="20" stroke="{INTERVAL}" stroke-width="3" stroke-linecap="round"><title>item interval [{lo:+.2f}, {hi:+.2f}]</title></line>'
        )
    if delta is not None:
        parts.append(f'<circle class="est" cx="{ax.x(delta)}" cy="20" r="4.5" fill="{INK}"><title>item delta {delta:+.2f}</title></circle>')
    seen: dict[float, int] = {}
    for name, d in cases:
        if d is None:
            continue
        x = ax.x(d)
        k = seen.get(x, 0)
        seen[x] = k + 1
        parts.append(
            f'<circle class="case" cx="{x}" cy="{36 + 5 * (k % 3)}" r="3.5" fill="{INTERVAL}" fill-opacity="0.75"><title>{escape(name)}: {d:+.2f}</title></circle>'
        )
    parts += _ticks_x(ax, height - 3)
    parts.append("</svg>")
    return Markup("".join(parts))


def preference_bar(wins: int, ties: int, losses: int, rate: float | None, lo: float | None, hi: float | None, width: int = 520) -> Markup:
    """Pairwise judge: share of pairs where the with-arm answer won / tied / lost, and the
    with-arm preference rate (ties count half) with its interval."""
    total = wins + ties + losses
    height, left, right = 46, 12, width - 12
    span = right - left
    parts = [
        f'<svg class="chart preference" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="pairwise preference of the with-skill answers">'
    ]
    x = float(left)
    for label, n, fill in (("with preferred", wins, "#2e7d4f"), ("tie", ties, "#c9ced6"), ("baseline preferred", losses, "#b3402e")):
        if total and n:
            w = span * n / total
            parts.append(
                f'<rect class="pref" x="{round(x, 1)}" y="6" width="{round(w, 1)}" height="16" fill="{fill}"><title>{label}: {n} of {total}</title></rect>'
            )
            x += w
    if not total:
        parts.append(f'<rect x="{left}" y="6" width="{span}" height="16" fill="#eef0f3"/>')
    if rate is not None:

        def px(v: float) -> float:
            return round(left + max(0.0, min(1.0, v)) * span, 1)

        if lo is not None and hi is not None:
            parts.append(
                f'<line class="ci" x1="{px(lo)}" x2="{px(hi)}" y1="30" y2="30" stroke="{INK}" stroke-width="2"><title>interval [{lo:.2f}, {hi:.2f}]</title></line>'
            )
        parts.append(f'<circle class="est" cx="{px(rate)}" cy="30" r="4" fill="{INK}"><title>with-arm preference {rate:.2f}</title></circle>')
        parts.append(f'<line x1="{px(0.5)}" x2="{px(0.5)}" y1="2" y2="36" stroke="{MUTED}" stroke-dasharray="2 2"/>')
    for v, anchor in ((0.0, "start"), (0.5, "middle"), (1.0, "end")):
        parts.append(f'<text x="{round(left + v * span, 1)}" y="{height - 2}" font-size="9" text-anchor="{anchor}" fill="{MUTED}" {FONT}>{_num(v)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


@dataclass
class TrendPoint:
    """One run on a trend chart: when it ran, its delta and the delta's interval."""

    when: str
    delta: float
    lo: float | None = None
    hi: float | None = None


def trend_chart(name: str, points: Sequence[TrendPoint], width: int = 520, height: int = 140) -> Markup:
    """Delta over runs (left to right) on a vertical band axis: the server's trend per skill."""
    pad_l, pad_r, pad_y = 30, 10, 10

    def y(v: float) -> float:
        return round(pad_y + (1 - _clip(v)) / 2 * (height - 2 * pad_y), 1)

    parts = [
        f'<svg class="chart trend" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="delta over time for {escape(name)}">'
    ]
    for grade, a, b, fill in BANDS:
        parts.append(f'<rect class="band band-{grade}" x="{pad_l}" y="{y(b)}" width="{width - pad_l - pad_r}" height="{round(y(a) - y(b), 1)}" fill="{fill}"/>')
    parts.append(f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{y(0)}" y2="{y(0)}" stroke="#999" stroke-dasharray="3 3"/>')
    parts.append(
        f'<text x="2" y="14" font-size="10" {FONT}>+1</text><text x="2" y="{y(0) + 3}" font-size="10" {FONT}>0</text><text x="2" y="{height - 4}" font-size="10" {FONT}>−1</text>'
    )
    n = len(points)
    step = (width - pad_l - pad_r) / max(1, n - 1)
    xs = [round(pad_l + (i * step if n > 1 else (width - pad_l - pad_r) / 2), 1) for i in range(n)]
    for x, p in zip(xs, points, strict=True):
        if p.lo is not None and p.hi is not None:
            parts.append(f'<line class="ci" x1="{x}" x2="{x}" y1="{y(p.lo)}" y2="{y(p.hi)}" stroke="#9db5d3" stroke-width="3"/>')
    if n:
        parts.append(
            f'<polyline fill="none" stroke="{INTERVAL}" stroke-width="2" points="{" ".join(f"{x},{y(p.delta)}" for x, p in zip(xs, points, strict=True))}"/>'
        )
    for x, p in zip(xs, points, strict=True):
        ci = f" [{p.lo:+.2f}, {p.hi:+.2f}]" if p.lo is not None and p.hi is not None else ""
        parts.append(f'<circle class="est" cx="{x}" cy="{y(p.delta)}" r="3.5" fill="{INK}"><title>{escape(p.when)}: delta {p.delta:+.2f}{ci}</title></circle>')
    parts.append("</svg>")
    return Markup("".join(parts))
