"""eval-generate's cases: at least five, distinct, none copied from the skill, none naming it —
the measures on known values, then the real CLI against the scripted server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from agentsproof.formats.eval_yaml.models import load_eval
from agentsproof.generator.cases import example_text, overlap, shingle_similarity, words
from agentsproof.generator.plugin import PluginItem
from agentsproof.generator.validate import InvalidEval, build_eval, technique_names
from conftest import Rule, read_json
from generated_evals import PROBLEMS, eval_reply

MODEL = ["--model", "gen-model"]
GEN_MARK = "You design evaluations for agentsproof"
EXAMPLE = (
    "Our payment service returns HTTP 500 whenever the card issuer is slow, and the mobile app "
    "shows a blank screen. Rewrite the handler so that clients learn what went wrong."
)
SKILL_TEXT = (
    "---\nname: error-reports\n---\n# Error reports for web APIs\n\nAnswer every failure with a 'Problem:' line "
    "and a 'Fix:' line.\n\n## Example\n\n" + EXAMPLE + "\n"
)


# ------------------------------------------------------------------ the measures, on known values


def test_words_ignore_case_punctuation_and_spacing():
    assert words("Root-cause:  the DISK,\nis full!") == ["root", "cause", "the", "disk", "is", "full"]
    assert words("snake_case x") == ["snake", "case", "x"]


def test_shingle_similarity_known_values():
    assert shingle_similarity("a b c d", "a b c e") == pytest.approx(1 / 3)  # {abc, bcd} vs {abc, bce}
    assert shingle_similarity("A, b; c", "a b c") == 1.0
    assert shingle_similarity("one two", "three four") == 0.0
    assert shingle_similarity(PROBLEMS[0], PROBLEMS[0].upper() + "!!") == 1.0


def test_overlap_counts_copied_5_grams_and_quotes_the_longest_run():
    source = "alpha beta gamma delta epsilon zeta eta"
    ov = overlap("x alpha beta gamma delta epsilon zeta y z", source)
    # 5 five-grams; 'alpha..epsilon' and 'beta..zeta' are in the source
    assert (ov.copied, ov.total) == (2, 5)
    assert ov.fraction == pytest.approx(0.4)
    assert ov.quote == "alpha beta gamma delta epsilon zeta"
    assert ov.from_examples == 0
    assert overlap("four words only here", source).total == 0
    full = overlap(EXAMPLE, SKILL_TEXT)
    assert full.fraction == 1.0 and full.from_examples == full.copied == full.total


def test_example_text_is_fences_and_example_sections():
    src = "# T\nintro\n```\ncode line\n```\n## Example\nex one\n### Detail\nex two\n## Rules\nrule\n"
    assert example_text(src).split("\n") == ["code line", "ex one", "ex two"]


def test_technique_names_include_the_multi_word_title_not_a_one_word_one(tmp_path):
    item = PluginItem("skill", "error-reports", tmp_path / "SKILL.md")
    assert technique_names(item, SKILL_TEXT) == ["SKILL.md", "error-reports", "error reports", "Error reports for web APIs"]
    assert technique_names(PluginItem("skill", "pdf", tmp_path / "SKILL.md"), "# Pdf\n") == ["SKILL.md"]


def test_an_instruction_naming_the_title_is_invalid(tmp_path):
    item = PluginItem("skill", "triage", tmp_path / "SKILL.md")
    reply = eval_reply().replace("Two pods keep", "Do an incident   triage: two pods keep")
    build_eval(reply, item, 1, source_text="# Triage\n")  # a one-word title is a topic word
    with pytest.raises(InvalidEval) as err:
        build_eval(reply, item, 1, source_text="# Incident triage\n")
    assert err.value.field == "tasks[3].instruction" and "'Incident triage'" in err.value.message


# ------------------------------------------------------------------ end to end


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    root = tmp_path / "api-plugin"
    (root / "skills" / "error-reports").mkdir(parents=True)
    (root / "skills" / "error-reports" / "SKILL.md").write_text(SKILL_TEXT)
    return root


def attempt(req: dict[str, Any]) -> int:
    return sum(1 for m in req["messages"] if m["role"] == "assistant")


def script(server: Any, *replies: str) -> None:
    server.add(Rule(reply=lambda req: replies[min(attempt(req), len(replies) - 1)], system_contains=GEN_MARK))


def gen_requests(server: Any) -> list[dict[str, Any]]:
    return [r for r in server.requests if GEN_MARK in r["messages"][0]["content"]]


COPYING = eval_reply(problems=(PROBLEMS[0], PROBLEMS[1], EXAMPLE, PROBLEMS[3], PROBLEMS[4]))
FOUR = eval_reply(problems=PROBLEMS[:4])
GOOD = eval_reply(name="fresh")


def test_a_case_copying_the_skills_example_is_regenerated_with_the_evidence(cli, byok_env, plugin, tmp_path):
    script(byok_env, COPYING, GOOD)
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, "--no-check", *MODEL])
    assert code == 0, stderr
    reqs = gen_requests(byok_env)
    assert len(reqs) == 2
    retry = reqs[1]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"] and retry[2]["content"] == COPYING
    assert "case 3 ('task-one-3') copies 100% of its word 5-grams (26 of 26) from SKILL.md's example" in retry[3]["content"]
    assert '"our payment service returns http 500' in retry[3]["content"] and "the bound is 30%" in retry[3]["content"]
    kept = (out / ".rejected" / "skills-error-reports-1.yaml").read_text()
    assert kept.startswith("# rejected: tasks: case 3 ('task-one-3') copies 100%") and kept.endswith(COPYING)
    assert load_eval(out / "skills" / "error-reports" / "eval.yaml").config.primary_task.name == "fresh"


def test_fewer_than_five_cases_are_regenerated_then_fail_the_item(cli, byok_env, plugin, tmp_path):
    script(byok_env, FOUR)
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, "--no-check", "--check-retries", "2", *MODEL])
    assert code == 30
    reqs = gen_requests(byok_env)
    assert len(reqs) == 3  # the first reply and two regenerations
    assert "4 distinct cases; write at least 5 tasks" in reqs[1]["messages"][-1]["content"]
    assert stderr.splitlines()[0] == (
        "error: api-plugin/skills/error-reports: tasks: 4 distinct cases; write at least 5 tasks, each a different "
        "realistic problem (different input material and situation) (after 2 regenerations; nothing written)"
    )
    assert not (out / "skills").exists()
    assert len(list((out / ".rejected").iterdir())) == 3
    assert "Generated 0 of 1 eval" in stdout


def test_a_single_task_reply_is_one_case(cli, byok_env, plugin, tmp_path):
    single = yaml.safe_load(GOOD)
    single["task"] = single.pop("tasks")[0]
    script(byok_env, yaml.safe_dump(single, sort_keys=False), GOOD)
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", tmp_path / "out", "--no-check", *MODEL])
    assert code == 0, stderr
    assert "1 distinct case; write at least 5" in gen_requests(byok_env)[1]["messages"][-1]["content"]


def test_near_duplicates_count_once(cli, byok_env, plugin, tmp_path):
    twin = PROBLEMS[0].replace("What went wrong?", "What broke?")
    assert shingle_similarity(twin, PROBLEMS[0]) >= 0.6
    six = eval_reply(problems=(*PROBLEMS, twin))  # five distinct cases and a near-duplicate: kept without it
    five = eval_reply(problems=(*PROBLEMS[:4], twin))  # only four distinct: regenerated
    script(byok_env, five, six)
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, "--no-check", *MODEL])
    assert code == 0, stderr
    retry = gen_requests(byok_env)[1]["messages"][-1]["content"]
    assert "4 distinct cases, after 1 near-duplicate counted once" in retry
    written = load_eval(out / "skills" / "error-reports" / "eval.yaml").config.run_tasks()
    assert [t.instruction.strip() for t in written] == list(PROBLEMS)
    assert "note: api-plugin/skills/error-reports: case 6 ('task-one-6') repeats case 1 ('task-one')" in stderr


def test_the_written_eval_runs_its_cases_round_robin(cli, byok_env, plugin, tmp_path):
    script(byok_env, GOOD)
    byok_env.add(
        Rule(reply="Problem: the issuer is slow\nFix: answer 503", system_contains="# Error reports", judge=False),
        Rule(reply="Sorry about that.", system_contains="You are a helpful assistant.", judge=False),
    )
    out = tmp_path / "evals"
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, "--no-check", *MODEL])
    assert code == 0, stderr
    path = out / "skills" / "error-reports" / "eval.yaml"
    assert len(load_eval(path).config.run_tasks()) == 5
    runs = tmp_path / "runs"
    code, _, stderr = cli(["eval", path, "--trials", "2", "--output", runs, *MODEL])
    assert code == 0, stderr
    item = read_json(next(runs.rglob("*.json")))["items"][0]
    names = ["fresh", "fresh-2", "fresh-3", "fresh-4", "fresh-5"]
    for arm in ("with_arm", "without_arm"):
        assert [t["case"] for t in item[arm]["trials"]] == names * 2  # trial i runs case i mod 5
    assert item["stats"]["cases"]["count"] == 5 and item["stats"]["cases"]["wins"] == 5 and not any("need 5" in r for r in item["stats"]["verdict_reasons"])
    prompts = [r["messages"][-1]["content"].strip() for r in byok_env.trial_requests() if "# Error reports" in r["messages"][0]["content"]]
    assert prompts == list(PROBLEMS) * 2
