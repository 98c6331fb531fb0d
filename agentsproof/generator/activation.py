"""eval-generate's activation suites: for every skill, prompts that should and should not
load it, written by the model and checked like tasks.

The model gets the skill's name and description and its sibling skills' names and
descriptions (the territory a near-miss is taken from). The reply is checked:

- it parses as ``{should: [...], should_not: [...]}`` (:class:`ActivationConfig`);
- at least :data:`MIN_SHOULD` distinct should prompts, with every should type (explicit,
  implicit, contextual) among them, and at least :data:`MIN_SHOULD_NOT` distinct should-not
  prompts, at least half of them near-misses when the skill has siblings;
- near-duplicates (word-shingle similarity ≥ the tasks' bound) count once, and only the
  first is written;
- no prompt copies the description (the tasks' copy measure, on word 4-grams).

A reply that fails goes back once per ``--check-retries`` with the problem; a suite still
failing is left out (the eval is written without it) and the output says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentsproof.formats.activation_config import ActivationConfig
from agentsproof.generator.cases import DUPLICATE_BOUND, copies, overlap, shingle_similarity
from agentsproof.model.activation import SHOULD_TYPES
from agentsproof.model.results import Usage

if TYPE_CHECKING:
    from agentsproof.llm.base import LLMClient

MIN_SHOULD = 10
MIN_SHOULD_NOT = 10
COPY_NGRAM = 4
MARKER = "ACTIVATION_SUITE"
"""Names the request (the first line of its user message)."""


@dataclass
class SuiteOutcome:
    """What generating one skill's activation suite gave: the suite or the last problem, calls made and tokens used."""

    config: ActivationConfig | None = None
    problem: str | None = None
    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    dropped: int = 0
    """Near-duplicate prompts left out."""


def _activation_request(name: str, description: str, siblings: list[tuple[str, str]]) -> str:
    others = "\n".join(f"- {n}: {d}" for n, d in siblings) or "- (none: this plugin has one skill)"
    return (
        f"{MARKER}: write the activation suite of the skill {name!r}.\n\n"
        f"Its description (what an agent sees when it decides whether to load it):\n  {description}\n\n"
        f"The other skills installed beside it:\n{others}\n\n"
        f"Write at least {MIN_SHOULD} prompts a user might send that SHOULD load this skill — some explicit (they name "
        "the skill), some implicit (they describe its task in their own words), some contextual (the situation makes it "
        f"the right skill) — and at least {MIN_SHOULD_NOT} that SHOULD NOT: most of them near-misses from the other "
        "skills' territory or just outside this one, a few negatives (unrelated). Every prompt different; none may reuse "
        "the description's wording.\n\n"
        "Reply with YAML only:\n"
        'should:\n  - {prompt: "...", type: explicit|implicit|contextual}\n'
        'should_not:\n  - {prompt: "...", type: near-miss|negative}\n'
    )


def _distinct(entries: list[Any]) -> tuple[list[Any], int]:
    kept: list[Any] = []
    for e in entries:
        if all(shingle_similarity(e.prompt, k.prompt) < DUPLICATE_BOUND for k in kept):
            kept.append(e)
    return kept, len(entries) - len(kept)


def review_suite(cfg: ActivationConfig, description: str, has_siblings: bool) -> tuple[ActivationConfig | None, str | None, int]:
    """(the suite to write with near-duplicates dropped, the problem or None, how many dropped)."""
    should, d1 = _distinct(cfg.should)
    should_not, d2 = _distinct(cfg.should_not)
    problems = []
    if len(should) < MIN_SHOULD:
        problems.append(f"{len(should)} distinct should prompts (need {MIN_SHOULD}; near-duplicates count once)")
    missing = [t for t in SHOULD_TYPES if not any((e.type or "implicit") == t for e in should)]
    if missing:
        problems.append(f"no {' or '.join(missing)} should prompt")
    if len(should_not) < MIN_SHOULD_NOT:
        problems.append(f"{len(should_not)} distinct should_not prompts (need {MIN_SHOULD_NOT})")
    near = sum(1 for e in should_not if e.type == "near-miss")
    if has_siblings and near * 2 < len(should_not):
        problems.append(f"only {near} of {len(should_not)} should_not prompts are near-misses (need at least half)")
    copied = [e.prompt for e in should + should_not if copies(overlap(e.prompt, description, COPY_NGRAM))]
    if copied:
        problems.append(f"{len(copied)} prompt(s) copy the description, e.g. {copied[0][:80]!r}")
    if problems:
        return None, "; ".join(problems), d1 + d2
    return cfg.model_copy(update={"should": should, "should_not": should_not}), None, d1 + d2


def _parse_suite(text: str) -> tuple[ActivationConfig | None, str | None]:
    """(the suite, None) from the model's YAML reply, or (None, why it is not one)."""
    import yaml
    from pydantic import ValidationError

    from agentsproof.core.validation import format_validation_error
    from agentsproof.generator.validate import extract_yaml

    try:
        data = yaml.safe_load(extract_yaml(text))
    except yaml.YAMLError as exc:
        return None, f"not YAML: {' '.join(str(exc).split())[:200]}"
    if isinstance(data, dict) and isinstance(data.get("activation"), dict):
        data = data["activation"]
    if not isinstance(data, dict):
        return None, "expected a mapping with 'should' and 'should_not'"
    data = {k: v for k, v in data.items() if k in ("should", "should_not")}
    try:
        return ActivationConfig.model_validate(data), None
    except ValidationError as exc:
        where, msg = format_validation_error(exc, ())
        return None, f"{where}: {msg}"


def dump_suite(cfg: ActivationConfig) -> str:
    """The ``activation:`` block to append to an eval.yaml."""
    import yaml

    data = {
        "should": [{"prompt": e.prompt, "type": e.type or "implicit"} for e in cfg.should],
        "should_not": [{"prompt": e.prompt, "type": e.type or "negative"} for e in cfg.should_not],
    }
    body = yaml.safe_dump({"activation": data}, sort_keys=False, allow_unicode=True, width=120)
    return "# activation: generated; checked for count, variety, near-duplicates and copies of the description\n" + body


async def generate_suite(
    client: LLMClient, model: str, name: str, description: str, siblings: list[tuple[str, str]], retries: int, timeout: float
) -> SuiteOutcome:
    """Ask, check, and ask again with the problem (``retries`` times); never raises for a provider failure."""
    from agentsproof.llm.base import ChatRequest, LLMError

    out = SuiteOutcome()
    messages = [
        {"role": "system", "content": "You write test prompts for AI agent skills. Reply with YAML only."},
        {"role": "user", "content": _activation_request(name, description, siblings)},
    ]
    for _ in range(retries + 1):
        try:
            resp = await client.complete(ChatRequest(messages=list(messages), model=model, temperature=0.2, timeout=timeout))
        except LLMError as err:
            out.problem = f"provider: {err}"
            return out
        out.calls += 1
        out.usage = out.usage + resp.usage
        text = resp.text if isinstance(resp.text, str) else ""
        cfg, problem = _parse_suite(text)
        if cfg is not None:
            cfg, problem, out.dropped = review_suite(cfg, description, bool(siblings))
        if cfg is not None:
            out.config, out.problem = cfg, None
            return out
        out.problem = problem
        messages += [
            {"role": "assistant", "content": text},
            {"role": "user", "content": f"That activation suite is not usable: {problem}. Send the complete corrected suite, YAML only."},
        ]
    return out
