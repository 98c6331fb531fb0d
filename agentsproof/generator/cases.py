"""The cases of a generated eval: enough of them, distinct, and not copied from the skill.

A generated eval.yaml is a ``tasks:`` list; each task is a case of the item (see
docs/statistics.md, *Cases*). :func:`review_cases` applies three measured rules:

- **Near-duplicates count once.** Two instructions whose word 3-shingles have a Jaccard
  similarity of at least :data:`DUPLICATE_BOUND` are the same case: the later one is
  dropped (and named in a note).
- **No copying.** A case whose instruction shares more than :data:`COPY_BOUND` of its word
  5-grams with the skill/agent file (and at least :data:`COPY_MIN_NGRAMS` of them) copies
  the file — usually its example — instead of posing a new problem: the reply is rejected.
  Only instructions are measured: checks and rubrics are *meant* to quote the markers the
  file prescribes.
- **At least** :data:`MIN_CASES` distinct cases (the statistics' ``underpowered`` bound).

Words are compared after normalising: lower case, every run of characters other than
letters and digits is one separator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agentsproof.formats.eval_yaml.models import SkillEvalConfig
from agentsproof.stats.cases import MIN_CASES

SHINGLE = 3
"""Words per shingle for the near-duplicate measure."""
DUPLICATE_BOUND = 0.6
"""Jaccard similarity of two instructions' word 3-shingles at or above which they are one case."""
NGRAM = 5
"""Words per n-gram for the copy measure."""
COPY_BOUND = 0.3
"""A case copies the file when more than this share of its instruction's word 5-grams occur in the file ..."""
COPY_MIN_NGRAMS = 3
"""... and at least this many of them (one shared phrase in a short instruction is not a copy)."""
QUOTE_WORDS = 14

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*)$")


def words(text: str) -> list[str]:
    """Lower-case words: runs of letters and digits (punctuation, markup and spacing are separators)."""
    return _WORD.findall(text.lower())


def _ngrams(ws: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(ws[i : i + n]) for i in range(len(ws) - n + 1)]


def shingle_similarity(a: str, b: str, n: int = SHINGLE) -> float:
    """Jaccard similarity of the two texts' word n-shingles (texts shorter than n: one shingle of all their words)."""
    wa, wb = words(a), words(b)
    sa = set(_ngrams(wa, n)) or {tuple(wa)}
    sb = set(_ngrams(wb, n)) or {tuple(wb)}
    return len(sa & sb) / len(sa | sb)


@dataclass
class Overlap:
    """How much of an instruction is copied from the source, counted in word n-grams."""

    copied: int
    """The instruction's word n-grams (counted with repeats) that also occur in the source."""
    total: int
    from_examples: int
    """Of the copied n-grams, those that occur in the source's examples."""
    quote: str
    """The longest copied run of words, shortened."""

    @property
    def fraction(self) -> float:
        """The share of the instruction's n-grams that are copied (0..1; 0 for an instruction shorter than n words)."""
        return self.copied / self.total if self.total else 0.0


def example_text(source: str) -> str:
    """The source's examples: fenced code blocks and sections whose heading says 'example'."""
    out: list[str] = []
    fence: str | None = None
    example_level = 0
    for line in source.splitlines():
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1) == fence:
                fence = None
            else:
                out.append(line)
            continue
        if m:
            fence = m.group(1)
            continue
        h = _HEADING.match(line)
        if h:
            level = len(h.group(1))
            if example_level and level <= example_level:
                example_level = 0
            if not example_level and "example" in h.group(2).lower():
                example_level = level
            continue
        if example_level:
            out.append(line)
    return "\n".join(out)


def overlap(text: str, source: str, n: int = NGRAM) -> Overlap:
    """How many of ``text``'s word n-grams occur in ``source`` (and in its examples)."""
    ws = words(text)
    grams = _ngrams(ws, n)
    in_source = set(_ngrams(words(source), n))
    in_examples = set(_ngrams(words(example_text(source)), n))
    hits = [g in in_source for g in grams]
    best_start, best_len, run = 0, 0, 0
    for i, hit in enumerate(hits):
        run = run + 1 if hit else 0
        if run > best_len:
            best_start, best_len = i - run + 1, run
    quote_words = ws[best_start : best_start + best_len + n - 1] if best_len else []
    quote = " ".join(quote_words[:QUOTE_WORDS]) + (" …" if len(quote_words) > QUOTE_WORDS else "")
    return Overlap(
        copied=sum(hits),
        total=len(grams),
        from_examples=sum(1 for g, hit in zip(grams, hits, strict=True) if hit and g in in_examples),
        quote=quote,
    )


def copies(ov: Overlap) -> bool:
    """True when the overlap is a copy: over :data:`COPY_BOUND` of the n-grams and at least :data:`COPY_MIN_NGRAMS` of them."""
    return ov.fraction > COPY_BOUND and ov.copied >= COPY_MIN_NGRAMS


@dataclass
class CaseReview:
    """The review of a generated eval's cases: which to keep, why the reply is rejected, notes for the user."""

    keep: list[int]
    """Indexes of the distinct cases, in order."""
    problem: str | None = None
    """Why the reply is rejected (goes back to the model), or None."""
    notes: list[str] = field(default_factory=list)


def _label(config: SkillEvalConfig, i: int) -> str:
    tasks = config.run_tasks()
    return f"case {i + 1} ({tasks[i].name!r})"


def review_cases(config: SkillEvalConfig, source_name: str, source_text: str) -> CaseReview:
    """Apply the rules of the module docstring to a validated eval."""
    tasks = config.run_tasks()
    keep: list[int] = []
    notes: list[str] = []
    for i, t in enumerate(tasks):
        twin = next((j for j in keep if shingle_similarity(t.instruction, tasks[j].instruction) >= DUPLICATE_BOUND), None)
        if twin is None:
            keep.append(i)
            continue
        sim = shingle_similarity(t.instruction, tasks[twin].instruction)
        notes.append(f"{_label(config, i)} repeats {_label(config, twin)} ({sim:.0%} of their word {SHINGLE}-shingles shared): counted once, dropped")
    copied: list[str] = []
    for i in keep:
        ov = overlap(tasks[i].instruction, source_text)
        if copies(ov):
            where = f"{source_name}'s example" if ov.from_examples * 2 > ov.copied else source_name
            copied.append(f'{_label(config, i)} copies {ov.fraction:.0%} of its word {NGRAM}-grams ({ov.copied} of {ov.total}) from {where}: "{ov.quote}"')
    review = CaseReview(keep=keep, notes=notes)
    if copied:
        review.problem = (
            "; ".join(copied) + f" (the bound is {COPY_BOUND:.0%}). A case must pose a new problem in the user's words, not reuse the file's examples."
        )
    elif len(keep) < MIN_CASES:
        dup = f", after {len(tasks) - len(keep)} near-duplicate{'s' if len(tasks) - len(keep) != 1 else ''} counted once" if len(keep) < len(tasks) else ""
        review.problem = (
            f"{len(keep)} distinct case{'s' if len(keep) != 1 else ''}{dup}; write at least {MIN_CASES} tasks, "
            "each a different realistic problem (different input material and situation)"
        )
    return review
