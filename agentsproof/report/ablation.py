"""The ablation report (``agentsproof ablate``): JSON, Markdown and HTML with a forest plot.

``data`` is the plain mapping ``commands.ablate`` builds: the parts with their effect of
removal, interval, p-values, verdict and tokens; the whole skill's delta; the smallest skill
and its confirmation. Each writer shows the same numbers, rounded the same way.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

VERDICT_WORDS = {
    "needed": "needed: removing it hurts",
    "removable": "removable: removing it costs less than the margin",
    "unclear": "unclear: neither shown",
}


def _num(x: float | None, signed: bool = True) -> str:
    if x is None:
        return "–"
    return f"{x:+.2f}" if signed else f"{x:.2f}"


def _ci(ci: Any) -> str:
    if not ci:
        return "–"
    return f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


def _p(p: float | None) -> str:
    return "–" if p is None else (f"{p:.3f}" if p >= 0.001 else "<0.001")


def _level(data: dict[str, Any]) -> str:
    """The parts' interval level as words: 95 %, or higher with ``--adaptive`` (Bonferroni over the looks)."""
    level = float(data.get("level", 0.95)) * 100
    return f"{level:.0f} %" if abs(level - round(level)) < 1e-9 else f"{level:.1f} %"


def suggestions(data: dict[str, Any]) -> list[str]:
    """The improvement suggestions of an ablation: removable parts and their savings, parts that do nothing sure."""
    out = []
    removable = [e for e in data["parts"] if e["verdict"] == "removable"]
    if removable:
        saved = sum(e["tokens"] for e in removable)
        names = ", ".join(f"{e['title']} ({e['tokens']:,} tokens)" for e in removable)
        out.append(f"Removable: {names} — {saved:,} tokens a call saved, each costing less than {data['margin']:.2f} when removed alone.")
    small = data.get("smallest")
    if small and small.get("together_not_removable"):
        out.append("Removed together, the removable parts cost more than the margin: keep at least one of them (each was removable alone).")
    elif small and small["vs_whole"]["non_inferior"]:
        out.append(f"The smallest skill (in {small['folder']}) does as well as the whole one within {data['margin']:.2f}.")
    needed = [e for e in data["parts"] if e["verdict"] == "needed"]
    if needed:
        out.append("Needed: " + ", ".join(e["title"] for e in needed) + " — removing any of them lowers the score.")
    return out


def to_markdown(data: dict[str, Any]) -> str:
    """The ablation as Markdown."""
    w = data["whole"]
    lines = [
        f"# Ablation: {data['skill']}",
        "",
        f"Whole skill vs no skill: delta {_num(w.get('delta'))}, 95 % interval {_ci(w.get('interval'))}, grade {w.get('grade') or '–'}; "
        f"{w.get('tokens', 0):,} tokens in its parts. Margin {data['margin']:.2f}. Question: {data.get('question_words', '')}",
        "",
        "Effect of removing each part = score without the part − score of the whole skill, paired by case "
        "(negative: the part helps). Verdicts adjusted across the parts (Holm)."
        + (
            f" --adaptive: {data['calls']['trials']:,} trials instead of {data['calls']['fixed_trials']:,} with every arm at the cap."
            if data.get("adaptive")
            else ""
        ),
        "",
        f"| part | kind | tokens | effect of removing | {_level(data)} interval | per 1,000 tokens | p (needed) | p (removable) | verdict |",
        "|---|---|---:|---:|---|---:|---:|---:|---|",
    ]
    for e in data["parts"]:
        lines.append(
            f"| {e['title']} | {e['kind']} | {e['tokens']:,} | {_num(e['effect'])} | {_ci(e['interval'])} | {_num(e['per_1k_tokens'])} | "
            f"{_p(e['p_needed_adjusted'])} | {_p(e['p_removable_adjusted'])} | {e['verdict']} |"
        )
    small = data.get("smallest")
    lines += ["", "## The smallest skill that does as well", ""]
    if not small:
        lines.append("No part is removable: the whole skill is the smallest that was shown to do as well.")
    else:
        vw, vn = small["vs_whole"], small["vs_none"]
        lines += [
            f"Without {', '.join(small['removed'])} ({small['tokens_saved']:,} tokens saved, {small['tokens_kept']:,} kept), measured in {small['measured_in']}:",
            "",
            f"- against the whole skill: {_num(vw['effect'])}, 95 % interval {_ci(vw['interval'])}, "
            f"{'non-inferior' if vw['non_inferior'] else 'NOT shown non-inferior'} at the margin {data['margin']:.2f} (p {_p(vw['p'])})",
            f"- against no skill: delta {_num(vn['delta'])}, 95 % interval {_ci(vn['interval'])}, grade {vn['grade'] or '–'}",
            f"- folder: `{small['folder']}`",
        ]
        if small.get("together_not_removable"):
            lines.append("- each of these parts was removable alone, but not all of them together")
    tips = suggestions(data)
    if tips:
        lines += ["", "## Suggestions", "", *[f"- {t}" for t in tips]]
    return "\n".join(lines) + "\n"


