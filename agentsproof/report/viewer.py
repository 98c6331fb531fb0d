"""``agentsproof view``: an index of past runs and, per item, its runs side by side.

Reads every run folder below a runs folder (:func:`agentsproof.report.runs.run_folders`) and
the older ``history/<time>/`` JSON copies (a run kept in both is listed once), never through
a link. Pages are static HTML with inline CSS and inline SVG (no script, no CDN): the index
lists each run (date, plugin, command, target, provider, model, verdict, and each item's
grade and delta with its 95 % interval) with a link to its own report; each item has a page
with its last N runs side by side (arm means, delta, interval, grade, pass rate, trials) under
a trend chart of the delta and its interval (:func:`agentsproof.report.charts.trend_chart`).
Filtering by item is that page, or the index written with ``--item``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from agentsproof.report.runs import RUN_FOLDER, run_folders

MAX_JSON_BYTES = 512 << 20
"""A report larger than this is listed by name only (its numbers are not read)."""


@dataclass
class ItemRow:
    """One item of one run, as the viewer shows it."""

    id: str
    name: str
    delta: float | None
    lo: float | None
    hi: float | None
    grade: str | None
    pass_rate: float | None
    with_mean: float | None
    without_mean: float | None
    with_scored: int
    without_scored: int
    errored: int
    status: str


@dataclass
class RunRow:
    """One saved run: where its reports are and what it says."""

    json_path: Path
    html_path: Path | None
    created_at: str
    plugin: str
    command: str
    targets: str
    provider: str
    model: str
    verdict: str
    incomplete_reason: str | None
    items: list[ItemRow] = field(default_factory=list)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _item(data: dict[str, Any]) -> ItemRow:
    stats = _dict(data.get("stats"))
    ci = stats.get("delta_ci")
    lo, hi = (_num(ci[0]), _num(ci[1])) if isinstance(ci, list) and len(ci) == 2 else (None, None)
    w, wo = _dict(data.get("with_arm")), _dict(data.get("without_arm"))
    return ItemRow(
        id=str(data.get("id") or data.get("name") or "?"),
        name=str(data.get("name") or data.get("id") or "?"),
        delta=_num(data.get("delta")),
        lo=lo,
        hi=hi,
        grade=str(data["grade"]) if data.get("grade") else None,
        pass_rate=_num(data.get("pass_rate")),
        with_mean=_num(w.get("mean_score")),
        without_mean=_num(wo.get("mean_score")),
        with_scored=int(_num(w.get("scored")) or 0),
        without_scored=int(_num(wo.get("scored")) or 0),
        errored=int((_num(w.get("errored")) or 0) + (_num(wo.get("errored")) or 0)),
        status=str(data.get("status") or "complete"),
    )


def read_run(json_path: Path) -> RunRow | None:
    """The run saved at ``json_path`` (a regular file, never a link), or None when it is not a run report."""
    try:
        st = os.stat(json_path, follow_symlinks=False)
        if not json_path.is_file() or json_path.is_symlink() or st.st_size > MAX_JSON_BYTES:
            return None
        data = json.loads(json_path.read_bytes().decode("utf-8", "replace"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list) or "command" not in data:
        return None
    items = [_item(it) for it in data["items"] if isinstance(it, dict)]
    targets = sorted({str(it.get("target") or "chat") for it in data["items"] if isinstance(it, dict)}) or ["chat"]
    html = json_path.with_suffix(".html")
    if data.get("command") == "eval-all" and json_path.name == "eval-all-summary.json":
        html = json_path.with_name(f"{data.get('plugin', '')}-eval.html")
    return RunRow(
        json_path=json_path,
        html_path=html if html.is_file() and not html.is_symlink() else None,
        created_at=str(data.get("created_at") or ""),
        plugin=str(data.get("plugin") or ""),
        command=str(data.get("command") or ""),
        targets=", ".join(targets),
        provider=str(data.get("provider") or ""),
        model=str(data.get("model") or ""),
        verdict=str(data.get("verdict") or ""),
        incomplete_reason=data.get("incomplete_reason") if isinstance(data.get("incomplete_reason"), str) else None,
        items=items,
    )


def collect(root: Path) -> list[RunRow]:
    """Every run below ``root``, oldest first: the run folders' reports, then the ``history/``
    copies of runs no run folder holds (runs made before run folders existed)."""
    runs: list[RunRow] = []
    seen: set[tuple[str, str, str]] = set()
    for folder in run_folders(root):
        for path in sorted(folder.glob("*.json")):
            row = read_run(path)
            if row is not None:
                runs.append(row)
                seen.add((row.created_at, row.plugin, path.name))
    for path in sorted(root.rglob("history/*/*.json")) if root.is_dir() else []:
        if any(p.is_symlink() for p in (path, path.parent, path.parent.parent)):
            continue
        row = read_run(path)
        if row is not None and (row.created_at, row.plugin, path.name) not in seen:
            runs.append(row)
            seen.add((row.created_at, row.plugin, path.name))
    runs.sort(key=lambda r: (r.created_at, str(r.json_path)))
    return runs


def item_slug(item_id: str) -> str:
    """A file name for an item's page (``skills/sql-review`` → ``skills-sql-review``)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", item_id).strip("-.") or "item"
    return slug[:120]


