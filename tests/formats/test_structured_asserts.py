"""agentv's ``field-accuracy`` and ``execution-metrics`` and promptfoo's ``similar`` /
``not-similar``: real agentv files (tests/data/agentv-real, MIT, see the LICENSE there) run
end to end on the scripted server (its ``/v1/embeddings`` gives bag-of-words vectors), and
what cannot be honoured is refused by name."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agentsproof.core.errors import InputError
from conftest import Rule, read_json, run_cli

REAL = Path(__file__).resolve().parents[1] / "data" / "agentv-real" / "examples" / "features"
EXTRACTION = REAL / "document-extraction"
METRICS = REAL / "execution-metrics"
INVOICE = {
    "invoice_number": "INV-2025-001234",
    "invoice_date": "2025-01-15",
    "currency": "USD",
    "net_total": 1889.4,
    "gross_total": 1889,
    "supplier": {"name": "Acme Shipping"},
    "importer": {"name": "Global Trade Co"},
}


def _graders(path: Path):
    from agentsproof.formats.agentevals.items import load_suite

    return load_suite(path).graders


def _run(grader, answer: str) -> dict:
    out = subprocess.run(grader.run, input=answer, capture_output=True, text=True, check=False)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _suite(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "s.eval.yaml"
    path.write_text(body)
    return path


def test_real_field_accuracy_file_gives_its_script_options_to_the_script_as_agentv_does(tmp_path):
    from agentsproof.formats.agentevals.items import load_suite

    shutil.copytree(EXTRACTION, tmp_path / "x")
    loaded = load_suite(tmp_path / "x" / "evals" / "field-accuracy.eval.yaml")
    built = loaded.graders[loaded.suite.tests[1].id]
    script = built.graders[built.labels.index("party_names_fuzzy")]
    # fields and algorithm are agentv's pass-through config for the script (its payload's config)
    assert script.type == "script" and script.stdin == "json"
    assert script.config["algorithm"] == "levenshtein" and script.config["fields"][0]["path"] == "supplier.name"


def _extraction_without_fuzzy_script(tmp_path: Path) -> Path:
    """The real file less its two bun scripts' assertions (their options are refused, above)."""
    import yaml

    shutil.copytree(EXTRACTION, tmp_path / "x")
    suite = tmp_path / "x" / "evals" / "field-accuracy.eval.yaml"
    data = yaml.safe_load(suite.read_text())
    for test in data["tests"]:
        test["assert"] = [a for a in test.get("assert", []) if not (isinstance(a, dict) and a.get("type") == "script")]
    suite.write_text(yaml.safe_dump(data, sort_keys=False))
    return suite


def test_field_accuracy_compares_the_answer_json_with_expected_output_as_agentv_does(tmp_path):
    graders = _graders(_extraction_without_fuzzy_script(tmp_path))
    first = graders["invoice-001"].graders[0]  # the suite's field-accuracy, merged first
    assert first.type == "script"
    good = _run(first, "Here it is:\n```json\n" + json.dumps(INVOICE) + "\n```")
    assert good["score"] == 1.0, good  # date formats normalised, 1889.4 within tolerance 1
    wrong = dict(INVOICE, invoice_number="INV-9", net_total=1700)
    bad = _run(first, json.dumps(wrong))
    # invoice_number (weight 2) and net_total (3) fail; the optional addresses the answer
    # leaves out are left out (agentv: weight 0), so of 2+1+1+1+1+3+3 = 12, 7 pass
    assert bad["score"] == pytest.approx(7 / 12), bad
    assert {c["name"]: c["passed"] for c in bad["checks"]}["net_total"] is False
    assert _run(first, "no JSON here")["score"] == 0.0


