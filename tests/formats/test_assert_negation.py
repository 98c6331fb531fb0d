"""Negated assertions and promptfoo's simple length/emptiness checks, run on the scripted server.

promptfoo negates any assertion type with a ``not-`` prefix, agentv with ``negate: true``;
each negated check must pass exactly the trials its plain form fails (read from the
report's per-grader scores), and a negation agentsproof cannot honour (a judge's verdict,
a script's score) is refused in one line naming the file and the field, never run
un-negated.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import Rule, read_json, run_cli

REPLY = "Hello World 42"

# (description, assertion, whether REPLY passes it)
PROMPTFOO_CASES = [
    ("not-regex-digits", {"type": "not-regex", "value": r"\d+"}, False),
    ("not-regex-absent", {"type": "not-regex", "value": "xyz"}, True),
    ("not-regex-flags", {"type": "not-regex", "value": "(?i)hello"}, False),
    ("not-starts-with-hit", {"type": "not-starts-with", "value": "Hello"}, False),
    ("not-starts-with-miss", {"type": "not-starts-with", "value": "World"}, True),
    ("not-ends-with", {"type": "not-ends-with", "value": "42"}, False),
    ("not-equals-same", {"type": "not-equals", "value": REPLY}, False),
    ("not-equals-other", {"type": "not-equals", "value": "Hello"}, True),
    ("not-contains-any-hit", {"type": "not-contains-any", "value": ["foo", "World"]}, False),
    ("not-contains-any-miss", {"type": "not-contains-any", "value": ["foo", "bar"]}, True),
    ("not-icontains-any-hit", {"type": "not-icontains-any", "value": ["foo", "world"]}, False),
    ("not-contains-all-hit", {"type": "not-contains-all", "value": ["Hello", "World"]}, False),
    ("not-contains-all-part", {"type": "not-contains-all", "value": ["Hello", "nope"]}, True),
    ("not-icontains-all-hit", {"type": "not-icontains-all", "value": ["hello", "world"]}, False),
    ("not-contains-case", {"type": "not-contains", "value": "world"}, True),
    ("not-icontains", {"type": "not-icontains", "value": "world"}, False),
    ("not-empty", {"type": "not-empty"}, True),
    ("min-length-short", {"type": "min-length", "value": 5}, True),
    ("min-length-long", {"type": "min-length", "value": 100}, False),
    ("max-length-short", {"type": "max-length", "value": 5}, False),
    ("max-length-exact", {"type": "max-length", "value": len(REPLY)}, True),
    ("not-min-length", {"type": "not-min-length", "value": 100}, True),
    ("not-max-length", {"type": "not-max-length", "value": len(REPLY)}, False),
    ("is-json", {"type": "is-json"}, False),
    ("not-is-json", {"type": "not-is-json"}, True),
]


def _scores(report: Path, arm: str = "with_arm") -> dict[str, tuple[float, bool]]:
    """Each item's (single grader's score, trial passed), by the test's description slug."""
    data = read_json(report)
    out: dict[str, tuple[float, bool]] = {}
    for item in data["items"]:
        trial = item[arm]["trials"][0]
        assert trial["status"] == "scored" and len(trial["graders"]) == 1, trial
        out[item["name"].rsplit("/", 1)[-1]] = (trial["graders"][0]["score"], trial["passed"])
    return out


