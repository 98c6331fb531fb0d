"""The program promptfoo's ``is-sql`` assertion runs here (``python -c`` of this file's text,
confined like every check; the answer on stdin): the answer parses as SQL of the
``databaseType`` dialect (sqlglot's parser, for promptfoo's node-sql-parser), and with
``allowedTables`` / ``allowedColumns`` every table and column the query uses is allowed.

As node-sql-parser's ``whiteListCheck`` names them, a table is ``{type}::{db}::{table}`` and
a column ``{type}::{table}::{column}`` (a table alias read as its table; ``type`` the statement's kind: select, insert,
update, delete …; ``null`` where the query names no database or table; ``(.*)`` for ``*``);
each allowed entry is a case-insensitive regular expression the whole name must match.
Arguments: the sqlglot dialect, the allowed tables and the allowed columns as JSON (``null``:
not checked), ``1`` when the assertion is negated. Exit 0: pass, 1: fail (the reason on stderr).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any


def _kind(statement: Any) -> str:
    from sqlglot import exp

    for cls, name in ((exp.Insert, "insert"), (exp.Update, "update"), (exp.Delete, "delete"), (exp.Merge, "merge")):
        if isinstance(statement, cls):
            return name
    if isinstance(statement, (exp.Create, exp.Drop, exp.Alter)):
        return type(statement).__name__.lower()
    return "select"


def _statements(text: str, dialect: str) -> list[Any]:
    """The parsed statements; ValueError when the text is not SQL of the dialect."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel, ParseError, TokenError

    try:
        parsed = [s for s in sqlglot.parse(text, read=dialect or None, error_level=ErrorLevel.RAISE) if s is not None]
    except (ParseError, TokenError, ValueError) as err:  # not SQL of this dialect
        raise ValueError(str(err).splitlines()[0] if str(err) else type(err).__name__) from None
    if not parsed:
        raise ValueError("the answer holds no SQL statement")
    known = (exp.Query, exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter, exp.Use, exp.Show, exp.Describe, exp.Set)
    for s in parsed:
        if not isinstance(s, known):  # a bare word or a statement the parser only kept as text (exp.Command)
            raise ValueError(f"{s.sql()[:80]!r} is not a SQL statement")
    return parsed


def _names(statements: list[Any]) -> tuple[list[str], list[str]]:
    from sqlglot import exp

    tables: list[str] = []
    columns: list[str] = []
    for s in statements:
        kind = _kind(s)
        ctes = {c.alias_or_name for c in s.find_all(exp.CTE)}
        for t in s.find_all(exp.Table):
            if t.name and t.name not in ctes:
                tables.append(f"{kind}::{t.db or 'null'}::{t.name}")
        aliases = {t.alias_or_name: t.name for t in s.find_all(exp.Table)}  # a column's table by its name, not its alias
        for c in s.find_all(exp.Column):
            table = aliases.get(c.table, c.table) or "null"
            columns.append(f"{kind}::{table}::{'(.*)' if isinstance(c.this, exp.Star) else c.name}")
        if any(isinstance(x, exp.Star) and not isinstance(x.parent, exp.Column) for x in s.find_all(exp.Star)):
            columns.append(f"{kind}::null::(.*)")
    return list(dict.fromkeys(tables)), list(dict.fromkeys(columns))


def _not_allowed(names: list[str], allowed: list[str]) -> list[str]:
    return [n for n in names if not any(re.fullmatch(a, n, re.IGNORECASE) for a in allowed)]


def main(argv: list[str]) -> int:
    """Check stdin's SQL as the arguments say (see the module docstring); the exit status is the verdict."""
    dialect, tables, columns, negate = argv[0], json.loads(argv[1]), json.loads(argv[2]), argv[3] == "1"
    text = sys.stdin.read().strip()
    reasons: list[str] = []
    try:
        statements = _statements(text, dialect)
    except ValueError as err:
        reasons.append(f"the answer is not valid {dialect or 'generic'} SQL: {err}")
        statements = []
    if statements:
        used_tables, used_columns = _names(statements)
        for what, allowed, used in (("table", tables, used_tables), ("column", columns, used_columns)):
            bad = _not_allowed(used, allowed) if allowed is not None else []
            if bad:
                reasons.append(f"{what} {bad[0]!r} is not in allowed{what.title()}s ({', '.join(allowed) or 'none'})")
    if negate:
        if reasons:
            print("; ".join(reasons))
            return 0
        print("the answer is valid SQL (the assertion is negated)", file=sys.stderr)
        return 1
    if reasons:
        print("; ".join(reasons), file=sys.stderr)
        return 1
    print("valid SQL" + (" using only the allowed tables and columns" if tables is not None or columns is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
