"""Generator replies for the eval-generate tests: eval.yaml documents with five distinct tasks,
as an LLM following skills/suite-generator/SKILL.md writes them."""

from __future__ import annotations

import textwrap

PROBLEMS = (
    "Our deploy failed last night; here is the log. What went wrong?",
    "The nightly backup job stopped writing files on Tuesday. Why could that be?",
    "Checkout latency doubled after this morning's cache change. What happened?",
    "Two pods keep restarting with exit code 137 since the upgrade. Explain it to me.",
    "Users in Brazil get timeouts from the login service while everyone else is fine. What is going on?",
)
"""Five instructions that share no word 3-shingle with each other."""

GRADERS = """\
- type: deterministic
  checks:
    mustContain: ["Root cause:"]
    regexMatch: ['(?m)^Fix: \\S']
  weight: 0.7
- type: llm_rubric
  rubric: |
    Correct diagnosis (0-1).
  weight: 0.3
"""


def eval_reply(
    ref: str = "skill: SKILL.md",
    *,
    name: str = "task-one",
    trials: int = 1,
    problems: tuple[str, ...] | list[str] = PROBLEMS,
    graders: str = GRADERS,
    defaults: bool = True,
) -> str:
    """A valid eval.yaml reply with one task per problem (names ``name``, ``name-2``, …)."""
    head = f'version: "2"\n{ref}\n'
    if defaults:
        head += f"defaults:\n  trials: {trials}\n  timeout: 60\n  threshold: 0.7\n"
    tasks = []
    for i, problem in enumerate(problems):
        task_name = name if i == 0 else f"{name}-{i + 1}"
        tasks.append(
            f"  - name: {task_name}\n    instruction: |\n{textwrap.indent(problem.strip(), ' ' * 6)}\n"
            f"    graders:\n{textwrap.indent(graders, ' ' * 6)}"
        )
    return head + "tasks:\n" + "".join(tasks)
