"""A skill cut into parts: ``##`` sections (not inside fences, the frame kept), files and
folders of the skill folder, and the skill without some of them."""

from __future__ import annotations

from pathlib import Path

from agentsproof.model.skillparts import cut, files_without, folder_parts, sections, text_without

SKILL = """---
name: demo
description: a demo
---
# Demo

Lead paragraph.

## Usage

Run it.

```md
## not a section (inside a fence)
```

## Usage

Twice the same heading.

### A sub-heading stays with its section

## Notes
Last.
"""


def test_sections_are_the_top_level_headings_outside_fences():
    parts = sections(SKILL)
    assert [p.title for p in parts] == ["Usage", "Usage", "Notes"]
    assert [p.kind for p in parts] == ["section"] * 3
    lines = SKILL.splitlines(keepends=True)
    assert lines[parts[0].span[0]] == "## Usage\n" and "## not a section" in "".join(lines[slice(*parts[0].span)])
    assert all(p.tokens > 0 for p in parts)


def test_without_a_section_keeps_the_frontmatter_the_frame_and_the_others():
    parts = cut(SKILL)
    assert [p.id for p in parts] == ["section-1-usage", "section-2-usage", "section-3-notes"]
    out = text_without(SKILL, [parts[1]])
    assert out.startswith("---\nname: demo") and "Lead paragraph." in out
    assert "Run it." in out and "Twice the same heading." not in out and "A sub-heading" not in out and "## Notes" in out
    assert text_without(SKILL, []) == SKILL
    assert "## " not in text_without(SKILL, parts).split("Lead paragraph.")[1]


def test_files_are_parts_by_top_file_or_entry_of_a_top_folder(tmp_path: Path):
    (tmp_path / "references").mkdir()
    (tmp_path / "references" / "api.md").write_text("x" * 400)
    (tmp_path / "assets" / "templates" / "deep").mkdir(parents=True)
    (tmp_path / "assets" / "templates" / "a.txt").write_text("a")
    (tmp_path / "assets" / "templates" / "deep" / "b.txt").write_text("b")
    (tmp_path / "notes.txt").write_text("n" * 40)
    (tmp_path / "SKILL.md").write_text(SKILL)
    (tmp_path / "eval.yaml").write_text("not a part")
    parts = folder_parts(tmp_path)
    assert [(p.title, p.files) for p in parts] == [
        ("assets/templates/", ("assets/templates/a.txt", "assets/templates/deep/b.txt")),
        ("notes.txt", ("notes.txt",)),
        ("references/api.md", ("references/api.md",)),
    ]
    assert next(p for p in parts if p.title == "references/api.md").tokens == 100
    assert files_without([parts[0]]) == {"assets/templates/a.txt", "assets/templates/deep/b.txt"}
