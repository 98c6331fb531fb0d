"""``agentsproof tune-description SKILL_DIR``: better ``description:`` lines, proposed by a
model and kept only when held-out prompts say so.

1. The skill's activation suite (its eval.yaml ``activation:``) is split, per kind (should /
   should-not), into a **train** and a **held-out** part (``--holdout``, seeded).
2. Each round the model sees the current description, the skill's body and the train
   prompts it got wrong (never a held-out prompt) and proposes ``--candidates`` new
   descriptions. Each candidate runs on the train prompts with every skill of the plugin
   installed (the same activation trials as ``agentsproof activation``); the best by
   train F1 then runs on the held-out prompts.
3. It is kept when its held-out accuracy beats the description kept so far; the first
   round that does not improve the held-out score stops the search (``--rounds`` at most).
4. The report compares the kept description with the original on the held-out prompts:
   the paired gain in accuracy with its 95 % interval
   (:func:`agentsproof.stats.activation.paired_gain`). Only an interval above 0 is a
   held-out gain; ``--write`` then replaces the ``description:`` line of SKILL.md, and
   nothing else. Without ``--write`` no file changes.

The held-out score also decides when to stop, so it has seen up to ``--rounds``
candidates: the smoothed interval is the guard against calling noise a gain.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.commands.activation import ActivationOptions, build_target
from agentsproof.core.errors import InputError, LLMError
from agentsproof.core.scrub import clip
from agentsproof.model.activation import ActivationPrompt, ActivationSuite, ActivationTrial
from agentsproof.model.items import SkillFile

if TYPE_CHECKING:
    from agentsproof.targets.base import Target

MARKER = "TUNE_DESCRIPTION"
"""Names the proposal request (the first words of its user message)."""
MAX_DESCRIPTION_CHARS = 1024
BODY_CHARS = 4000
PROPOSAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"descriptions": {"type": "array", "items": {"type": "string"}}},
    "required": ["descriptions"],
}


@dataclass
class TuneOptions:
    """What ``agentsproof tune`` does: how trials run, rounds, candidates per round, the held-out share and its seed."""

    run: ActivationOptions = field(default_factory=ActivationOptions)
    rounds: int = 3
    candidates: int = 3
    holdout: float = 0.4
    seed: int = 0
    write: bool = False


@dataclass
class Scored:
    """A candidate description and how it did: F1 on the train prompts, the share correct per held-out prompt."""

    description: str
    train_f1: float | None = None
    heldout: dict[tuple[str, bool], float] = field(default_factory=dict)
    round: int = 0

    @property
    def heldout_accuracy(self) -> float | None:
        """The mean share of correct runs over the held-out prompts (0..1); None before they are run."""
        return sum(self.heldout.values()) / len(self.heldout) if self.heldout else None


@dataclass
class TuneResult:
    """A tuning of one skill: the original and the best description, every one tried and the held-out gain."""

    skill: str
    path: Path
    original: Scored
    best: Scored
    tried: list[Scored]
    train: list[ActivationPrompt]
    heldout: list[ActivationPrompt]
    gain: float = 0.0
    gain_ci: tuple[float, float] | None = None
    verdict: str = "no held-out gain"
    written: bool = False
    stopped: str = ""


def split(prompts: list[ActivationPrompt], share: float, seed: int) -> tuple[list[ActivationPrompt], list[ActivationPrompt]]:
    """(train, held-out): per kind, a seeded shuffle; at least one of each kind in each part when it has two."""
    train: list[ActivationPrompt] = []
    held: list[ActivationPrompt] = []
    rng = random.Random(seed)
    for expect in (True, False):
        group = [p for p in prompts if p.expect == expect]
        rng.shuffle(group)
        n = round(len(group) * share)
        if len(group) >= 2:
            n = min(max(n, 1), len(group) - 1)
        held += group[:n]
        train += group[n:]
    return train, held


def with_description(skill: SkillFile, description: str) -> SkillFile:
    """The skill with its front matter's ``description:`` replaced (added when missing)."""
    import dataclasses

    return dataclasses.replace(skill, text=replace_description(skill.text, description))