def test_field_accuracy_end_to_end_on_the_scripted_server(byok_env, tmp_path):
    suite = _extraction_without_fuzzy_script(tmp_path)
    byok_env.add(Rule(reply=json.dumps(INVOICE), judge=False))
    byok_env.add(Rule(reply='{"passed": true, "evidence": "ok"}', judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache", "--trials", "1"])
    assert code in (0, 1), err
    data = read_json(next(out.rglob("*-tc-eval.json")))
    trial = data["items"][0]["with_arm"]["trials"][0]
    assert trial["status"] == "scored", trial
    script = next(g for g in trial["graders"] if g["type"] == "script")
    assert script["score"] == 1.0 and not script["errored"], script


@pytest.mark.parametrize(
    ("entry", "field", "words"),
    [
        ("{type: field-accuracy, fields: [{path: a, match: fuzzy}]}", "tests[0].assert[0].fields[0].match", "fuzzy"),
        ("{type: field-accuracy, fields: []}", "tests[0].assert[0].fields", "non-empty"),
        ("{type: field-accuracy, fields: [{path: a}], aggregation: median}", "tests[0].assert[0].aggregation", "weighted_average"),
        ("{type: field-accuracy, fields: [{path: a, tolerance: -1}]}", "tests[0].assert[0].fields[0].tolerance", "at least 0"),
        ("{type: execution-metrics}", "tests[0].assert[0].max_tool_calls", "at least one"),
        ("{type: execution-metrics, max_tool_calls: 2, negate: true}", "tests[0].assert[0].negate", "upper bounds"),
        ("{type: similar, value: [], threshold: 0.8}", "tests[0].assert[0].value", "text"),
        ("{type: similar, value: hi, threshold: 2}", "tests[0].assert[0].threshold", "-1 to 1"),
        ("{type: similar, value: hi, provider: 'huggingface:sentence-similarity:x'}", "tests[0].assert[0].provider", "openai:embedding:MODEL"),
        ("{type: similar:dot, value: hi}", "tests[0].assert[0].type", "not supported"),
    ],
)
def test_what_cannot_be_honoured_is_refused_by_name(tmp_path, entry, field, words):
    suite = _suite(tmp_path, f"tests:\n  - id: t\n    input: Hi\n    expected_output: '{{\"a\": 1}}'\n    assert:\n      - {entry}\n")
    with pytest.raises(InputError) as caught:
        _graders(suite)
    assert caught.value.field == field and words in caught.value.message, caught.value


def test_field_accuracy_needs_a_json_expected_output(tmp_path):
    suite = _suite(
        tmp_path, "tests:\n  - id: t\n    input: Hi\n    expected_output: plain text\n    assert:\n      - {type: field-accuracy, fields: [{path: a}]}\n"
    )
    with pytest.raises(InputError) as caught:
        _graders(suite)
    assert caught.value.field == "tests[0].assert[0].type" and "JSON object" in caught.value.message


def test_real_execution_metrics_suite_runs_its_thresholds_on_the_recorded_trial(byok_env, tmp_path):
    shutil.copytree(METRICS, tmp_path / "m")
    suite = tmp_path / "m" / "evals" / "suite.yaml"
    graders = _graders(suite)
    first = graders["simple-thresholds-pass"].graders[0]
    assert (first.type, first.max_tool_calls, first.max_tokens, first.max_duration_ms) == ("execution_metrics", 10, 2000, 10000)
    byok_env.add(Rule(reply="A short answer.", judge=False))
    byok_env.add(Rule(reply='{"passed": true, "evidence": "ok"}', judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache", "--trials", "1"])
    assert code in (0, 1, 30), err
    items = {i["name"]: i for i in read_json(next(out.rglob("*-tc-eval.json")))["items"]}

    def metrics(name: str) -> dict:
        trial = items[name]["with_arm"]["trials"][0]
        return next(g for g in trial["graders"] if g["type"] == "execution_metrics")

    simple = {c["kind"].split(": ")[-1]: c for c in metrics("simple-thresholds-pass")["checks"]}
    assert simple["max_tool_calls"]["passed"] and simple["max_tool_calls"]["evidence"].startswith("tool calls 0 <= 10")
    assert simple["max_tokens"]["passed"] and "tokens" in simple["max_tokens"]["evidence"]
    full = {c["kind"].split(": ")[-1]: c for c in metrics("comprehensive-thresholds")["checks"]}
    assert full["max_llm_calls"]["passed"] and full["max_llm_calls"]["evidence"].startswith("model calls 1 <= 5")
    ratio = metrics("exploration-ratio-check")  # a chat trial calls no tool: agentv fails the ratio check
    assert ratio["score"] == 0.0 and "no tool calls" in ratio["checks"][0]["evidence"]


def test_execution_metrics_grader_on_a_recorded_trajectory():
    from agentsproof.grading.context import TrialContext
    from agentsproof.grading.execution_metrics import ExecutionMetricsGrader, grade_metrics
    from agentsproof.model.results import ToolCall, Usage

    spec = ExecutionMetricsGrader(type="execution_metrics", max_tool_calls=3, max_tokens=100, max_cost_usd=0.01, target_exploration_ratio=0.5)
    calls = [ToolCall(name=n) for n in ("Read", "Grep", "Edit", "bash")]
    ctx = TrialContext(answer="x", trajectory=calls, usage=Usage(prompt_tokens=60, completion_tokens=30, total_tokens=90))
    result = grade_metrics(spec, ctx)
    by = {c.kind: c.passed for c in result.checks}
    assert by == {"max_tool_calls": False, "max_tokens": True, "max_cost_usd": False, "exploration_ratio": True}
    assert result.score == 0.5
    assert "not recorded" in next(c.evidence for c in result.checks if c.kind == "max_cost_usd")


def test_similar_and_not_similar_end_to_end_through_the_providers_embeddings(byok_env, tmp_path):
    suite = _suite(
        tmp_path,
        "tests:\n  - id: t\n    input: Describe the weather\n    assert:\n"
        "      - {type: similar, value: [the weather is sunny and warm today, cats], threshold: 0.8}\n"
        "      - {type: not-similar, value: quarterly revenue figures}\n"
        "      - {type: similar, value: quarterly revenue figures, provider: 'openai:embedding:small-embedder'}\n",
    )
    byok_env.add(Rule(reply="The weather is sunny and warm today.", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache", "--trials", "1"])
    assert code in (0, 1), err
    trial = read_json(next(out.rglob("*-tc-eval.json")))["items"][0]["with_arm"]["trials"][0]
    scores = [g["score"] for g in trial["graders"]]
    assert scores == [1.0, 1.0, 0.0], trial["graders"]
    assert "cosine similarity 1.000" in trial["graders"][0]["checks"][0]["evidence"]
    models = [r["model"] for r in byok_env.embedding_requests]
    assert "text-embedding-3-large" in models and "small-embedder" in models
    assert all(r["input"][0] == "The weather is sunny and warm today." for r in byok_env.embedding_requests)


def test_similar_on_a_provider_without_embeddings_is_an_errored_grader():
    import asyncio

    from agentsproof.grading.base import GradeInput
    from agentsproof.grading.context import TrialContext
    from agentsproof.grading.judge import Judge
    from agentsproof.grading.similar import SimilarGrader, grade
    from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient

    class NoEmbeddings(LLMClient):
        name = "chat-only"

        async def complete(self, request: ChatRequest) -> ChatResponse:
            return ChatResponse(text="")

    spec = SimilarGrader(type="similar", expected=["hi"])
    given = GradeInput(answer="hi", context=TrialContext(answer="hi"), judge=Judge(client=NoEmbeddings(), model="m"), task="t")
    result = asyncio.run(grade(spec, given))
    assert result.errored and "chat-only provider has no embeddings API" in (result.error or "")


def test_promptfoo_csv_similar_with_its_threshold_runs_on_the_scripted_server(byok_env, tmp_path):
    (tmp_path / "tests.csv").write_text("topic,__expected\nweather,similar(0.6): the weather is sunny\nmoney,not-similar: the weather is sunny\n")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: ['Tell me about {{topic}}']\nproviders: [openai:gpt-4o-mini]\ntests: file://tests.csv\n")
    byok_env.add(Rule(reply="Sunny weather all week.", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", config, "--model", "m", "--output", out, "--no-cache", "--trials", "1"])
    assert code in (0, 1), err
    items = read_json(next(out.rglob("*.json")))["items"]
    graders = [i["with_arm"]["trials"][0]["graders"][0] for i in items]
    assert [g["type"] for g in graders] == ["similar", "similar"]
    # "sunny" and "weather" shared, of 4 words each: 2/4 = 0.5 < 0.6 fails; not-similar (0.75) passes
    assert [g["score"] for g in graders] == [0.0, 1.0], graders
    assert "at least 0.6 passes" in graders[0]["checks"][0]["evidence"]
