"""agentv's prompt template script (``prompt: {command: [bun, run, x.ts], config}`` on an
``llm-rubric``), end to end on the scripted server: the program gets agentv's payload on stdin
(``definePromptTemplate`` of our SDK reads it, ``ctx.config`` the entry's config) and prints the
judge prompt, which the judge reads; a command that fails errors that grader with agentv's
reason. The files are copies of agentv's examples/features/prompt-template-sdk
(tests/data/agentv-bun: EntityProcess/agentv, MIT, see the LICENSE there)."""

from __future__ import annotations

import shutil
from pathlib import Path


from conftest import Rule, only_report, run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "agentv-bun" / "prompt-template-sdk"
ANSWER_TS = "TypeScript adds static types."
ANSWER_ASYNC = "async/await waits on Promises."
FALLBACK = '{"reasoning": "fine", "score": 1, "evidence": "fine", "passed": true}'


def _run(byok_env, tmp_path: Path, suite: str) -> dict[str, dict]:
    root = tmp_path / "prompt-template-sdk"
    shutil.copytree(DATA, root)
    byok_env.add(Rule(reply=FALLBACK, judge=True))
    byok_env.add(Rule(reply='{"reasoning": "basic prompt seen", "score": 0.8}', user_contains="## Candidate Answer\n" + ANSWER_TS, judge=True))
    byok_env.add(Rule(reply='{"reasoning": "strict prompt seen", "score": 0.3}', user_contains="**Note:** Strict mode enabled", judge=True))
    byok_env.add(Rule(reply=ANSWER_TS, user_contains="TypeScript over JavaScript", judge=False))
    byok_env.add(Rule(reply=ANSWER_ASYNC, user_contains="async/await", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / suite, "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1, 30), err
    trials = {i["name"]: i["with_arm"]["trials"][0] for i in only_report(out)["items"]}
    return {name: t["graders"][0] for name, t in trials.items()}


def test_the_judge_reads_the_prompt_the_template_prints(bun, byok_env, tmp_path):
    graders = _run(byok_env, tmp_path, "evaluator.yaml")
    basic, strict = graders["prompt-template-basic"], graders["prompt-template-with-config"]
    assert not basic["errored"] and basic["score"] == 0.8, basic  # the template's prompt, with the answer in it
    assert not strict["errored"] and strict["score"] == 0.3, strict  # ctx.config.strictMode reached the template
    judged = [r for r in byok_env.requests if "Strict mode enabled" in str(r)]
    assert judged and "- Must mention Promises" in str(judged[0]) and "## Reference Answer" in str(judged[0])


def test_a_template_that_does_not_run_errors_its_grader(bun, byok_env, tmp_path):
    graders = _run(byok_env, tmp_path, "suite.yaml")  # agentv's own file names ../prompts/custom-grader.ts, which it lacks
    for g in graders.values():
        assert g["errored"] and "Prompt template execution failed" in g["error"], g


def test_convert_keeps_the_prompt_command():
    from agentsproof.grading.hooks import ConvertCase
    from agentsproof.grading.llm_rubric import LLMRubricGrader, to_agentevals
    from agentsproof.grading.script import ScriptGrader

    script = ScriptGrader(type="script", run=["bun", "run", "prompts/x.ts"], stdin="json", config={"strictMode": True})
    spec = LLMRubricGrader(type="llm_rubric", rubric="the judge prompt bun run prompts/x.ts writes", prompt_script=script)
    (entry,) = to_agentevals(spec, ConvertCase(where="graders[0]", skill="s", weight={}))
    assert entry == {"type": "llm-rubric", "prompt": {"command": ["bun", "run", "prompts/x.ts"], "config": {"strictMode": True}}}
