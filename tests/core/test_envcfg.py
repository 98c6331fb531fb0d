"""core/envcfg, the one reader of AGENTSPROOF_* numbers: unset or blank is the default, a
malformed, non-finite or out-of-range value is one InputError line naming the variable."""

from __future__ import annotations

import os

import pytest

from agentsproof.core.envcfg import cache_root, env_int, env_number, env_text
from agentsproof.core.errors import EXIT_ERROR, InputError

VAR = "AGENTSPROOF_TEST_SETTING"


@pytest.mark.parametrize("raw", [None, "", "   "])
def test_unset_or_blank_is_the_default(monkeypatch: pytest.MonkeyPatch, raw: str | None) -> None:
    if raw is None:
        monkeypatch.delenv(VAR, raising=False)
    else:
        monkeypatch.setenv(VAR, raw)
    assert env_number(VAR, 2.5, lo=0) == 2.5
    assert env_int(VAR, 7, lo=1) == 7


def test_values_are_read_stripped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, " 0.25 ")
    assert env_number(VAR, 1.0) == 0.25
    monkeypatch.setenv(VAR, " 12\n")
    assert env_int(VAR, 1) == 12
    assert isinstance(env_int(VAR, 1), int)


@pytest.mark.parametrize("reader, raw, says", [
    (env_number, "abc", "'abc' is not a number"),
    (env_number, "nan", "'nan' is not a finite number"),
    (env_number, "inf", "'inf' is not a finite number"),
    (env_int, "1.5", "'1.5' is not a whole number"),
    (env_int, "abc", "'abc' is not a whole number"),
])
def test_malformed_values_are_one_line_naming_the_variable(monkeypatch: pytest.MonkeyPatch, reader, raw: str, says: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(VAR, raw)
    with pytest.raises(InputError) as err:
        reader(VAR, 1)
    assert str(err.value) == f"environment: {VAR}: {says}"
    assert err.value.exit_code == EXIT_ERROR


@pytest.mark.parametrize("raw, lo, hi, says", [
    ("0", 1, None, "'0' must be at least 1"),
    ("11", None, 10, "'11' must be at most 10"),
    ("-1", 0, 10, "'-1' must be between 0 and 10"),
])
def test_out_of_range_names_the_bounds(monkeypatch: pytest.MonkeyPatch, raw: str, lo, hi, says: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(VAR, raw)
    with pytest.raises(InputError, match=f"^environment: {VAR}: {says}$"):
        env_int(VAR, 5, lo=lo, hi=hi)


def test_number_bounds_print_as_people_write_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, "1.5")
    with pytest.raises(InputError, match=r"'1.5' must be between 0 and 0.5$"):
        env_number(VAR, 0.1, lo=0.0, hi=0.5)
    monkeypatch.setenv(VAR, "0.5")  # the bounds are inclusive
    assert env_number(VAR, 0.1, lo=0.0, hi=0.5) == 0.5


def test_cache_root_order(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AGENTSPROOF_CACHE_DIR", str(tmp_path / "own"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == str(tmp_path / "own")
    monkeypatch.delenv("AGENTSPROOF_CACHE_DIR")
    assert cache_root() == os.path.join(str(tmp_path / "xdg"), "agentsproof")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == os.path.join(str(tmp_path / "home"), ".cache", "agentsproof")


def test_env_text_is_the_stripped_value_or_none(monkeypatch):
    monkeypatch.delenv("AGENTSPROOF_T", raising=False)
    assert env_text("AGENTSPROOF_T") is None
    for blank in ("", "   ", "\t\n"):
        monkeypatch.setenv("AGENTSPROOF_T", blank)
        assert env_text("AGENTSPROOF_T") is None
    monkeypatch.setenv("AGENTSPROOF_T", "  sqlite:///x.db \n")
    assert env_text("AGENTSPROOF_T") == "sqlite:///x.db"
