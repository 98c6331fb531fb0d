"""HTML reports that open instantly at any size: trial details rendered on demand.

Above ``AGENTSPROOF_HTML_LAZY_AFTER`` trials (default 1,000) the HTML report carries each
arm's trials as compact JSON in a ``<script type="application/json">`` block instead of
HTML: the browser skips over it while loading, and the report's script (templates/
_lazy.html.j2) draws an arm's trial rows when its item is opened and a trial's details
when the trial is opened, with the same markup as the full report. The Markdown and JSON
reports are always complete.

Every display string (scores, latencies, token counts, sizes) is formatted here with the
report's own filters, so both forms of the report show the same values.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentsproof.report.views import ArmView, TrialView

LAZY_ENV = "AGENTSPROOF_HTML_LAZY_AFTER"
DEFAULT_LAZY_AFTER = 1000


def lazy_after() -> int:
    """Trials above which the HTML report draws trial details on demand (``AGENTSPROOF_HTML_LAZY_AFTER``); InputError when malformed."""
    from agentsproof.core.envcfg import env_int

    return env_int(LAZY_ENV, DEFAULT_LAZY_AFTER, lo=0)


def _trial(tv: TrialView, f: dict[str, Any]) -> dict[str, Any]:
    t = tv.trial
    out: dict[str, Any] = {
        "i": t.index,
        "s": t.status,
        "m": f"{f['secs'](t.latency_s)} · {f['tokens'](t.usage.total_tokens)} tok",
    }
    if t.status == "errored":
        out["e"] = t.error or ""
    else:
        out["p"] = bool(t.passed)
        out["sc"] = f["num"](t.score)
    if t.graders:
        out["g"] = [
            {
                "t": g.type,
                "w": f["num"](g.weight),
                "sc": f["num"](g.score),
                "x": g.error if g.errored else None,
                "r": g.reasoning or "",
                "c": [[c.kind, c.target, c.passed, c.evidence] for c in g.checks],
            }
            for g in t.graders
        ]
    if t.trajectory:
        out["tr"] = [[s.name, s.ok, f["secs"](s.latency_s) if s.latency_s is not None else "", s.arguments, s.result] for s in t.trajectory]
    if t.files:
        out["f"] = [[x.path, x.status, f["filesize"](x.size), x.preview] for x in t.files]
    if t.skill_used is not None:
        out["su"] = t.skill_used
    if t.workspace:
        out["ws"] = t.workspace
    if tv.show_response:
        out["r"] = t.response
    if t.log:
        out["lg"] = [[f"+{f['num'](e.t, 2)} s", e.role, e.text if e.ref is None else None, e.ref] for e in tv.log]
    return out


def arm_json(av: ArmView) -> str:
    """An arm's trials as JSON text safe inside ``<script>`` (no ``<``, ``>`` or ``&``)."""
    from agentsproof.report.jinja import env  # jinja2: only when a report is drawn

    filters = env().filters
    rows = [_trial(tv, filters) for tv in av.trials]
    text = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def html_env() -> Any:
    """The report environment with ``arm_json`` for the HTML template (large runs embed
    each arm's trials as JSON, drawn on demand)."""
    from agentsproof.report.jinja import env

    e = env()
    e.globals.setdefault("arm_json", arm_json)
    return e
