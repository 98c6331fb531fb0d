"""Every number flag of every command refuses ``nan`` and ``inf`` (click's FloatRange lets
``nan`` through any range: it compares false with both bounds): one line, exit 30."""

from __future__ import annotations

import click
import pytest
from conftest import run_cli

from agentsproof.cli import main
from agentsproof.cli.options import FiniteRange


def _float_options() -> list[tuple[list[str], str]]:
    found = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, [*path, name])
            return
        for param in cmd.params:
            if isinstance(param, click.Option) and isinstance(param.type, click.FloatRange):
                found.append((path, max(param.opts, key=len)))

    walk(main, [])
    return found


FLOAT_OPTIONS = _float_options()


def test_every_float_range_flag_is_finite():
    assert len(FLOAT_OPTIONS) >= 10  # eval's --threshold/--timeout, activation's, compare's --alpha, runs-needed ...
    ctx = click.Context(main)
    for path, opt in FLOAT_OPTIONS:
        cmd = main
        for name in path:
            cmd = cmd.commands[name]  # type: ignore[attr-defined]
        param = next(p for p in cmd.params if opt in getattr(p, "opts", ()))
        assert isinstance(param.type, FiniteRange), f"{' '.join(path)} {opt} is a plain FloatRange"
        with pytest.raises(click.BadParameter):
            param.type.convert("nan", param, ctx)


@pytest.mark.parametrize("path,opt", FLOAT_OPTIONS, ids=[f"{' '.join(p)} {o}" for p, o in FLOAT_OPTIONS])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_nan_and_inf_are_one_line_exit_30(path, opt, value):
    code, out, err = run_cli([*path, opt, value])
    assert code == 30, (out, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), err
    assert "Traceback" not in err
    assert opt in err and ("finite" in err or "range" in err), err  # refused for the number itself