# ------------------------------------------------------------------ pages

CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1d2330; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 1.5rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border-bottom: 1px solid #e5e7eb; padding: .3rem .6rem; text-align: left; vertical-align: top; font-size: .9rem; }
th { background: #f3f4f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: #6b7280; }
.verdict-PASS { color: #166534; font-weight: 600; } .verdict-FAIL { color: #991b1b; font-weight: 600; }
.verdict-ERROR, .verdict-INCOMPLETE { color: #92400e; font-weight: 600; }
.items a { margin-right: .8rem; white-space: nowrap; }
ul.item-cells { list-style: none; margin: 0; padding: 0; }
"""


def _f(v: float | None, spec: str = "+.2f") -> str:
    return "—" if v is None else format(v, spec)


def _interval(it: ItemRow) -> str:
    return "—" if it.lo is None or it.hi is None else f"[{it.lo:+.2f}, {it.hi:+.2f}]"


def _rel(target: Path, page_dir: Path) -> str:
    return escape(Path(os.path.relpath(target, page_dir)).as_posix(), quote=True)


def _page(title: str, body: list[str]) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>" + "".join(body) + "</body></html>\n"
    )


def _when(run: RunRow) -> str:
    return run.created_at.replace("T", " ").replace("+00:00", " UTC")


def render_index(runs: list[RunRow], page_dir: Path, root: Path, item: str | None = None) -> str:
    """The index page: every run (newest first), or those holding ``item``."""
    shown = [r for r in runs if item is None or any(it.id == item or it.name == item for it in r.items)]
    ids: dict[str, str] = {}
    for r in runs:
        for it in r.items:
            ids.setdefault(it.id, it.name)
    body = [f"<h1>agentsproof runs <span class='muted'>in {escape(str(root))}</span></h1>"]
    if item is not None:
        body.append(f"<p>Runs holding <b>{escape(item)}</b> ({len(shown)} of {len(runs)}). <a href='index.html'>All runs</a></p>")
    body.append(
        "<p class='items'>Items (each: its runs side by side): "
        + "".join(f"<a href='{escape(item_slug(i), quote=True)}.html'>{escape(n)}</a>" for i, n in sorted(ids.items()))
        + "</p>"
    )
    if not shown:
        body.append("<p>No runs found.</p>")
        return _page("agentsproof runs", body)
    body.append(
        "<table class='runs'><thead><tr><th>date</th><th>plugin</th><th>command</th><th>target</th><th>provider</th><th>model</th>"
        "<th>verdict</th><th>items: grade, delta [95 % interval]</th><th>report</th></tr></thead><tbody>"
    )
    for r in reversed(shown):
        cells = "".join(
            f"<li><a href='{escape(item_slug(it.id), quote=True)}.html'>{escape(it.name)}</a> {escape(it.grade or '—')} {_f(it.delta)} <span class='muted'>{_interval(it)}</span></li>"
            for it in r.items
            if item is None or it.id == item or it.name == item
        )
        report = f"<a href='{_rel(r.html_path, page_dir)}'>html</a> · " if r.html_path is not None else ""
        report += f"<a href='{_rel(r.json_path, page_dir)}'>json</a>"
        why = f"<div class='muted'>{escape(r.incomplete_reason)}</div>" if r.incomplete_reason else ""
        body.append(
            f"<tr class='run'><td>{escape(_when(r))}</td><td>{escape(r.plugin)}</td><td>{escape(r.command)}</td><td>{escape(r.targets)}</td>"
            f"<td>{escape(r.provider)}</td><td>{escape(r.model)}</td><td class='verdict-{escape(r.verdict, quote=True)}'>{escape(r.verdict)}{why}</td>"
            f"<td><ul class='item-cells'>{cells}</ul></td><td>{report}</td></tr>"
        )
    body.append("</tbody></table>")
    return _page("agentsproof runs", body)


def render_item(item_id: str, runs: list[RunRow], page_dir: Path, last: int) -> str:
    """An item's page: its last ``last`` runs side by side under the trend of their delta and interval."""
    from agentsproof.report.charts import TrendPoint, trend_chart

    pairs = [(r, it) for r in runs for it in r.items if it.id == item_id][-last:]
    name = pairs[-1][1].name if pairs else item_id
    body = [f"<h1>{escape(name)} <span class='muted'>{escape(item_id)}</span></h1>", "<p><a href='index.html'>All runs</a></p>"]
    points = [TrendPoint(_when(r), it.delta, it.lo, it.hi) for r, it in pairs if it.delta is not None]
    body.append(f"<h2>Delta and its 95 % interval over the last {len(pairs)} run{'s' if len(pairs) != 1 else ''}</h2>")
    body.append(str(trend_chart(name, points)) if points else "<p class='muted'>No run of this item has a delta.</p>")
    rows: list[tuple[str, Any]] = [
        ("date", lambda r, it: escape(_when(r))),
        ("plugin", lambda r, it: escape(r.plugin)),
        ("target", lambda r, it: escape(r.targets)),
        ("provider", lambda r, it: escape(r.provider)),
        ("model", lambda r, it: escape(r.model)),
        ("with skill (mean)", lambda r, it: _f(it.with_mean, ".2f")),
        ("without (mean)", lambda r, it: _f(it.without_mean, ".2f")),
        ("delta", lambda r, it: _f(it.delta)),
        ("95 % interval", lambda r, it: _interval(it)),
        ("grade", lambda r, it: escape(it.grade or "—")),
        ("pass rate", lambda r, it: "—" if it.pass_rate is None else f"{it.pass_rate:.0%}"),
        ("scored trials (with / without)", lambda r, it: f"{it.with_scored} / {it.without_scored}"),
        ("errored trials", lambda r, it: str(it.errored)),
        ("run verdict", lambda r, it: f"<span class='verdict-{escape(r.verdict, quote=True)}'>{escape(r.verdict)}</span>"),
        ("report", lambda r, it: f"<a href='{_rel(r.html_path or r.json_path, page_dir)}'>{'html' if r.html_path else 'json'}</a>"),
    ]
    body.append("<h2>Side by side (oldest left)</h2><table class='side'><tbody>")
    for label, cell in rows:
        body.append(f"<tr><th>{escape(label)}</th>" + "".join(f"<td class='num'>{cell(r, it)}</td>" for r, it in pairs) + "</tr>")
    body.append("</tbody></table>")
    return _page(f"{name}: runs side by side", body)


def write_view(root: Path, out: Path, *, item: str | None = None, last: int = 10) -> tuple[Path, int]:
    """The index (``out/index.html``) and one page per item (``out/<item>.html``) of the runs
    below ``root``; (the index's path, how many runs it lists). Written through
    :mod:`agentsproof.core.safepath` (``out`` is the user's choice; nothing below it is followed)."""
    from agentsproof.core.safepath import write_file

    runs = collect(root)
    out.mkdir(parents=True, exist_ok=True)
    ids = sorted({it.id for r in runs for it in r.items})
    for item_id in ids:
        write_file(out, f"{item_slug(item_id)}.html", render_item(item_id, runs, out, last).encode("utf-8", "replace"))
    write_file(out, "index.html", render_index(runs, out, root, item).encode("utf-8", "replace"))
    return out / "index.html", len(runs)


__all__ = ["RUN_FOLDER", "ItemRow", "RunRow", "collect", "read_run", "render_index", "render_item", "write_view"]
