"""core/termtext: what reaches a terminal is what the file holds, on one line: every control
character, bidi override and undecodable byte shown as an escape."""

from __future__ import annotations

import pytest

from agentsproof.core.termtext import console_text, term_text


@pytest.mark.parametrize("value, shown", [
    ("plain ünïcode — text", "plain ünïcode — text"),
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("over\rwrite", "over\\rwrite"),
    ("two\nlines\tand tab", "two\\nlines\\tand tab"),
    ("bell\x07 nul\x00 del\x7f c1\x9b", "bell\\x07 nul\\x00 del\\x7f c1\\x9b"),
    ("evil\u202etxt.exe", "evil\\u202etxt.exe"),
    ("sep\u2028line", "sep\\u2028line"),
    ("isolate\u2066x\u2069", "isolate\\u2066x\\u2069"),
    (b"caf\xe9".decode("utf-8", "surrogateescape"), "caf\\xe9"),
    ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
    (42, "42"),
])
def test_term_text(value: object, shown: str) -> None:
    assert term_text(value) == shown
    assert term_text(value).isprintable()


def test_console_text_keeps_lines_tabs_and_the_progress_carriage_return() -> None:
    assert console_text("a\n\tb\n") == "a\n\tb\n"
    assert console_text("\rprogress 3/10") == "\rprogress 3/10"  # the progress line starts with one
    assert console_text("done\r\nnext") == "done\r\nnext"  # before a line break
    assert console_text("fake\rover") == "fake\\rover"  # anywhere else it would overwrite
    assert console_text("x\x1b]0;title\x07y\n") == "x\\x1b]0;title\\x07y\n"
