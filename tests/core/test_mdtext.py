"""core/mdtext: text from outside shown in Markdown as text: HTML, entities, links, code
and table pipes escaped, folded onto one line, bounded."""

from __future__ import annotations

import pytest

from agentsproof.core.mdtext import md_text


@pytest.mark.parametrize("value, shown", [
    ("plain text", "plain text"),
    ('<img src=x onerror="alert(1)">', '&lt;img src=x onerror="alert(1)">'),
    ("<!-- hidden -->", "&lt;!-- hidden -->"),
    ("&lt; &#60; &amp; & alone", "&amp;lt; &amp;#60; &amp;amp; & alone"),
    ("[click](https://evil)", "\\[click\\](https://evil)"),
    ("a | b", "a \\| b"),
    ("`code`", "'code'"),
    ("back\\slash", "back\\\\slash"),
    ("two\nlines\r\n\tand  spaces", "two lines and spaces"),
    (3.5, "3.5"),
    (None, "None"),
])
def test_escaped(value: object, shown: str) -> None:
    assert md_text(value) == shown


def test_bounded_before_escaping() -> None:
    assert md_text("x" * 200) == "x" * 159 + "…"
    assert md_text("x" * 10, limit=5) == "xxxx…"
    assert md_text("x" * 5, limit=5) == "xxxxx"
    # escaping after the cut: an escape is never split in two
    cut = md_text("|" * 10, limit=4)
    assert cut == "\\|\\|\\|…"
