"""core/inputs, every rule about files a user hands us: regular files only, size caps,
confinement to the eval's tree, strict YAML and JSON, names safe as file names. Each bad
input is one InputError line naming the file (and the field or line)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentsproof.core import inputs
from agentsproof.core.errors import InputError
from agentsproof.core.inputs import (
    check_values,
    confined,
    display,
    eval_root,
    load_json_text,
    load_yaml_text,
    read_json_file,
    read_regular,
    read_text,
    read_yaml_file,
    safe_name,
)


def _refused(fn, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as err:
        fn(*args, **kwargs)
    line = str(err.value)
    assert "\n" not in line
    return line


# ------------------------------------------------------------------ files


def test_display_shows_undecodable_bytes_as_escapes() -> None:
    assert display(Path("plain/ünï.yaml")) == "plain/ünï.yaml"
    assert display(os.fsdecode(b"bad\xff.yaml")) == "bad\\xff.yaml"


def test_read_regular_reads_a_file_within_its_cap(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_bytes(b"12345")
    assert read_regular(f, source="eval.yaml", field="file", max_bytes=5) == b"12345"
    assert _refused(read_regular, f, source="eval.yaml", field="file", max_bytes=4) == f"eval.yaml: file: '{f}' is 5 bytes; the limit is 4"


def test_read_regular_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    assert _refused(read_regular, tmp_path, source="e", field="file", max_bytes=10) == f"e: file: '{tmp_path}' is a directory, expected a file"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # reading it would block for ever: refused before a byte is read
    assert "is not a regular file (a FIFO, socket or device)" in _refused(read_regular, fifo, source="e", field=None, max_bytes=10)
    assert "is not a regular file" in _refused(read_regular, Path("/dev/zero"), source="e", field=None, max_bytes=10)
    assert _refused(read_regular, tmp_path / "none", source="e", field=None, max_bytes=10) == "e: file not found"
    assert _refused(read_regular, tmp_path / "none", source="e", field="prompt", max_bytes=10, what="skill file") == (
        f"e: prompt: skill file '{tmp_path / 'none'}' not found"
    )


def test_read_text_wants_utf8(tmp_path: Path) -> None:
    f = tmp_path / "latin1.md"
    f.write_bytes("café".encode("latin-1"))
    assert _refused(read_text, f, source="e", field=None, max_bytes=100) == "e: the file is not UTF-8 text"
    f.write_text("café", encoding="utf-8")
    assert read_text(f, source="e", field=None, max_bytes=100) == "café"


def test_eval_root_is_the_skill_folder_for_an_evals_subfolder(tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "x"
    (skill / "evals").mkdir(parents=True)
    (skill / "evals" / "evals.json").write_text("{}")
    assert eval_root(skill / "evals" / "evals.json") == (skill / "evals").resolve()  # no SKILL.md yet: evals/ itself
    (skill / "SKILL.md").write_text("s")
    assert eval_root(skill / "evals" / "evals.json") == skill.resolve()
    (tmp_path / "other").mkdir()
    assert eval_root(tmp_path / "other" / "eval.yaml") == (tmp_path / "other").resolve()


def test_confined_keeps_references_inside_the_eval_tree(tmp_path: Path) -> None:
    ev = tmp_path / "skill" / "eval.yaml"
    (tmp_path / "skill" / "files").mkdir(parents=True)
    (tmp_path / "skill" / "files" / "a.txt").write_text("a")
    assert confined("files/a.txt", ev, "file") == (tmp_path / "skill" / "files" / "a.txt").resolve()
    assert confined("files/../files/a.txt", ev, "file") == (tmp_path / "skill" / "files" / "a.txt").resolve()
    for ref in ("/etc/passwd", "~/secrets", "C:\\x"):
        assert "is an absolute path; give a path relative to" in _refused(confined, ref, ev, "file")
    assert "(it leads out of it)" in _refused(confined, "../../etc/passwd", ev, "file")
    (tmp_path / "skill" / "out").symlink_to(tmp_path)
    assert "(a symlink leads out of it)" in _refused(confined, "out/x", ev, "file")
    assert _refused(confined, "a\x00b", ev, "file").endswith("file: contains a NUL character")
    # an explicit root wider than the eval's folder
    assert confined("../other.txt", ev, "file", root=tmp_path) == (tmp_path / "other.txt").resolve()


# ------------------------------------------------------------------ strict YAML


def test_yaml_reads_plain_documents() -> None:
    assert load_yaml_text("a: 1\nb: [x, y]\n", "e.yaml") == {"a": 1, "b": ["x", "y"]}
    assert load_yaml_text("", "e.yaml") is None


@pytest.mark.parametrize("text, says", [
    ("a: 1\nb: 2\na: 3\n", "e.yaml: line 3: duplicate key 'a'"),
    ("x: 1234567890123456789012345678901\n", "e.yaml: line 1: number with 31 digits; at most 30 are allowed"),
    ("x: .inf\n", "e.yaml: x: inf is not a finite number"),
    ("x: [1, .nan]\n", "e.yaml: x[1]: nan is not a finite number"),
    ('x: "a\\0b"\n', "e.yaml: x: holds a NUL character (no prompt, command argument or environment value can)"),
    ("a: 1\n  b: 2\n", "e.yaml: line 2: invalid YAML: mapping values are not allowed here"),
    ("- &a [*a]\n", "e.yaml: line 1: an alias refers to the node that contains it"),
])
def test_yaml_refusals(text: str, says: str) -> None:
    assert _refused(load_yaml_text, text, "e.yaml") == says


def test_yaml_nesting_is_bounded() -> None:
    ok = "[" * inputs.MAX_DEPTH + "]" * inputs.MAX_DEPTH
    assert load_yaml_text(ok, "e.yaml") is not None
    deep = "[" * (inputs.MAX_DEPTH + 1) + "]" * (inputs.MAX_DEPTH + 1)
    assert f"nested deeper than {inputs.MAX_DEPTH} levels" in _refused(load_yaml_text, deep, "e.yaml")


def test_yaml_aliases_are_counted_expanded() -> None:
    """A "billion laughs" document is refused before it is expanded in memory."""
    lines = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    assert f"expands to more than {inputs.MAX_NODES:,} values (aliases included)" in _refused(load_yaml_text, "\n".join(lines), "e.yaml")


def test_read_yaml_file_names_the_file(tmp_path: Path) -> None:
    f = tmp_path / "eval.yaml"
    f.write_text("a: 1\na: 2\n")
    assert _refused(read_yaml_file, f) == f"{f}: line 2: duplicate key 'a'"
    f.write_text("a: 1\n")
    assert read_yaml_file(f) == {"a": 1}
    assert _refused(read_yaml_file, f, max_bytes=3) == f"{f}: '{f}' is 5 bytes; the limit is 3"


# ------------------------------------------------------------------ strict JSON


@pytest.mark.parametrize("text, says", [
    ('{"a": 1, "a": 2}', "e.json: invalid JSON: duplicate key 'a'"),
    ('{"x": NaN}', "e.json: invalid JSON: NaN is not a valid JSON number"),
    ('[Infinity]', "e.json: invalid JSON: Infinity is not a valid JSON number"),
    ("[" + "1" * 31 + "]", "e.json: invalid JSON: number with 31 digits; at most 30 are allowed"),
    ('{"a": 1,\n}', "e.json: line 2: invalid JSON: Expecting property name enclosed in double quotes"),
    ('{"x": "a\\u0000b"}', "e.json: x: holds a NUL character (no prompt, command argument or environment value can)"),
    ('{"k\\u0000": 1}', "e.json: k\\0: the key holds a NUL character"),
    ("[" * 65 + "]" * 65, "e.json: invalid JSON: nested deeper than 64 levels"),
])
def test_json_refusals(text: str, says: str) -> None:
    assert _refused(load_json_text, text, "e.json") == says


def test_json_reads_plain_documents_and_a_nul_when_allowed(tmp_path: Path) -> None:
    assert load_json_text('{"a": [1, 2.5, "[not nesting]"]}', "e.json") == {"a": [1, 2.5, "[not nesting]"]}
    assert load_json_text('{"x": "a\\u0000b"}', "e.json", allow_nul=True) == {"x": "a\x00b"}
    f = tmp_path / "t.json"
    f.write_text('{"x": "a\\u0000b"}')
    assert read_json_file(f, allow_nul=True) == {"x": "a\x00b"}
    assert "holds a NUL character" in _refused(read_json_file, f)


def test_check_values_prefixes_the_field() -> None:
    check_values({"a": [1.0, "ok"]}, "data.jsonl")
    assert _refused(check_values, {"a": [float("inf")]}, "data.jsonl", "line 3") == "data.jsonl: line 3.a[0]: inf is not a finite number"


# ------------------------------------------------------------------ names


@pytest.mark.parametrize("name, safe", [
    ("csv-summary", "csv-summary"),
    ("My Skill: v2/beta", "My-Skill-v2-beta"),
    ("../../etc/passwd", "etc-passwd"),
    ("..", "item"),
    ("", "item"),
    ("ünï", "ünï"),
    (os.fsdecode(b"bad\xffname"), "bad-name"),
    ("x" * 300, "x" * 100),
])
def test_safe_name(name: str, safe: str) -> None:
    assert safe_name(name) == safe
    assert safe_name("///", fallback="case") == "case"


def test_parsed_as_gives_the_data_instead_of_the_file_and_writes_nothing(tmp_path: Path) -> None:
    yml, jsn = tmp_path / "a.yaml", tmp_path / "a.json"
    yml.write_text("a: 1\n")
    jsn.write_text('{"a": 1}')
    with inputs.parsed_as(yml, {"a": 2}):
        got = inputs.read_yaml_file(yml)
        got["a"] = 3  # each reader gets its own copy
        assert inputs.read_yaml_file(yml) == {"a": 2}
        assert inputs.read_json_file(jsn) == {"a": 1}  # only the file it names
    with inputs.parsed_as(jsn, [1]):
        assert inputs.read_json_file(jsn) == [1]
    assert inputs.read_yaml_file(yml) == {"a": 1} and yml.read_text() == "a: 1\n"


def test_repo_root_is_the_nearest_folder_with_git_above(tmp_path: Path) -> None:
    deep = tmp_path / "repo" / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "x.eval.yaml").write_text("tests: []\n")
    assert inputs.repo_root(deep / "x.eval.yaml") is None
    (tmp_path / "repo" / ".git").mkdir()
    assert inputs.repo_root(deep / "x.eval.yaml") == (tmp_path / "repo").resolve()
