"""The pure helpers the agent-CLI targets share: front matter for staged skills, loopback
URLs, staging bounds, the hermetic environment and the JSON stream reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentsproof.model.items import SkillFile
from agentsproof.model.skillfolder import split_frontmatter
from agentsproof.targets.agents.kit import Harness, loopback_port, read_json_lines, stage_skills, with_front_matter


@pytest.mark.parametrize("text, name, description", [
    ("---\nname: a\ndescription: does a\n---\nbody\n", "a", "does a"),
    ("# Title line\nbody\n", "s", "Title line"),
    ("---\nlicense: MIT\n---\n\nFirst words.\n", "s", "First words."),
    ("---\nname: own\n---\nbody\n", "own", "body"),
])
def test_front_matter_is_added_where_missing(text, name, description):
    meta, _ = split_frontmatter(with_front_matter(SkillFile(name="s", kind="skill", text=text)))
    assert meta["name"] == name and meta["description"] == description


@pytest.mark.parametrize("url, port", [
    ("http://127.0.0.1:8080/v1", 8080), ("http://localhost:9/v1", 9), ("http://[::1]:7000", 7000), ("http://127.0.0.1/v1", 80),
    ("https://api.example.com/v1", None), ("http://10.0.0.1:80", None), (None, None), ("http://127.0.0.1:bad", None),
])
def test_loopback_port(url, port):
    assert loopback_port(url) == port


def test_staging_copies_the_folder_without_symlinks_or_escapes(tmp_path: Path):
    src = tmp_path / "src"
    (src / "refs").mkdir(parents=True)
    (src / "refs" / "a.md").write_text("A")
    (tmp_path / "secret").write_text("S")
    (src / "link").symlink_to(tmp_path / "secret")
    skill = SkillFile(name="s", kind="skill", text="---\nname: s\ndescription: d\n---\n",
                      files=(("refs/a.md", src / "refs" / "a.md"), ("link", src / "link"), ("../out.md", src / "refs" / "a.md")))
    staged = stage_skills([skill, skill], tmp_path / "skills")
    assert list(staged) == ["s"]
    assert sorted(p.relative_to(staged["s"]).as_posix() for p in staged["s"].rglob("*") if p.is_file()) == ["SKILL.md", "refs/a.md"]
    assert not (tmp_path / "skills" / "out.md").exists()


def test_the_environment_is_built_not_inherited(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MY_SECRET_TOKEN", "x")
    monkeypatch.setenv("LANG", "C.UTF-8")
    harness = Harness.create("agentsproof-test-")
    try:
        env = harness.env()
        assert "MY_SECRET_TOKEN" not in env and env["LANG"] == "C.UTF-8"
        assert env["HOME"] == str(harness.home) and env["XDG_CONFIG_HOME"].startswith(str(harness.home))
        assert env["TMPDIR"] == str(harness.tmp) and not harness.stream.is_relative_to(harness.home)
    finally:
        harness.remove()
    assert not harness.root.exists()


def test_the_stream_reader_skips_what_is_not_a_json_object(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type": "a"}\nnot json\n[1, 2]\n\n{"type": "b"}\n\xff\n')
    events, notes = read_json_lines(path)
    assert [e["type"] for e in events] == ["a", "b"]
    assert notes == ["skipped 3 lines of the event stream that were not JSON objects"]
    assert read_json_lines(tmp_path / "missing") == ([], [])
