"""Only a real database failure is an outage: a query's own error on SQLite (a JSON path
error, a syntax error) or PostgreSQL (a syntax error, a cancelled statement) is answered
500 and logged as a database error, never as "database … unavailable"."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy.exc import InterfaceError, OperationalError

from agentsproof.server.db import is_outage


class _PgError(Exception):
    def __init__(self, message: str, sqlstate: str | None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def _sqlite(message: str) -> OperationalError:
    return OperationalError("SELECT 1", {}, sqlite3.OperationalError(message))


@pytest.mark.parametrize(
    ("err", "outage"),
    [
        (_sqlite("JSON path error near '\"'"), False),
        (_sqlite('near "x": syntax error'), False),
        (_sqlite("unable to open database file"), True),
        (_sqlite("disk I/O error"), True),
        (_sqlite("database is locked"), True),
        (OperationalError("SELECT 1", {}, _PgError("connection refused", None)), True),
        (OperationalError("SELECT 1", {}, _PgError("terminating connection due to administrator command", "57P01")), True),
        (OperationalError("SELECT 1", {}, _PgError("server closed the connection unexpectedly", "08006")), True),
        (OperationalError("SELECT 1", {}, _PgError("canceling statement due to statement timeout", "57014")), False),
        (OperationalError("SELECT 1", {}, _PgError("syntax error", "42601")), False),
        (InterfaceError("SELECT 1", {}, Exception("connection already closed")), True),
    ],
)
def test_only_a_database_failure_is_an_outage(err: Exception, outage: bool) -> None:
    assert is_outage(err) is outage
