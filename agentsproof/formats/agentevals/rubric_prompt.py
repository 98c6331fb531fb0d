"""promptfoo's ``rubricPrompt`` on an ``llm-rubric`` assertion: the judge prompt template.

promptfoo loads it (``file://x.yaml|json|txt``, or the text itself), renders it with
``{{ output }}`` (the answer), ``{{ rubric }}`` (the assertion's value) and the test's vars
(a name with no value renders empty, as nunjucks does), and sends it to the grader; a list
of chat messages is sent as they are. Here the judge reads the rendered template as its
rubric — each message as ``role: content`` — with the answer shown after it, as every judge
prompt is, and scores it from 0 to 1 as promptfoo's ``{score, pass, reason}`` asks.
"""

from __future__ import annotations

import json
import re
from typing import Any

ANSWER = "(the assistant response, shown below)"
_NAME = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")


def _template(b: Any, where: str, raw: Any) -> Any:
    """The template as promptfoo reads it: a file's text (parsed when it is YAML or JSON), or the value itself."""
    from agentsproof.core.inputs import MAX_EVAL_FILE_BYTES, read_text
    from agentsproof.formats.agentevals.parse import attached

    if not isinstance(raw, str) or not raw.strip().startswith("file://"):
        return raw
    rel = raw.strip().removeprefix("file://")
    text = read_text(attached(b.src, where, rel, b.path), source=b.src, field=where, max_bytes=MAX_EVAL_FILE_BYTES, what="judge prompt")
    if rel.endswith((".yaml", ".yml", ".json")):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise b.err(where, f"{rel!r} is not valid YAML/JSON: {str(err).splitlines()[0]}") from None
    return text


def _text(b: Any, where: str, template: Any) -> str:
    if isinstance(template, str) and template.strip():
        text: str = template
        try:  # a JSON list of messages given as text
            template = json.loads(text)
        except ValueError:
            return text
    if isinstance(template, dict) and template.get("role"):
        template = [template]
    if isinstance(template, list) and template and all(isinstance(m, dict) and isinstance(m.get("content"), str) for m in template):
        return "\n\n".join(f"{m.get('role', 'user')}: {m['content']}" for m in template)
    if isinstance(template, str):
        return template
    raise b.err(where, "must be the judge prompt: its text, chat messages (role, content), or a file:// path to either")


def rubric_prompt(b: Any, where: str, entry: dict, rubric: str) -> str:
    """The judge's rubric for an ``llm-rubric`` with a ``rubricPrompt``: the template, rendered."""
    at = f"{where}.rubricPrompt"
    text = _text(b, at, _template(b, at, entry["rubricPrompt"]))
    values: dict[str, Any] = {**b.test.vars, "output": ANSWER, "rubric": rubric}

    def fill(m: re.Match[str]) -> str:
        value: Any = values
        for part in m.group(1).removeprefix("vars.").split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False) if value != "" else ""

    return _NAME.sub(fill, text)
