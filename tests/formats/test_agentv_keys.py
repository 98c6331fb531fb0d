"""agentv's test keys, assertion types and older dialect, run as agentv runs them: copies of
agentv's own examples (tests/data/agentv-keys, MIT, see the LICENSE there) run on the
scripted server end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import Rule, read_json, run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "agentv-keys"
REAL = Path(__file__).resolve().parents[1] / "data" / "agentv-real"
JUDGED = '{"reasoning": "fine", "score": 0.8, "evidence": "it does", "passed": true}'
PASSED = '{"evidence": "it does", "passed": true}'


def _copy(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(DATA / name, root)
    return root


def _graders(report: dict, item: str) -> list[dict]:
    found = next(i for i in report["items"] if i["name"] == item)
    return found["with_arm"]["trials"][0]["graders"]


def test_older_evaluators_composite_code_judge_and_skip_defaults_run(byok_env, tmp_path):
    root = _copy(tmp_path, "composite")
    byok_env.add(Rule(reply="Machine learning lets systems learn patterns from data.", user_contains="machine learning", judge=False))
    byok_env.add(Rule(reply="def parse(s):\n    try:\n        return s\n    except ValueError:\n        return None", user_contains="date string", judge=False))
    byok_env.add(Rule(reply=JUDGED, judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "dataset.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    assert "'azure_base' (agentv's per-test target) is not used" in err
    report = read_json(out / "composite-evaluator-examples" / "composite-evaluator-examples-tc-eval.json")
    first = _graders(report, "weighted-average-example")
    # the file's code_judge, then the composite's two judges with the aggregator's weights (0.3, 0.7)
    assert [g["type"] for g in first] == ["script", "llm_rubric", "llm_rubric"]
    assert [round(g["weight"], 6) for g in first] == [1.0, 0.3, 0.7] and first[0]["score"] == 1.0
    judged = "\n".join(json.dumps(r["messages"]) for r in byok_env.judge_requests())
    assert "harmful, inappropriate" in judged  # the composite's prompt file, beside evals/
    second = _graders(report, "code-gen-python-comprehensive")
    # skip_defaults: no file-level code_judge; the keyword script got its other keys as config; the judge by default
    assert [g["type"] for g in second] == ["script", "llm_rubric"]
    assert second[0]["score"] == 1.0 and "found ['def', 'try']" in json.dumps(second[0])


def test_a_composite_aggregated_by_a_program_or_the_judge_runs_it_on_the_evaluators_results(byok_env, tmp_path):
    root = _copy(tmp_path, "composite")
    byok_env.add(Rule(reply="Take them to a recycling point.", judge=False))
    aggregator = "Review the child evaluator results"  # conflict-resolution.md, the aggregator's prompt
    byok_env.add(Rule(reply=lambda req: '{"reasoning": "balanced", "score": 0.6}' if aggregator in json.dumps(req) else '{"reasoning": "fine", "score": 0.9}', judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "dataset.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    report = read_json(out / "composite-evaluator-examples" / "composite-evaluator-examples-tc-eval.json")
    gate = _graders(report, "code-judge-aggregator")[1]
    # agentv's safety-gate script read both judges' results: safety 0.9 >= 0.8 passes, so the score is quality's
    assert gate["type"] == "composite" and gate["score"] == 0.9 and "Safety passed (0.90)" in (gate["reasoning"] or "")
    judged = _graders(report, "llm-judge-conflict-resolution")[1]
    assert judged["type"] == "composite" and judged["score"] == 0.6
    asked = [json.dumps(r["messages"]) for r in byok_env.judge_requests() if "Review the child evaluator results" in json.dumps(r["messages"])]
    assert asked and '\\"conciseness\\"' in asked[0] and "0.9" in asked[0]  # the children's results, as JSON


def test_a_composite_with_an_unknown_aggregator_is_refused_by_name(tmp_path):
    root = _copy(tmp_path, "composite")
    suite = root / "evals" / "dataset.yaml"
    suite.write_text(suite.read_text().replace("type: weighted_average", "type: majority_vote"))
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "evalcases[0].execution.evaluators[0].aggregator.type:" in err and "expected weighted_average" in err, err


def test_assert_set_threshold_is_read_and_root_assertions_are_skipped_by_skip_defaults(byok_env, tmp_path):
    root = _copy(tmp_path, "assert-set")
    byok_env.add(Rule(reply="Paris is the capital city of France.", user_contains="Where is Paris", judge=False))
    byok_env.add(Rule(reply="Machine learning finds patterns in data.", user_contains="machine learning", judge=False))
    byok_env.add(Rule(reply=JUDGED, judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "suite.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    assert "tests[0].assert[0].threshold: the set's own pass mark (0.7" in err
    report = read_json(out / "assert-set-examples" / "assert-set-examples-tc-eval.json")
    first = _graders(report, "weighted-average-example")
    assert [g["type"] for g in first] == ["assertions", "llm_rubric", "llm_rubric"]  # the root criterion, then the set
    second = _graders(report, "skip-defaults")
    assert [g["type"] for g in second] == ["deterministic", "deterministic"] and all(g["score"] == 1.0 for g in second)


def test_several_prompts_each_run_every_test_with_nested_vars(byok_env, tmp_path):
    root = _copy(tmp_path, "templating")
    byok_env.add(Rule(reply="Paris.", judge=False))
    byok_env.add(Rule(reply=PASSED, judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "suite.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    names = sorted(i["name"] for i in read_json(next(out.rglob("*-tc-eval.json")))["items"])
    assert names == ["capital-france@support-chat", "capital-france@terse", "greet-ada@support-chat", "greet-ada@terse"]
    sent = [json.dumps(r["messages"]) for r in byok_env.trial_requests()]
    # the JSON chat prompt file's system message, its vars filled (default_test's audience, the test's category)
    assert any("concise assistant answering geography questions for users" in s for s in sent)
    assert any("Answer for new teammates in one sentence: How should I greet Ada?" in s for s in sent)  # a var using a var
    judged = "\n".join(json.dumps(r["messages"]) for r in byok_env.judge_requests())
    assert "Greets Ada warmly" in judged


def test_tests_from_a_cases_folder_and_a_csv_file(byok_env, tmp_path):
    folder = _copy(tmp_path, "directory-discovery")
    byok_env.add(Rule(reply="Done: hello from the CSV row.", judge=False))
    byok_env.add(Rule(reply=PASSED, judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", folder / "EVAL.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    items = read_json(out / "directory-discovery" / "directory-discovery-tc-eval.json")["items"]
    assert sorted(i["name"] for i in items) == ["add-greeting", "fix-null-check"]  # ids from the folders' names
    csv_root = _copy(tmp_path, "external-datasets")
    code, _, err = run_cli(["eval", csv_root / "evals" / "suite.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    assert "__threshold, a row's own pass mark, is not used" in err
    items = read_json(out / "external-datasets-demo" / "external-datasets-demo-tc-eval.json")["items"]
    row = next(i for i in items if i["name"] == "csv-magic-greeting")
    graders = row["with_arm"]["trials"][0]["graders"]
    # __expected icontains:hello, named by __metric; vars.input the prompt
    assert graders[0]["type"] == "deterministic" and graders[0]["score"] == 1.0 and "greeting" in json.dumps(graders[0])
    assert any("Reply with a short greeting" in json.dumps(r["messages"]) for r in byok_env.trial_requests())


def test_a_custom_assertion_file_runs_as_agentv_runs_it(tmp_path):
    from agentsproof.formats.agentevals.items import load_suite

    root = _copy(tmp_path, "custom")
    built = load_suite(root / "evals" / "suite.yaml")
    graders = built.graders["greeting-response"]
    script = graders.graders[1]
    assert graders.labels[1] == "min-words" and script.type == "script" and script.stdin == "json"
    assert script.run == ["bun", "run", str((root / ".agentv" / "assertions" / "min-words.ts").resolve())]
    (root / ".agentv" / "assertions" / "min-words.ts").unlink()
    with pytest.raises(Exception, match="'min-words' is not supported"):
        load_suite(root / "evals" / "suite.yaml")


def test_default_test_rubric_prompt_judges_the_plain_criteria(byok_env, tmp_path):
    root = tmp_path / "readme-quickstart"
    shutil.copytree(REAL / "examples" / "features" / "readme-quickstart", root)
    byok_env.add(Rule(reply="def fizzbuzz(n):\n    return 'fizz'", judge=False))
    byok_env.add(Rule(reply=JUDGED, judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "my-eval.eval.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    judged = [json.dumps(r["messages"]) for r in byok_env.judge_requests()]
    rubric = [j for j in judged if "[[ ## rubric ## ]]" in j]
    assert rubric and "Implements correct FizzBuzz logic" in rubric[0]


def test_tool_args_match_and_a_call_count_grade_the_trajectory():
    from agentsproof.formats.agentevals.trajectory import rewrite
    from agentsproof.grading.context import TrialContext
    from agentsproof.grading.tool_calls import ToolCallsGrader, grade_tool_calls
    from agentsproof.model.results import ToolCall

    # agentv examples/features/trajectory-assertions-simple (EntityProcess/agentv, MIT)
    args = rewrite("s", "a", {"type": "trajectory:tool-args-match", "value": {"name": "search", "args": {"query": "weather Paris"}, "mode": "partial"}})
    count = rewrite("s", "a", {"type": "trajectory:tool-used", "value": {"name": "search", "min": 2}})
    calls = [ToolCall(name="search", arguments='{"query": "weather Paris", "limit": 3}'), ToolCall(name="get_weather", arguments='{"location": "Paris"}')]
    ctx = TrialContext(answer="sunny", trajectory=calls)
    spec = ToolCallsGrader.model_validate({**{k: v for k, v in args.items()}, "type": "tool_calls"})
    assert grade_tool_calls(spec, ctx).score == 1.0
    exact = ToolCallsGrader.model_validate({"type": "tool_calls", "called_with": [{"name": "search", "args": {"query": "weather Paris"}, "mode": "exact"}]})
    result = grade_tool_calls(exact, ctx)
    assert result.score == 0.0 and "no call of search had these arguments" in result.checks[0].evidence
    counted = grade_tool_calls(ToolCallsGrader.model_validate({**count, "type": "tool_calls"}), ctx)
    assert counted.score == 0.0 and counted.checks[0].evidence == "search called 1 time"


def test_agentv_jsonl_tests_run_on_their_own(byok_env, tmp_path):
    # the first row of agentv examples/features/basic-jsonl/evals/cases.jsonl (EntityProcess/agentv, MIT), its file part left out
    row = {
        "id": "code-review-javascript",
        "assert": ["Assistant provides helpful code analysis and mentions SUPERSECRET_INSTRUCTION_MARKER_JAVASCRIPT"],
        "vars": {"input": [{"role": "system", "content": "You are an expert software developer."}, {"role": "user", "content": "Review calculateTotal"}]},
    }
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(row) + "\n")
    byok_env.add(Rule(reply="Looks fine. SUPERSECRET_INSTRUCTION_MARKER_JAVASCRIPT", judge=False))
    byok_env.add(Rule(reply=PASSED, judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    item = read_json(next(out.rglob("*-tc-eval.json")))["items"][0]
    assert item["name"] == "code-review-javascript" and item["with_arm"]["trials"][0]["graders"][0]["type"] == "assertions"


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        ("evaluate_options:\n  repeat:\n    count: 2\n    strategy: pass_any\n", "repeat.strategy: agentv's verdict from repeated trials (pass_any)"),
        ("defaults:\n  system_message: Classify the incident.\n", "defaults.system_message: agentv's older default system prompt is not sent"),
    ],
)
def test_run_keys_are_read_with_a_note(byok_env, tmp_path, edit, words):
    root = _copy(tmp_path, "assert-set")
    suite = root / "evals" / "suite.yaml"
    suite.write_text(suite.read_text().replace("providers:\n  - llm\n", "providers:\n  - id: openai\n    label: llm\n" + edit))
    byok_env.add(Rule(reply="Paris is the capital city of France.", judge=False))
    byok_env.add(Rule(reply=JUDGED, judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache"])
    assert code == 0 and words in err, err
    trials = read_json(out / "assert-set-examples" / "assert-set-examples-tc-eval.json")["items"][0]["with_arm"]["trials"]
    assert len(trials) == (2 if "count: 2" in edit else 1)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        # agentv's tool-trajectory and its bounds on a trial's record (EntityProcess/agentv docs, MIT)
        (
            {"type": "tool-trajectory", "mode": "any_order", "minimums": {"knowledgeSearch": 2, "documentRetrieve": 1}},
            {"type": "tool-calls", "call_count": {"knowledgeSearch": {"min": 2}, "documentRetrieve": {"min": 1}}},
        ),
        (
            {"type": "tool-trajectory", "mode": "exact", "expected": [{"tool": "search", "args": {"q": "x"}}, {"tool": "fetch"}]},
            {"type": "tool-calls", "sequence": ["search", "fetch"], "min_steps": 2, "max_steps": 2, "called_with": [{"name": "search", "args": {"q": "x"}, "mode": "exact"}]},
        ),
        ({"type": "latency", "threshold": 5000, "weight": 2}, {"type": "execution-metrics", "max_duration_ms": 5000, "weight": 2}),
        ({"type": "cost", "budget": 0.1}, {"type": "execution-metrics", "max_cost_usd": 0.1}),
        ({"type": "token-usage", "max_total": 2000}, {"type": "execution-metrics", "max_tokens": 2000}),
    ],
)
def test_tool_trajectory_and_record_bounds_become_our_checks(entry, expected):
    from agentsproof.formats.agentevals.trajectory import rewrite

    assert rewrite("s", "a", entry) == expected


@pytest.mark.parametrize(
    ("entry", "field", "words"),
    [
        ({"type": "tool-trajectory", "mode": "subset", "expected": [{"tool": "a"}]}, "a.mode", "is not checked"),
        ({"type": "token-usage", "max_input": 10}, "a.max_input", "bound their sum with max_total"),
        ({"type": "not-latency", "threshold": 10}, "a.type", "negating 'latency'"),
    ],
)
def test_what_the_record_bounds_cannot_honour_is_named(entry, field, words):
    from agentsproof.core.errors import InputError
    from agentsproof.formats.agentevals.trajectory import rewrite

    with pytest.raises(InputError) as exc:
        rewrite("s", "a", entry)
    assert exc.value.field == field and words in exc.value.message


def test_a_bare_llm_rubric_judges_the_tests_plain_criteria_with_its_options_noted(byok_env, tmp_path):
    # agentv examples/features/file-changes-graders/evals/suite.yaml (EntityProcess/agentv, MIT), excerpt
    suite = tmp_path / "suite.eval.yaml"
    suite.write_text(
        "prompts:\n  - '{{ input }}'\ntests:\n  - id: verify-file-changes-graders\n    assert:\n"
        "      - metric: llm-rubric-builtin\n        type: llm-rubric\n        max_steps: 3\n        temperature: 0\n"
        "      - metric: llm-rubric-copilot\n        type: llm-rubric\n        target: copilot_grader\n        temperature: 0\n"
        "      - The agent must add a subtract function to src/calculator.ts.\n"
        "    vars:\n      input: Add a subtract function to src/calculator.ts\n"
    )
    byok_env.add(Rule(reply="export const subtract = (a, b) => a - b;", judge=False))
    byok_env.add(Rule(reply=JUDGED, judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    assert "max_steps: agentv's judge explores the workspace in up to 3 steps" in err
    assert "'copilot_grader' (agentv's older judge target) is not resolved" in err and "temperature" in err
    judged = [json.dumps(r["messages"]) for r in byok_env.judge_requests() if "Criteria:" in json.dumps(r["messages"])]
    assert judged and "must add a subtract function" in judged[0]
