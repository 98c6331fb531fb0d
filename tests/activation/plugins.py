"""Small multi-skill plugins for activation tests, written from evals/csv-plugin's skills
(a few prompts each, so agent targets stay quick), optionally with a planted skill that
collides with csv-summary (its description names csv-summary's trigger words)."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
CSV_PLUGIN = REPO / "evals" / "csv-plugin"
PLANTED = (
    "---\nname: table-digest\ndescription: Writes a short report on a table - totals, averages, missing values "
    "and outliers of every column.\n---\nDIGESTMARK: report the table.\n"
)

SUITES = {
    "csv-summary": {
        "should": ["What are the totals and averages of each column in this CSV?",
                   "Give me a short report of the missing values and outliers in this table.",
                   "Describe this dataset."],
        "should_not": [{"prompt": "Plot this tabular data as a bar chart with labelled axes.", "type": "near-miss"},
                       {"prompt": "Write a haiku about autumn.", "type": "negative"}],
    },
    "chart-builder": {
        "should": ["Plot this tabular data as a bar chart with labelled axes.",
                   "Write matplotlib plotting code for these monthly sales."],
        "should_not": [{"prompt": "Give me a short report of the missing values and outliers in this table.", "type": "near-miss"}],
    },
    "csv-cleanup": {
        "should": ["This spreadsheet export has broken headers and duplicate rows, can you fix it?"],
        "should_not": [{"prompt": "Review this SQL query for injection risks.", "type": "negative"}],
    },
}


def write_plugin(root: Path, *, planted: bool = False, suites: dict | None = None) -> Path:
    plugin = root / "tables-plugin"
    for name, suite in (suites or SUITES).items():
        folder = plugin / "skills" / name
        folder.mkdir(parents=True)
        shutil.copyfile(CSV_PLUGIN / "skills" / name / "SKILL.md", folder / "SKILL.md")
        cfg = {"skill": "SKILL.md", "task": {"name": "t", "instruction": "Do it.", "graders": [{"type": "deterministic", "checks": ["x"]}]},
               "activation": suite}
        (folder / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    if planted:
        folder = plugin / "skills" / "table-digest"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(PLANTED, encoding="utf-8")
    return plugin
