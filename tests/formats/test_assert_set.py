"""promptfoo's ``assert-set``: its assertions graded one by one with the set's weight shared
by their own weights (the test's score is promptfoo's), the set's metric on its checks, vars
filled inside it, nested sets; its threshold and its negation refused by name. On the
scripted server."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Rule, read_json, run_cli

CONFIG = """\
prompts: ["Translate to French: {{input}}"]
tests:
  - description: grouped
    vars: {input: Hello, expected: bonjour}
    assert:
      - type: assert-set
        weight: 2
        metric: tone
        assert:
          - {type: icontains, value: "{{expected}}"}
          - type: assert-set
            weight: 3
            assert:
              - {type: not-icontains, value: merci}
      - {type: contains, value: xyz}
"""


def _write(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "sets"
    folder.mkdir()
    (folder / "promptfooconfig.yaml").write_text(text)
    return folder / "promptfooconfig.yaml"


def test_an_assert_set_shares_its_weight_among_its_assertions(byok_env, tmp_path):
    byok_env.add(Rule(reply="Bonjour !", judge=False))
    path = _write(tmp_path, CONFIG)
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert "Traceback" not in err and code in (0, 1), err
    data = read_json(tmp_path / "out" / "sets" / "sets-tc-eval.json")
    trial = data["items"][0]["with_arm"]["trials"][0]
    weights = [g["weight"] for g in trial["graders"]]
    assert weights == pytest.approx([0.5, 1.5, 1.0]), trial["graders"]  # 2 x 1/4, 2 x 3/4, and the other assertion
    assert trial["score"] == pytest.approx(2 / 3)  # promptfoo's weighted mean: the set passes, contains xyz fails
    assert "tone" in str(trial["graders"][0]) and "tone" in str(trial["graders"][1])  # the set's metric


@pytest.mark.parametrize(
    ("entry", "field", "words"),
    [
        ("{type: assert-set, threshold: 1.5, assert: [{type: contains, value: a}]}", "tests[0].assert[0].threshold", "must be a number from 0 to 1"),
        ("{type: assert-set, required: true, assert: [{type: contains, value: a}]}", "tests[0].assert[0].required", "a required assert-set"),
        ("{type: not-assert-set, assert: [{type: contains, value: a}]}", "tests[0].assert[0].type", "negating an assert-set is not supported"),
        ("{type: assert-set, assert: []}", "tests[0].assert[0].assert", "non-empty list"),
        ("{type: assert-set, assert: [{type: levenshtein, value: a}]}", "tests[0].assert[0].assert[0].type", "'levenshtein' is not graded"),
        ("{type: assert-set, weight: 0, assert: [{type: contains, value: a}]}", "tests[0].assert[0].weight", "above 0"),
    ],
)
def test_a_bad_assert_set_is_one_line_naming_the_field(tmp_path, entry, field, words):
    path = _write(tmp_path, f"prompts: ['Say {{{{input}}}}']\ntests:\n  - vars: {{input: hi}}\n    assert: [{entry}]\n")
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "Traceback" not in err, err
    line = next(line for line in err.splitlines() if f"{field}:" in line)
    assert words in line, err
