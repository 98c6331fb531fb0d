"""core/envcfg: the one reader of AGENTSPROOF_* settings."""

from __future__ import annotations

import pytest

from agentsproof.core.envcfg import env_int, env_number, env_text
from agentsproof.core.errors import InputError


def test_env_text_is_the_stripped_value_or_none(monkeypatch):
    monkeypatch.delenv("AGENTSPROOF_T", raising=False)
    assert env_text("AGENTSPROOF_T") is None
    for blank in ("", "   ", "\t\n"):
        monkeypatch.setenv("AGENTSPROOF_T", blank)
        assert env_text("AGENTSPROOF_T") is None
    monkeypatch.setenv("AGENTSPROOF_T", "  sqlite:///x.db \n")
    assert env_text("AGENTSPROOF_T") == "sqlite:///x.db"


def test_numbers_are_one_error_line_naming_the_variable(monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_N", "abc")
    with pytest.raises(InputError) as err:
        env_int("AGENTSPROOF_N", 1)
    assert err.value.format() == "environment: AGENTSPROOF_N: 'abc' is not a whole number"
    monkeypatch.setenv("AGENTSPROOF_N", "-1")
    with pytest.raises(InputError, match="must be at least 0"):
        env_number("AGENTSPROOF_N", 1.0, lo=0)
    monkeypatch.setenv("AGENTSPROOF_N", " ")
    assert env_number("AGENTSPROOF_N", 2.5) == 2.5