_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(\r?\n|\Z)", re.S)


def replace_description(text: str, description: str) -> str:
    """``text`` with its front matter's ``description:`` set to ``description`` (front matter added when missing)."""
    value = json.dumps(description, ensure_ascii=False)  # a JSON string is a YAML scalar
    m = _FRONT.match(text)
    if not m:
        return f"---\ndescription: {value}\n---\n{text}"
    lines = m.group(1).split("\n")
    out, i, done = [], 0, False
    while i < len(lines):
        line = lines[i]
        if not done and re.match(r"description\s*:", line):
            out.append(f"description: {value}")
            i += 1
            while i < len(lines) and (lines[i].startswith((" ", "\t")) or not lines[i].strip()):
                i += 1  # a folded or multi-line value
            done = True
            continue
        out.append(line)
        i += 1
    if not done:
        out.append(f"description: {value}")
    return text[: m.start(1)] + "\n".join(out) + text[m.end(1) :]


def _proposal_request(name: str, current: str, body: str, missed: list[str], fired: list[str], k: int) -> str:
    lines = [
        f"{MARKER}: propose {k} better descriptions for the agent skill {name!r}.",
        "",
        "An agent reads only a skill's name and description to decide whether to load it. The current description:",
        f"  {current}",
        "",
        "The skill's instructions (for what it really does):",
        body[:BODY_CHARS],
        "",
    ]
    if missed:
        lines += ["Prompts that should have loaded it but did not:", *[f"- {p}" for p in missed], ""]
    if fired:
        lines += ["Prompts that loaded it but should not have:", *[f"- {p}" for p in fired], ""]
    lines += [
        f"Write {k} different descriptions, each one or two sentences, at most {MAX_DESCRIPTION_CHARS} characters, that say "
        "what the skill does and when to use it (and when not), in words users use. Do not list the example prompts.",
        'Reply with JSON only: {"descriptions": ["...", "..."]}',
    ]
    return "\n".join(lines)


MAX_REPLY_CHARS = 200_000
"""A proposal reply longer than this is not read (a few descriptions fit in far less)."""
HOLDOUT_RANGE = (0.1, 0.9)