def _promptfoo(tmp_path: Path, asserts: list[tuple[str, dict, bool]]) -> Path:
    folder = tmp_path / "neg"
    folder.mkdir()
    config = {
        "prompts": ["Say hello to {{who}}"],
        "tests": [{"description": d, "vars": {"who": "world"}, "assert": [a]} for d, a, _ in asserts],
    }
    (folder / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return folder / "promptfooconfig.yaml"


def test_promptfoo_not_prefix_and_lengths_pass_and_fail_the_right_trials(byok_env, tmp_path):
    byok_env.add(Rule(reply=REPLY, judge=False))
    path = _promptfoo(tmp_path, PROMPTFOO_CASES)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    scores = _scores(out / "neg" / "neg-tc-eval.json")
    assert set(scores) == {d for d, _, _ in PROMPTFOO_CASES}
    wrong = {d: scores[d] for d, _, ok in PROMPTFOO_CASES if scores[d] != ((1.0, True) if ok else (0.0, False))}
    assert not wrong, wrong
    assert not byok_env.judge_requests()  # every one of them is checked without a model
    checks = {i["name"]: i["with_arm"]["trials"][0]["graders"][0]["checks"][0] for i in read_json(out / "neg" / "neg-tc-eval.json")["items"]}
    assert checks["not-is-json"]["target"] == "the answer is not valid JSON"
    assert checks["max-length-short"]["target"] == "the answer's length in characters"
    assert "the answer is 14 characters; expected at most 5" in checks["max-length-short"]["evidence"], checks["max-length-short"]


def test_promptfoo_negated_checks_fail_on_another_answer(byok_env, tmp_path):
    """The same negated checks on an empty-ish JSON answer flip where they should (not a constant)."""
    byok_env.add(Rule(reply="  {}  ", judge=False))
    cases = [
        ("not-regex-digits", {"type": "not-regex", "value": r"\d+"}, True),
        ("not-empty", {"type": "not-empty"}, True),
        ("not-is-json", {"type": "not-is-json"}, False),
        ("is-json", {"type": "is-json"}, True),
        ("not-starts-with", {"type": "not-starts-with", "value": "{"}, False),
        ("not-contains-all", {"type": "not-contains-all", "value": ["{", "}"]}, False),
    ]
    path = _promptfoo(tmp_path, cases)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    scores = _scores(out / "neg" / "neg-tc-eval.json")
    wrong = {d: scores[d] for d, _, ok in cases if scores[d][0] != (1.0 if ok else 0.0)}
    assert not wrong, wrong


@pytest.mark.parametrize(
    ("entry", "field", "says"),
    [
        ({"type": "not-llm-rubric", "value": "polite"}, "tests[0].assert[0].type", "negating 'llm-rubric' is not supported"),
        ({"type": "moderation"}, "tests[0].assert[0].type", "'moderation' is not graded by agentsproof: needs a moderation model"),
        ({"type": "not-moderation"}, "tests[0].assert[0].type", "'not-moderation' is not graded by agentsproof: needs a moderation model"),
        ({"type": "is-sql", "value": "1"}, "tests[0].assert[0].value", "must be a mapping (databaseType, allowedTables, allowedColumns)"),
        ({"type": "min-length", "value": "many"}, "tests[0].assert[0].value", "must be a whole number of characters"),
        ({"type": "not-min-length", "value": 0}, "tests[0].assert[0].value", "can never pass"),
        ({"type": "not-regex", "value": "x", "negate": True}, "tests[0].assert[0].negate", "already negated"),
    ],
)
def test_promptfoo_refusals_are_one_line_naming_the_field(byok_env, tmp_path, entry, field, says):
    path = _promptfoo(tmp_path, [("t", entry, True)])
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and len(err.strip().splitlines()) == 1, err
    assert f"promptfooconfig.yaml: {field}" in err and says in err, err
    assert not byok_env.trial_requests()


AGENTV_CASES = [
    ("contains", {"type": "contains", "value": "World", "negate": True}, False),
    ("icontains", {"type": "icontains", "value": "nope", "negate": True}, True),
    ("not-contains", {"type": "not-contains", "value": "World", "negate": True}, True),
    ("regex", {"type": "regex", "value": "^hello", "flags": "i", "negate": True}, False),
    ("regex-miss", {"type": "regex", "value": "^World", "negate": True}, True),
    ("equals", {"type": "equals", "value": REPLY, "negate": True}, False),
    ("starts-with", {"type": "starts-with", "value": "42", "negate": True}, True),
    ("contains-any", {"type": "contains-any", "value": ["x", "42"], "negate": True}, False),
    ("contains-all", {"type": "contains-all", "value": ["Hello", "x"], "negate": True}, True),
    ("is-json", {"type": "is-json", "negate": True}, True),
    ("plain", {"type": "contains", "value": "World", "negate": False}, True),
]


def _agentv(tmp_path: Path, cases: list[tuple[str, dict, bool]]) -> Path:
    skill = tmp_path / "skills" / "greet"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: greets\n---\nGreet.\n")
    suite = {"name": "greet", "tests": [{"id": d, "input": "Say hello", "assert": [a]} for d, a, _ in cases]}
    (skill / "evals" / "EVAL.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    return skill / "evals" / "EVAL.yaml"


def test_agentv_negate_true_passes_and_fails_the_right_trials(byok_env, tmp_path):
    byok_env.add(Rule(reply=REPLY, judge=False))
    path = _agentv(tmp_path, AGENTV_CASES)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    for arm in ("with_arm", "without_arm"):
        scores = _scores(out / "greet" / "greet-tc-eval.json", arm)
        assert set(scores) == {d for d, _, _ in AGENTV_CASES}
        wrong = {d: scores[d] for d, _, ok in AGENTV_CASES if scores[d][0] != (1.0 if ok else 0.0)}
        assert not wrong, (arm, wrong)
    kinds = {
        i["name"].rsplit("/", 1)[-1]: i["with_arm"]["trials"][0]["graders"][0]["checks"][0]["kind"]
        for i in read_json(out / "greet" / "greet-tc-eval.json")["items"]
    }
    assert kinds["regex"] == "not-regex: regexMatch" and kinds["contains"] == "not-contains: mustNotContain", kinds
    assert kinds["plain"] == "contains: mustContain", kinds


@pytest.mark.parametrize(
    ("entry", "field", "says"),
    [
        ({"type": "llm-rubric", "value": "polite", "negate": True}, "tests[0].assert[0].negate", "negating 'llm-rubric' is not supported"),
        ({"type": "code-grader", "command": "true", "negate": True}, "tests[0].assert[0].negate", "negating 'code-grader' is not supported"),
        ({"type": "contains", "value": "x", "negate": "yes"}, "tests[0].assert[0].negate", "must be true or false"),
        ({"type": "not-regex", "value": "x", "negate": True}, "tests[0].assert[0].negate", "already negated"),
        ({"type": "frobnicate", "value": "x", "negate": True}, "tests[0].assert[0].type", "'frobnicate' is not supported"),
    ],
)
def test_agentv_negate_refusals_are_one_line_naming_the_field(byok_env, tmp_path, entry, field, says):
    path = _agentv(tmp_path, [("t", entry, True)])
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and len(err.strip().splitlines()) == 1, err
    assert f"EVAL.yaml: {field}" in err and says in err, err
    assert not byok_env.trial_requests()


def test_promptfoo_csv_expected_columns_take_the_not_prefix(byok_env, tmp_path):
    byok_env.add(Rule(reply=REPLY, judge=False))
    folder = tmp_path / "neg"
    folder.mkdir()
    (folder / "promptfooconfig.yaml").write_text("prompts: ['Say hello to {{who}}']\ntests: file://tests.csv\n")
    (folder / "tests.csv").write_text(
        "who,__expected,__description\na,not-regex: \\d,digits\nb,not-starts-with: World,start\nc,not-is-json:,json\nd,not-contains-all: Hello,whole\n"
    )
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", folder / "promptfooconfig.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    scores = {d: s for d, (s, _) in _scores(out / "neg" / "neg-tc-eval.json").items()}
    assert scores == {"digits": 0.0, "start": 1.0, "json": 1.0, "whole": 0.0}, scores
    (folder / "tests.csv").write_text("who,__expected\na,not-grade: polite\n")
    code, _, err = run_cli(["eval", folder / "promptfooconfig.yaml", "--model", "m", "--output", out])
    assert code == 30 and len(err.strip().splitlines()) == 1 and "negating 'llm-rubric' is not supported" in err, err


def test_negated_skill_assertions_expect_the_opposite(tmp_path):
    """skill-used / skill-trigger need an agent trial; what they are built into is read here:
    negated, the skill_used grader expects the skill not to be used (and the reverse)."""
    from agentsproof.core.errors import InputError
    from agentsproof.formats.agentevals.asserts import build_graders
    from agentsproof.formats.agentevals.parse import parse_suite

    path = tmp_path / "EVAL.yaml"
    entries = [
        {"type": "skill-used", "value": "greet", "negate": True},
        {"type": "not-skill-used", "value": "greet", "negate": True},
        {"type": "skill-trigger", "skill": "greet", "negate": True},
        {"type": "skill-trigger", "skill": "greet", "should_trigger": False, "negate": True},
        {"type": "skill-used", "value": "greet"},
    ]
    suite = parse_suite({"tests": [{"id": "t", "input": "hi", "assert": entries}]}, path)
    b = build_graders("EVAL.yaml", path, suite.tests[0], "greet", "tests[0]")
    assert [g.expected for g in b.graders] == [False, True, False, True, True]
    assert b.labels[:3] == ["not-skill-used", "skill-used", "not-skill-trigger"]
    suite = parse_suite({"tests": [{"id": "t", "input": "hi", "assert": [{"type": "files", "exists": ["a.txt"], "negate": True}]}]}, path)
    with pytest.raises(InputError) as err:
        build_graders("EVAL.yaml", path, suite.tests[0], "greet", "tests[0]")
    assert err.value.field == "tests[0].assert[0].negate" and "negating 'files' is not supported" in err.value.message
