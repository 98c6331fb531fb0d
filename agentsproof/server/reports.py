"""The CLI's own results in the server: ``agentsproof push`` and ``serve --runs-dir``.

Reports are the JSON files of ``eval``, ``eval-all`` and ``tc-eval`` (docs/report-schema.md),
stored whole and keyed by the SHA-256 of their content, so pushing twice is a no-op. The
results page lists them and draws, per item (skill, agent or case), its delta over time
with the 95 % interval from ``stats.delta_ci`` when present."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from agentsproof.core.errors import InputError
from agentsproof.server.models import CliResult

if TYPE_CHECKING:
    from agentsproof.server.db import Database

COMMANDS = ("eval", "eval-all", "tc-eval")
MAX_REPORT = 50 * 1024 * 1024
log = logging.getLogger("agentsproof.server.reports")


def check_report(data: Any, source: str) -> dict[str, Any]:
    """``data`` itself when it is an eval, eval-all or tc-eval report the results page can show; InputError naming the first bad field."""
    if not isinstance(data, dict):
        raise InputError(source, "report", "expected a JSON object (an eval, eval-all or tc-eval report)")
    if data.get("tool") not in (None, "agentsproof"):
        raise InputError(source, "tool", f"expected 'agentsproof', got {data.get('tool')!r}")
    if data.get("command") not in COMMANDS:
        raise InputError(source, "command", f"expected one of {', '.join(COMMANDS)}, got {data.get('command')!r}")
    for field, kind in (("plugin", str), ("created_at", str), ("items", list)):
        if not isinstance(data.get(field), kind):
            raise InputError(source, field, f"missing or not a {'list' if kind is list else 'string'}")
    for i, item in enumerate(data["items"]):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise InputError(source, f"items[{i}].id", "missing or not a string")
        if item.get("delta") is not None and not isinstance(item["delta"], (int, float)):
            raise InputError(source, f"items[{i}].delta", "not a number")
    return data


def load_report(path: Path) -> dict[str, Any]:
    """The checked report in the JSON file ``path`` (at most 50 MB); InputError when it cannot be read or is no report."""
    try:
        if path.stat().st_size > MAX_REPORT:
            raise InputError(str(path), "file", "larger than 50 MB")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(str(path), "file", "not found") from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), "file", f"cannot read: {err}") from None
    except json.JSONDecodeError as err:
        raise InputError(str(path), "file", f"invalid JSON: {err.msg} (line {err.lineno})") from None
    return check_report(data, str(path))


def store_report(db: Database, data: dict[str, Any], source: str) -> bool:
    """Store one report; False when the same content was stored before."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    sha = hashlib.sha256(canonical.encode()).hexdigest()
    with db.session() as s:
        if s.scalar(select(CliResult.id).where(CliResult.sha256 == sha)) is not None:
            return False
        s.add(CliResult(sha256=sha, command=data["command"], plugin=data["plugin"][:500], created_at=data["created_at"][:64], source=source[:1000], data=data))
        try:
            s.commit()
        except IntegrityError:
            return False
    return True


def import_runs_dir(db: Database, folder: str) -> int:
    """Store every report found below ``folder``; other JSON files are skipped."""
    added = 0
    for path in sorted(Path(folder).rglob("*.json")):
        try:
            added += store_report(db, load_report(path), str(path))
        except InputError as err:
            log.info("skipped %s", err)
    return added


W, H = 520, 140


def results_view(db: Database) -> dict[str, Any]:
    """The results page's context: every stored report, oldest first, and each item's delta over time."""
    with db.session() as s:
        rows = s.scalars(select(CliResult).order_by(CliResult.created_at)).all()
        reports = [(r.created_at, r.command, r.plugin, r.data) for r in rows]
    listing: list[dict[str, Any]] = []
    series: dict[str, dict[str, Any]] = {}
    for created, command, plugin, data in reports:
        deltas = [i.get("delta") for i in data.get("items", []) if isinstance(i.get("delta"), (int, float))]
        listing.append(
            {
                "created_at": created,
                "command": command,
                "plugin": plugin,
                "model": data.get("model") or "",
                "verdict": data.get("verdict") or "",
                "items": len(data.get("items", [])),
                "avg_delta": f"{sum(deltas) / len(deltas):+.2f}" if deltas else "",
            }
        )
        for item in data.get("items", []):
            if isinstance(item.get("delta"), (int, float)):
                ci = (item.get("stats") or {}).get("delta_ci")
                ok_ci = isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci)
                series.setdefault(item["id"], {"id": item["id"], "name": item.get("name") or item["id"], "raw": []})["raw"].append(
                    (created, item["delta"], ci if ok_ci else None)
                )
    from agentsproof.report.charts import TrendPoint, trend_chart  # the HTML report's drawing code

    trends = []
    for t in sorted(series.values(), key=lambda t: t["id"]):
        pts = [TrendPoint(str(when), d, ci[0] if ci else None, ci[1] if ci else None) for when, d, ci in t["raw"]]
        trends.append({"id": t["id"], "name": t["name"], "points": pts, "svg": trend_chart(t["name"], pts, W, H)})
    listing.reverse()
    return {"reports": listing, "trends": trends}