def forest_svg(data: dict[str, Any], width: int = 640) -> str:
    """The effect of removing each part with its interval, the margin band and 0 marked."""
    parts = data["parts"]
    row, left, right = 26, 220, 20
    height = row * (len(parts) + 1) + 30
    lo = float(min([-data["margin"] * 2, *[e["interval"][0] for e in parts if e["interval"]]] + [-0.1]))
    hi = float(max([0.1, *[e["interval"][1] for e in parts if e["interval"]]]))

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (width - left - right)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="effect of removing each part">']
    out.append(f'<rect x="{x(-data["margin"]):.1f}" y="10" width="{x(0) - x(-data["margin"]):.1f}" height="{height - 30}" fill="#e8f4e8"/>')
    out.append(f'<line x1="{x(0):.1f}" y1="10" x2="{x(0):.1f}" y2="{height - 20}" stroke="#444"/>')
    colour = {"needed": "#b03030", "removable": "#2f7d32", "unclear": "#777"}
    for k, e in enumerate(parts):
        y = 10 + row * (k + 0.5) + row / 2
        out.append(f'<text x="4" y="{y + 4:.1f}" font-size="12">{html.escape(e["title"][:30])}</text>')
        if e["interval"]:
            c = colour.get(e["verdict"], "#777")
            out.append(f'<line x1="{x(e["interval"][0]):.1f}" y1="{y:.1f}" x2="{x(e["interval"][1]):.1f}" y2="{y:.1f}" stroke="{c}" stroke-width="2"/>')
            out.append(f'<circle cx="{x(e["effect"]):.1f}" cy="{y:.1f}" r="4" fill="{c}"><title>{_num(e["effect"])} {_ci(e["interval"])}</title></circle>')
    for v in (lo, -data["margin"], 0.0, hi):
        out.append(f'<text x="{x(v):.1f}" y="{height - 6}" font-size="10" text-anchor="middle">{v:+.2f}</text>')
    out.append("</svg>")
    return "".join(out)


def to_html(data: dict[str, Any]) -> str:
    """The ablation as a self-contained HTML page."""
    esc = html.escape
    w = data["whole"]
    rows = "".join(
        f"<tr><td>{esc(e['title'])}</td><td>{e['kind']}</td><td class=n>{e['tokens']:,}</td><td class=n>{_num(e['effect'])}</td>"
        f"<td>{_ci(e['interval'])}</td><td class=n>{_num(e['per_1k_tokens'])}</td><td class=n>{_p(e['p_needed_adjusted'])}</td>"
        f"<td class=n>{_p(e['p_removable_adjusted'])}</td><td class='v {e['verdict']}' title='{esc(VERDICT_WORDS[e['verdict']])}'>{e['verdict']}</td></tr>"
        for e in data["parts"]
    )
    small = data.get("smallest")
    if small:
        vw, vn = small["vs_whole"], small["vs_none"]
        small_html = (
            f"<p>Without {esc(', '.join(small['removed']))}: {small['tokens_saved']:,} tokens saved, measured in {esc(small['measured_in'])}.</p><ul>"
            f"<li>Against the whole skill: {_num(vw['effect'])}, 95 % interval {_ci(vw['interval'])}, "
            f"<b>{'non-inferior' if vw['non_inferior'] else 'not shown non-inferior'}</b> at the margin {data['margin']:.2f}</li>"
            f"<li>Against no skill: delta {_num(vn['delta'])}, 95 % interval {_ci(vn['interval'])}, grade {esc(vn['grade'] or '–')}</li>"
            f"<li>Folder: <code>{esc(small['folder'])}</code></li></ul>"
        )
        if small.get("together_not_removable"):
            small_html += "<p><b>Each of these parts was removable alone, but not all of them together.</b></p>"
    else:
        small_html = "<p>No part is removable: the whole skill is the smallest shown to do as well.</p>"
    tips = "".join(f"<li>{esc(t)}</li>" for t in suggestions(data))
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>Ablation: {esc(data['skill'])}</title><style>"
        "body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px}td.n{text-align:right}.needed{color:#b03030}.removable{color:#2f7d32}.unclear{color:#777}"
        "</style></head><body>"
        f"<h1>Ablation: {esc(data['skill'])}</h1>"
        f"<p>Whole skill vs no skill: delta {_num(w.get('delta'))}, 95 % interval {_ci(w.get('interval'))}, grade {esc(str(w.get('grade') or '–'))}. "
        f"Margin {data['margin']:.2f}. {esc(data.get('question_words', ''))}</p>"
        "<p>Effect of removing each part = score without the part − score of the whole skill, paired by case (negative: the part helps); "
        "the green band is the margin, within which a removal counts as harmless. Verdicts are adjusted across the parts (Holm).</p>"
        f"{forest_svg(data)}"
        f"<table><tr><th>part</th><th>kind</th><th>tokens</th><th>effect of removing</th><th>{_level(data)} interval</th><th>per 1,000 tokens</th>"
        f"<th>p (needed)</th><th>p (removable)</th><th>verdict</th></tr>{rows}</table>"
        f"<h2>The smallest skill that does as well</h2>{small_html}" + (f"<h2>Suggestions</h2><ul>{tips}</ul>" if tips else "") + "</body></html>\n"
    )


def filters() -> dict[str, Any]:
    """The report templates' filters of the ablation section (``templates/_ablation.*.j2``)."""
    from markupsafe import Markup

    return {"ablation_forest": lambda data: Markup(forest_svg(data)), "ablation_tips": suggestions}


def write_ablation(data: dict[str, Any], folder: Path, stem: str) -> dict[str, Path]:
    """The three ablation reports in ``folder`` as ``<stem>.{json,md,html}``."""
    from agentsproof.core.safepath import write_file

    out = {}
    for ext, text in (("json", json.dumps(data, indent=2, default=str) + "\n"), ("md", to_markdown(data)), ("html", to_html(data))):
        write_file(folder, f"{stem}.{ext}", text.encode("utf-8"))
        out[ext] = folder / f"{stem}.{ext}"
    return out
