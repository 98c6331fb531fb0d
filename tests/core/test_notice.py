"""core/notice: the one way a lower layer speaks to the user (stderr), and says a line once."""

from __future__ import annotations

import io
import sys

from agentsproof.core import notice
from agentsproof.core.scrub import register, scrubbed_console


def test_note_and_warn_are_one_prefixed_line_on_stderr(capsys):
    notice.note("a note")
    notice.warn("a warning")
    notice.say("as it is")
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == "note: a note\nwarning: a warning\nas it is\n"


def test_a_said_set_says_each_key_once(capsys):
    said = notice.Said()
    for _ in range(3):
        said.warn("w")
        said.note("n")
        said.note("keyed one", key=("k", 1))
        said.note("keyed two", key=("k", 1))  # same key: not said
    assert capsys.readouterr().err == "warning: w\nnote: n\nnote: keyed one\n"
    assert ("k", 1) in said
    said.clear()
    said.warn("w")
    assert capsys.readouterr().err == "warning: w\n"


def test_a_note_and_a_warning_of_the_same_text_are_different_lines(capsys):
    said = notice.Said()
    said.note("same")
    said.warn("same")
    assert capsys.readouterr().err == "note: same\nwarning: same\n"


def test_separate_sets_do_not_share_what_was_said(capsys):
    a, b = notice.Said(), notice.Said()
    a.warn("x")
    b.warn("x")
    assert capsys.readouterr().err == "warning: x\nwarning: x\n"


def test_the_process_wide_set_says_once_per_process(capsys):
    line = f"process-wide {id(capsys)}"
    notice.note_once(line)
    notice.note_once(line)
    notice.warn_once(line)
    notice.warn_once(line)
    assert capsys.readouterr().err == f"note: {line}\nwarning: {line}\n"


def test_stderr_is_looked_up_at_each_call_so_the_console_scrubber_sees_it(monkeypatch):
    from agentsproof.core import scrub

    scrub._reset_for_tests()
    try:
        err = io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        register("s3cr3t-value")
        with scrubbed_console():
            notice.warn("key is s3cr3t-value")
        assert err.getvalue() == "warning: key is ***\n"
    finally:
        scrub._reset_for_tests()


BELOW_THE_COMMANDS = ("core", "model", "llm", "stats", "targets", "grading", "report", "executor", "formats", "interop")
STANDALONE = {"isolation/sandbox.py": "relay_main", "formats/agentevals/is_sql_check.py": "main"}
"""Code that runs as a program of its own, its output its answer (the sandbox relay inside
bubblewrap; promptfoo's is-sql check, a confined script that prints its verdict)."""


def test_no_print_below_the_commands_layer():
    """The lower layers speak through core/notice (or return values), never a bare print()."""
    import ast
    from pathlib import Path

    import agentsproof

    root = Path(agentsproof.__file__).parent
    found = []
    for pkg in BELOW_THE_COMMANDS:
        for path in sorted((root / pkg).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            allowed: set[int] = set()
            for fn in ast.walk(tree):
                if isinstance(fn, ast.FunctionDef) and STANDALONE.get(rel) == fn.name:
                    allowed |= {n.lineno for n in ast.walk(fn) if hasattr(n, "lineno")}
            for node in ast.walk(tree):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
                        and node.lineno not in allowed and rel != "core/notice.py"):
                    found.append(f"{rel}:{node.lineno}")
    assert found == []