def clean_description(text: str) -> str | None:
    """A proposed description as it may be tried and written into SKILL.md: on one line,
    without control or format characters (NUL, BEL, ESC, bidi overrides) or lone
    surrogates, at most ``MAX_DESCRIPTION_CHARS``; None when nothing is left, or when the
    proposal is far over the cap (not a description at all)."""
    import unicodedata

    if len(text) > 4 * MAX_DESCRIPTION_CHARS:
        return None
    kept = "".join(" " if ch.isspace() else ch for ch in text if ch.isspace() or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn"))
    one = " ".join(kept.split())[:MAX_DESCRIPTION_CHARS].strip()
    return one or None


def check_options(opts: TuneOptions) -> None:
    """InputError naming the flag for a value click's ranges let through (NaN compares
    false with both ends of a range)."""
    import math

    lo, hi = HOLDOUT_RANGE
    if not (isinstance(opts.holdout, (int, float)) and math.isfinite(opts.holdout) and lo <= opts.holdout <= hi):
        raise InputError("command line", "--holdout", f"{opts.holdout!r} is not a number from {lo} to {hi} (the share of prompts held out)")
    if not math.isfinite(opts.run.timeout) or opts.run.timeout <= 0:
        raise InputError("command line", "--timeout", f"{opts.run.timeout!r} is not a positive number of seconds")


def parse_proposals(text: str) -> list[str]:
    """The descriptions of a proposal reply, each cleaned (:func:`clean_description`);
    a reply over ``MAX_REPLY_CHARS`` proposes nothing."""
    if not isinstance(text, str) or len(text) > MAX_REPLY_CHARS:
        return []
    try:
        obj = json.loads(text)
    except ValueError:
        found = re.search(r"\{.*\}", text or "", re.S)
        try:
            obj = json.loads(found.group(0)) if found else None
        except ValueError:
            obj = None
    items = obj.get("descriptions") if isinstance(obj, dict) else None
    if not isinstance(items, list):
        return []
    out = []
    for d in items:
        one = clean_description(d) if isinstance(d, str) else None
        if one is not None and one not in out:
            out.append(one)
    return out


def find_suite(skill_dir: Path) -> tuple[ActivationSuite, list[SkillFile], Path]:
    """The skill's suite, every skill of its plugin (this one included), and its SKILL.md."""
    from agentsproof.formats.activation import _eval_files, eval_suite_yaml, eval_yaml_suite, plugin_skills_for
    from agentsproof.formats.agentevals.items import is_eval_yaml

    folder = Path(skill_dir)
    if folder.is_file():  # skill-creator's trigger evals, as run_loop.py --eval-set takes them
        return _file_suite(folder)
    source = folder / "SKILL.md"
    if not source.is_file():
        raise InputError(str(folder), "SKILL_DIR", "has no SKILL.md (give a skill's folder)")
    skills = plugin_skills_for(source)
    if skills is None:
        from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_text
        from agentsproof.formats.eval_yaml.items import skill_file

        text = read_text(source, source=display(source), field=None, max_bytes=MAX_SOURCE_FILE_BYTES, what="skill file")
        skills = [skill_file(folder.resolve().name, "skill", text, source)]
    skills = [s for s in skills if s.kind == "skill"]
    own = next(s for s in skills if Path(s.source_path or "").resolve() == source.resolve())
    suite = None
    for path in _eval_files(folder):
        found = eval_suite_yaml(path, own) if is_eval_yaml(path) else eval_yaml_suite(path, own)
        if found is not None:
            suite = found
            break
    if suite is None:
        from agentsproof.formats.skill_creator import read_trigger_file

        for path in sorted([*folder.glob("*.json"), *(folder / "evals").glob("*.json")]):
            if read_trigger_file(path) is not None:  # skill-creator's trigger evals beside the skill
                return _file_suite(path)
        raise InputError(
            str(folder),
            None,
            "has no activation suite (eval.yaml 'activation:', or skill-creator trigger evals in evals/*.json); write one, or run eval-generate",
        )
    if len(suite.should) < 2 or len(suite.should_not) < 2:
        raise InputError(suite.source, "activation", "tuning needs at least 2 should and 2 should_not prompts (a train and a held-out part of each)")
    return suite, skills, source


def _file_suite(path: Path) -> tuple[ActivationSuite, list[SkillFile], Path]:
    """A trigger-eval file's suite, its plugin's skills and the SKILL.md it tunes."""
    from agentsproof.formats.trigger_evals import trigger_skill, trigger_suites

    plugin = trigger_suites(path)
    suite = plugin.suites[0]
    if len(suite.should) < 2 or len(suite.should_not) < 2:
        raise InputError(suite.source, None, "tuning needs at least 2 should_trigger: true and 2 false queries (a train and a held-out part of each)")
    return suite, plugin.skills, trigger_skill(path)


def _description_of(skill: SkillFile) -> str:
    from agentsproof.targets.chat.skill_choice import description_of as of

    return of(skill)


async def _trials(
    target: Target, skills: list[SkillFile], own: SkillFile, description: str, prompts: list[ActivationPrompt], opts: ActivationOptions
) -> tuple[ActivationSuite, list[ActivationTrial]]:
    from agentsproof.executor.activation import run_activation

    changed = with_description(own, description)
    installed = [changed if s.name == own.name else s for s in skills]
    suite = ActivationSuite(skill=changed, prompts=prompts)
    trials = await run_activation(target, [suite], installed, trials=opts.trials, parallel=opts.parallel, timeout=opts.timeout)
    return suite, trials


async def _propose(client: Any, model: str, request: str, timeout: float) -> list[str]:
    from agentsproof.llm.base import ChatRequest

    resp = await client.complete(
        ChatRequest(
            messages=[
                {"role": "system", "content": "You improve how agent skills describe themselves. Reply with JSON only."},
                {"role": "user", "content": request},
            ],
            model=model,
            temperature=0.7,
            json_schema=PROPOSAL_SCHEMA,
            timeout=timeout,
        )
    )
    return parse_proposals(resp.text if isinstance(resp.text, str) else "")


def tune_description(skill_dir: Path, opts: TuneOptions) -> TuneResult:
    """Search better descriptions for the skill in ``skill_dir``, judged on held-out prompts; SKILL.md is rewritten only with ``opts.write`` and a held-out gain."""
    from agentsproof.executor.session import prepare_provider, run_sync
    from agentsproof.model.skillfolder import split_frontmatter
    from agentsproof.stats.activation import correct_share, paired_gain, score

    check_options(opts)
    suite, skills, source = find_suite(skill_dir)
    own = suite.skill
    train, held = split(suite.prompts, opts.holdout, opts.seed)
    target, target_client, _ = build_target(opts.run, source)
    prepared = None if target_client is not None else prepare_provider(opts.run.provider, opts.run.model, None)
    client = target_client if target_client is not None else prepared.client  # type: ignore[union-attr]
    model = getattr(target, "model", None) if target_client is not None else prepared.model  # type: ignore[union-attr]
    original = Scored(_description_of(own))
    tried: list[Scored] = []

    async def evaluate(s: Scored, on_train: bool = True) -> None:
        if on_train:
            tsuite, ttrials = await _trials(target, skills, own, s.description, train, opts.run)
            s.train_f1 = score([tsuite], ttrials).skills[0].f1
        hsuite, htrials = await _trials(target, skills, own, s.description, held, opts.run)
        s.heldout = correct_share(htrials, hsuite.skill.name)

    async def go() -> tuple[Scored, str]:
        try:
            await evaluate(original)
            best, stopped = original, f"{opts.rounds} rounds"
            for r in range(1, opts.rounds + 1):
                tsuite, ttrials = await _trials(target, skills, own, best.description, train, opts.run)
                name = tsuite.skill.name
                wrong = [t for t in ttrials if t.fired is not None and (name in t.fired) != t.prompt.expect]
                missed = sorted({t.prompt.text for t in wrong if t.prompt.expect})
                fired = sorted({t.prompt.text for t in wrong if not t.prompt.expect})
                body = split_frontmatter(own.text)[1]
                request = _proposal_request(own.name, best.description, body, missed, fired, opts.candidates)
                try:
                    proposed = await _propose(client, str(model or ""), request, opts.run.timeout)
                except LLMError as err:  # the proposer failed (down, a reply over the size cap): the search stops here
                    return best, f"round {r}: the proposal call failed: {clip(str(err), 300)}"
                proposals = [p for p in proposed if p not in {s.description for s in [original, *tried]}][: opts.candidates]
                if not proposals:
                    return best, f"round {r}: the model proposed nothing new"
                scored = []
                for p in proposals:
                    s = Scored(p, round=r)
                    ps, pt = await _trials(target, skills, own, p, train, opts.run)
                    s.train_f1 = score([ps], pt).skills[0].f1
                    scored.append(s)
                tried.extend(scored)
                pick = max(scored, key=lambda s: s.train_f1 if s.train_f1 is not None else -1.0)
                await evaluate(pick, on_train=False)
                if (pick.heldout_accuracy or 0.0) <= (best.heldout_accuracy or 0.0) + 1e-12:
                    stopped = f"round {r}: the held-out score stopped improving"
                    return best, stopped
                best = pick
            return best, stopped
        finally:
            await target.aclose()
            if prepared is not None and prepared.client is not None:
                await prepared.client.aclose()
            elif target_client is not None:
                await target_client.aclose()

    best, stopped = run_sync(go())
    keys = [(p.text, p.expect) for p in held if (p.text, p.expect) in original.heldout and (p.text, p.expect) in best.heldout]
    gain, ci = paired_gain([original.heldout[k] for k in keys], [best.heldout[k] for k in keys])
    result = TuneResult(
        skill=own.name, path=source, original=original, best=best, tried=tried, train=train, heldout=held, gain=gain, gain_ci=ci, stopped=stopped
    )
    if best is not original and ci is not None and ci[0] > 0:
        result.verdict = "held-out gain"
    elif best is not original and ci is not None and ci[1] < 0:
        result.verdict = "held-out loss"
    if opts.write and result.verdict == "held-out gain":
        _write(source, best.description)
        result.written = True
    return result


def _write(source: Path, description: str) -> None:
    """Replace the description line of SKILL.md in place (atomically, keeping the file's
    mode), through :mod:`agentsproof.core.safepath`: the skill's folder and SKILL.md are
    opened without following a link, so a skill folder (or SKILL.md) that is a symlink —
    whose SKILL.md lies outside the plugin — is refused, not rewritten."""
    import os
    import stat

    from agentsproof.core import safepath
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display

    folder = Path(os.path.abspath(source.parent))  # absolute, links not resolved: the folder itself is checked
    try:
        fd = safepath.open_dir(folder.parent, [folder.name], create=False)
        try:
            st = os.stat("SKILL.md", dir_fd=fd, follow_symlinks=False)
        finally:
            os.close(fd)
        if not stat.S_ISREG(st.st_mode):
            raise safepath.UnsafePath(f"{display(source)} is a symlink (or not a regular file); refusing to write through it")
        text = safepath.read_file(source, MAX_SOURCE_FILE_BYTES).decode("utf-8")
        safepath.write_file(folder.parent, f"{folder.name}/SKILL.md", replace_description(text, description).encode("utf-8"), mode=stat.S_IMODE(st.st_mode))
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(display(source), "--write", f"not written: {getattr(err, 'strerror', None) or err}") from None


def render(result: TuneResult) -> str:
    """The Markdown report of a tuning run."""
    from agentsproof.core.mdtext import md_text

    def pct(v: float | None) -> str:
        return "—" if v is None else f"{v:.2f}"

    def cell(description: str) -> str:  # a "|" in it would end the cell
        return md_text(description, limit=MAX_DESCRIPTION_CHARS + 1)

    lines = [
        f"# tune-description: {result.skill}",
        "",
        f"{len(result.train)} train prompts, {len(result.heldout)} held-out prompts; stopped: {result.stopped}.",
        "",
        "| description | round | train F1 | held-out accuracy |",
        "|---|---|---|---|",
        f"| (original) {cell(result.original.description)} | 0 | {pct(result.original.train_f1)} | {pct(result.original.heldout_accuracy)} |",
    ]
    for s in result.tried:
        mark = " **(kept)**" if s is result.best else ""
        lines.append(f"| {cell(s.description)}{mark} | {s.round} | {pct(s.train_f1)} | {pct(s.heldout_accuracy)} |")
    ci = f" [{result.gain_ci[0]:+.2f}, {result.gain_ci[1]:+.2f}]" if result.gain_ci else ""
    lines += ["", f"**Verdict: {result.verdict}** — held-out accuracy, kept − original: {result.gain:+.2f}{ci} (95 %, paired over prompts)."]
    if result.best is not result.original:
        lines += ["", "Proposed:", "", f"    description: {json.dumps(result.best.description, ensure_ascii=False)}"]
    if result.written:
        lines += ["", f"Wrote the new description to {result.path}."]
    elif result.verdict == "held-out gain":
        lines += ["", "Not written: pass --write to replace the description line of SKILL.md."]
    return "\n".join(lines)
