"""A saved run read back: any command's JSON report, for ``compare``, ``merge``,
``--retry-errors`` and the exports of other tools."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from agentsproof.core.errors import InputError
from agentsproof.core.validation import format_validation_error
from agentsproof.model.results import RunResult

MAX_REPORT_BYTES = 2_000_000_000


def load_run(path: Path) -> RunResult:
    """A saved run (any command's JSON report); bad input raises InputError naming the field."""
    return load_run_data(path)[0]


def load_report_data(path: Path, *, depth_check: bool = True) -> dict:
    """Any JSON report as read (a run's, an activation report's): a JSON object; InputError otherwise.
    ``depth_check=False``: no scan for deep nesting first (the parser's own recursion limit
    still refuses it, as "not JSON"); ``agentsproof verify`` reads large reports so."""
    from agentsproof.core.inputs import decode_text, display, json_depth_ok, read_regular

    src = display(path)
    if not Path(path).exists():
        raise InputError(src, None, "file not found")
    text = decode_text(read_regular(Path(path), source=src, field=None, max_bytes=MAX_REPORT_BYTES), source=src, field=None, name="the file")
    if depth_check and not json_depth_ok(text):
        raise InputError(src, None, "not an agentsproof run report (nested too deep)")
    from agentsproof.core.jsonfinite import NotFinite, loads_finite

    try:
        data = loads_finite(text)
    except NotFinite as err:
        raise InputError(src, None, f"not an agentsproof run report: {err} (a score or number is NaN or infinite)") from None
    except json.JSONDecodeError as err:
        raise InputError(src, None, f"not JSON: {err.msg} at line {err.lineno}") from None
    except (ValueError, RecursionError) as err:
        raise InputError(src, None, f"not JSON: {err}") from None
    if not isinstance(data, dict):
        raise InputError(src, None, "not an agentsproof run report (no 'items')")
    return data


def load_run_data(path: Path) -> tuple[RunResult, dict]:
    """A saved run and its JSON data as read (one read, one parse); InputError naming the field."""
    from agentsproof.core.inputs import display

    src = display(path)
    data = load_report_data(path)
    if "items" not in data:
        raise InputError(src, None, "not an agentsproof run report (no 'items')")
    try:
        return RunResult.model_validate(data), data
    except ValidationError as err:
        field_name, message = format_validation_error(err)
        raise InputError(src, field_name, message) from None
