"""The messages eval-generate sends: the suite-generator system prompt and one request per item.

The system prompt is ``skills/suite-generator/SKILL.md``. In a source checkout that file
is read directly, so edits to it take effect at once; an installed package reads the copy
shipped as ``agentsproof/data/suite-generator.md`` (a test keeps the two identical).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from agentsproof.generator.plugin import PluginItem
from agentsproof.stats.cases import MIN_CASES

PACKAGED_PROMPT = "suite-generator.md"
REPO_PROMPT = Path("skills") / "suite-generator" / "SKILL.md"


def repo_prompt_path() -> Path:
    """Where the prompt lives in a source checkout (it may not exist in an installed package)."""
    return Path(__file__).resolve().parents[2] / REPO_PROMPT


def load_system_prompt() -> tuple[str, str]:
    """(prompt text, where it came from)."""
    repo = repo_prompt_path()
    if repo.is_file():
        return repo.read_text(encoding="utf-8"), str(repo)
    packaged = resources.files("agentsproof").joinpath("data", PACKAGED_PROMPT)
    return packaged.read_text(encoding="utf-8"), f"agentsproof/data/{PACKAGED_PROMPT} (packaged)"


AGENT_MODE = """\

This eval runs in a real agent ({target}) working in a fresh folder of its own, not in a
chat: it can read and write files and run commands there. Write tasks where the {kind}
must *act* (create or change files), and grade what it leaves behind:

- Give the input material as files: `seed_files:` on a task (or at the top level, for
  every task) maps relative paths to their text; they are in the agent's folder when it
  starts. The instruction may name those files.
- Grade the folder with `type: files` graders: `exists: [glob]`, `absent: [glob]`,
  `mustContain: {{path: [substring]}}`, `mustNotContain: {{path: [substring]}}`,
  `regexMatch: {{path: [regex]}}`, `json: [glob]`, `weight`. A `type: script` grader
  (`run: [python3, -c, "..."]`, exit 0 passes, run in the agent's folder) may check more.
- Keep an `llm_rubric` for what files cannot show; `deterministic` checks grade the
  agent's final message. Do not write `execution:` yourself: it is set to {target}.
"""


def item_request(item: PluginItem, source_text: str, trials: int, target: str | None = None) -> str:
    """The user message asking for one item's eval.yaml (``target``: an agent eval for it)."""
    agent = AGENT_MODE.format(target=target, kind=item.kind) if target else ""
    return (
        f"Write the eval.yaml for this {item.kind}.\n\n"
        f"- {item.kind} name: {item.name}\n"
        f"- reference line to use: `{item.kind}: {item.file_name}`\n"
        f"- defaults.trials: {trials}\n"
        f"- tasks: at least {MIN_CASES}, each a different problem\n"
        f"{agent}\n"
        f"The {item.kind} file ({item.source.name}) is between the markers below.\n\n"
        f"<<<{item.kind.upper()}_FILE\n{source_text.rstrip()}\n{item.kind.upper()}_FILE>>>\n\n"
        "Reply with the YAML document only."
    )


def correction_request(field: str, message: str) -> str:
    """The follow-up message after a reply that failed validation."""
    return (
        f"That eval.yaml does not pass validation:\n  {field}: {message}\nSend the corrected, complete eval.yaml again: the YAML document only, no commentary."
    )


def cases_feedback(problem: str) -> str:
    """The follow-up after a reply whose cases are too few, near-duplicates or copied from the file."""
    return (
        f"That eval's cases cannot give a grade that generalises: {problem.rstrip('.')}.\n"
        f"Write at least {MIN_CASES} tasks, each a different realistic problem in the user's own words with its own "
        "input material; do not reuse the file's examples or each other's wording. Send the complete eval.yaml "
        "again: the YAML document only."
    )
