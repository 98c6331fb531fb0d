"""Activation scores: per skill precision, recall and F1 with intervals, dormancy violations,
the confusion matrix of a plugin and the pairs of skills that collide. Pure: no I/O.

**What a prompt expects of a skill.** A prompt of skill S's suite expects S to load
(``should``) or not (``should_not``: a dormancy contract). A *should* prompt of another
skill T expects S to stay quiet too, unless the same text is also one of S's should
prompts: territories are taken as exclusive. A should-not prompt of T says nothing about S
(it is often a sibling's task on purpose). Errored trials count nowhere, and are counted.

**Intervals** (95 %). Precision and recall are proportions of trials: Clopper–Pearson
intervals (:func:`agentsproof.stats.intervals.clopper_pearson_bounds`, exact: never below
95 %) on an effective sample of at most one unit per distinct prompt, so repeated trials of
one prompt never pass for independent evidence (the rate stays, the count shrinks; the
Beta quantiles take the fractional count). Wilson's interval, used before, fell to 83–93 %
with 3–30 prompts near a rate of 1. F1 grows with both, so ``[F1(P_low, R_low), F1(P_high,
R_high)]`` from 97.5 % intervals on each holds F1 whenever both hold: at least 95 % by the
union bound (``bench/activation_intervals.py`` and ``bench/coverage.py`` measure all three).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentsproof.model.activation import ActivationSuite, ActivationTrial

LEVEL = 0.95
LEVEL_F1 = 1 - (1 - LEVEL) / 2
"""Each of precision and recall at 97.5 %, so that the F1 interval holds 95 % (union bound)."""
NONE = "(none)"
"""The confusion matrix's column for trials that loaded no skill."""

Interval = tuple[float, float] | None


@dataclass
class Misfire:
    """A prompt that loaded a skill it should not have."""

    prompt: str
    type: str
    owner: str
    """The suite the prompt belongs to (the skill itself for a dormancy violation)."""
    fired: int
    trials: int


@dataclass
class SkillScore:
    """One skill's activation score: confusion counts, precision, recall and F1 with their intervals, and the prompts that misfired."""

    skill: str
    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0
    errored: int = 0
    precision: float | None = None
    precision_ci: Interval = None
    recall: float | None = None
    recall_ci: Interval = None
    f1: float | None = None
    f1_ci: Interval = None
    dormancy: list[Misfire] = field(default_factory=list)
    """Its own should-not prompts that loaded it."""
    collisions: list[Misfire] = field(default_factory=list)
    """Other skills' should prompts that loaded it."""
    missed: list[Misfire] = field(default_factory=list)
    """Its own should prompts that did not load it (``fired`` counts the misses)."""
    min_recall: float = 0.0
    min_precision: float = 0.0

    @property
    def below_floor(self) -> list[str]:
        """What fails ``--ci``: ``recall 0.50 < 0.80`` ...; empty when it passes (an
        estimate that cannot be made, e.g. no should prompts, is not a failure)."""
        out = []
        if self.recall is not None and self.recall < self.min_recall - 1e-9:
            out.append(f"recall {self.recall:.2f} < {self.min_recall:.2f}")
        if self.precision is not None and self.precision < self.min_precision - 1e-9:
            out.append(f"precision {self.precision:.2f} < {self.min_precision:.2f}")
        return out


@dataclass
class Collision:
    """Two skills that load on each other's should prompts."""

    a: str
    b: str
    a_on_b: int
    """Trials of b's should prompts that loaded a."""
    b_prompts: int
    b_on_a: int
    a_prompts: int
    rate: float = 0.0
    ci: Interval = None


@dataclass
class ActivationStats:
    """A plugin's activation scores: one ``SkillScore`` per skill, the confusion matrix and the colliding pairs."""

    skills: list[SkillScore]
    matrix: dict[str, dict[str, int]]
    """Row: the suite whose should prompts ran; column: a skill that loaded (or :data:`NONE`)."""
    row_trials: dict[str, int]
    """Scored trials of each row's should prompts."""
    collisions: list[Collision]
    errored: int
    trials: int

    @property
    def failing(self) -> list[tuple[str, list[str]]]:
        """The skills below a floor, each with what fails (``below_floor``); empty when every skill passes."""
        return [(s.skill, s.below_floor) for s in self.skills if s.below_floor]


def proportion(successes: int, total: int, units: int, level: float = LEVEL) -> Interval:
    """Clopper–Pearson interval for ``successes / total`` counting at most ``units``
    independent units (distinct prompts): the rate stays, the sample shrinks to
    ``min(total, units)`` (a fractional success count is fine for the Beta quantiles)."""
    n = min(total, units)
    if total <= 0 or n <= 0:
        return None
    from agentsproof.stats.intervals import clopper_pearson_bounds  # scipy: only once a rate is judged

    lo, hi = clopper_pearson_bounds(successes / total * n, n, level)  # type: ignore[arg-type]
    return float(lo), float(hi)


def f1_score(precision: float | None, recall: float | None) -> float | None:
    """The harmonic mean of precision and recall (0.0 when both are 0); None when either is unknown."""
    if precision is None or recall is None:
        return None
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def _f1_interval(p: tuple[int, int, int], r: tuple[int, int, int]) -> Interval:
    """(successes, total, units) of precision and of recall → the F1 interval."""
    pi, ri = proportion(*p, level=LEVEL_F1), proportion(*r, level=LEVEL_F1)
    if ri is None:
        return None
    if pi is None:  # the skill never loaded: precision is undefined, F1 is 0 by convention
        return (0.0, f1_score(1.0, ri[1]) or 0.0)
    return (f1_score(pi[0], ri[0]) or 0.0, f1_score(pi[1], ri[1]) or 0.0)


def _expectation(skill: str, trial: ActivationTrial, should_texts: dict[str, set[str]]) -> bool | None:
    if trial.skill == skill:
        return trial.prompt.expect
    if trial.prompt.expect and trial.prompt.text not in should_texts.get(skill, set()):
        return False
    return None


def score(suites: Sequence[ActivationSuite], trials: Iterable[ActivationTrial], skills: Sequence[str] | None = None) -> ActivationStats:
    """Score the trials of ``suites`` (``skills``: every installed skill, for the matrix's
    columns; default the suites' skills)."""
    done = list(trials)
    names = list(skills) if skills is not None else [s.skill.name for s in suites]
    should_texts = {s.skill.name: {p.text for p in s.should} for s in suites}
    scored = [t for t in done if t.fired is not None]
    out: list[SkillScore] = []
    for suite in suites:
        name = suite.skill.name
        sc = SkillScore(skill=name, min_recall=suite.min_recall, min_precision=suite.min_precision)
        sc.errored = sum(1 for t in done if t.fired is None and t.skill == name)
        groups: dict[tuple[str, str, bool], list[bool]] = {}
        for t in scored:
            expect = _expectation(name, t, should_texts)
            if expect is None:
                continue
            fired = name in (t.fired or [])
            groups.setdefault((t.skill, t.prompt.text, expect), []).append(fired)
            if expect and fired:
                sc.tp += 1
            elif expect:
                sc.fn += 1
            elif fired:
                sc.fp += 1
            else:
                sc.tn += 1
        types = {(name, p.text, p.expect): p.type for p in suite.prompts}
        owner_types = {(s.skill.name, p.text, p.expect): p.type for s in suites for p in s.prompts}
        for (owner, text, expect), fires in groups.items():
            n, hit = len(fires), sum(fires)
            kind = types.get((owner, text, expect)) or owner_types.get((owner, text, expect), "")
            if expect and hit < n:
                sc.missed.append(Misfire(text, kind, owner, n - hit, n))
            elif not expect and hit and owner == name:
                sc.dormancy.append(Misfire(text, kind, owner, hit, n))
            elif not expect and hit:
                sc.collisions.append(Misfire(text, kind, owner, hit, n))
        fired_units = sum(1 for (_, _, _), fires in groups.items() if any(fires))
        should_units = sum(1 for (_, _, e) in groups if e)
        if sc.tp + sc.fp:
            sc.precision = sc.tp / (sc.tp + sc.fp)
            sc.precision_ci = proportion(sc.tp, sc.tp + sc.fp, fired_units)
        if sc.tp + sc.fn:
            sc.recall = sc.tp / (sc.tp + sc.fn)
            sc.recall_ci = proportion(sc.tp, sc.tp + sc.fn, should_units)
            sc.f1 = f1_score(sc.precision if sc.precision is not None else 0.0, sc.recall)
            sc.f1_ci = _f1_interval((sc.tp, sc.tp + sc.fp, fired_units), (sc.tp, sc.tp + sc.fn, should_units))
        for group in (sc.dormancy, sc.collisions, sc.missed):
            group.sort(key=lambda m: (-m.fired / m.trials, m.owner, m.prompt))
        out.append(sc)
    matrix, row_trials = confusion(suites, scored, names)
    return ActivationStats(
        skills=out,
        matrix=matrix,
        row_trials=row_trials,
        collisions=collisions(matrix, row_trials, suites, scored),
        errored=len(done) - len(scored),
        trials=len(done),
    )


def confusion(suites: Sequence[ActivationSuite], scored: Sequence[ActivationTrial], names: Sequence[str]) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """Per suite, over the trials of its should prompts: how often each skill loaded (a
    trial that loaded two skills counts in both columns; one that loaded none in :data:`NONE`)."""
    matrix = {s.skill.name: {n: 0 for n in [*names, NONE]} for s in suites}
    rows = {s.skill.name: 0 for s in suites}
    for t in scored:
        if not t.prompt.expect or t.skill not in matrix:
            continue
        rows[t.skill] += 1
        fired = list(dict.fromkeys(t.fired or []))
        for n in fired or [NONE]:
            matrix[t.skill][n] = matrix[t.skill].get(n, 0) + 1
    return matrix, rows


def collisions(
    matrix: dict[str, dict[str, int]], rows: dict[str, int], suites: Sequence[ActivationSuite], scored: Sequence[ActivationTrial]
) -> list[Collision]:
    """Pairs of skills that load on each other's should prompts, worst first. ``a`` is a
    suite's skill; ``b`` another suite's skill (both directions count) or an installed skill
    without a suite (only its loads on ``a``'s prompts count). The rate is the cross-loads
    over the should trials counted, with its Clopper–Pearson interval (units: the distinct prompts)."""
    names = list(matrix)
    columns = [c for c in next(iter(matrix.values()), {}) if c != NONE]
    units = {n: len({t.prompt.text for t in scored if t.skill == n and t.prompt.expect}) for n in names}
    out = []
    seen: set[frozenset[str]] = set()
    for a in names:
        for b in columns:
            if b == a or frozenset((a, b)) in seen:
                continue
            seen.add(frozenset((a, b)))
            both = b in matrix
            a_on_b = matrix[b].get(a, 0) if both else 0
            b_on_a = matrix[a].get(b, 0)
            if not (a_on_b or b_on_a):
                continue
            total = rows[a] + (rows[b] if both else 0)
            c = Collision(a=a, b=b, a_on_b=a_on_b, b_prompts=rows[b] if both else 0, b_on_a=b_on_a, a_prompts=rows[a])
            c.rate = (a_on_b + b_on_a) / total if total else 0.0
            c.ci = proportion(a_on_b + b_on_a, total, units[a] + (units[b] if both else 0))
            out.append(c)
    out.sort(key=lambda c: (-c.rate, c.a, c.b))
    return out


def as_dict(stats: ActivationStats) -> dict[str, Any]:
    """The JSON form (reports)."""
    from dataclasses import asdict

    data = asdict(stats)
    data["level"] = LEVEL
    data["method"] = "precision/recall: Clopper–Pearson on at most one unit per distinct prompt; F1: from 97.5 % Clopper–Pearson bounds of both (union bound)"
    return data


GAIN_RESAMPLES = 10_000
GAIN_SEED = 0
GAIN_METHOD = (
    f"paired percentile bootstrap over prompts, {GAIN_RESAMPLES} resamples, seed {GAIN_SEED}, "
    "with one +1 and one −1 pseudo-pair (a difference of exactly zero everywhere still has spread)"
)


def correct_share(trials: Iterable[ActivationTrial], skill: str) -> dict[tuple[str, bool], float]:
    """Per prompt (text, expect) of ``skill``'s suite: the share of its scored trials that did
    the right thing (loaded the skill for a should prompt, stayed quiet for a should-not)."""
    table: dict[tuple[str, bool], list[bool]] = {}
    for t in trials:
        if t.skill != skill or t.fired is None:
            continue
        table.setdefault((t.prompt.text, t.prompt.expect), []).append((skill in t.fired) == t.prompt.expect)
    return {k: sum(v) / len(v) for k, v in table.items()}


def paired_gain(before: Sequence[float], after: Sequence[float], level: float = LEVEL) -> tuple[float, Interval]:
    """(mean of after − before, its interval) over paired units (prompts); see :data:`GAIN_METHOD`."""
    import numpy as np

    if len(before) != len(after):
        raise ValueError("paired_gain needs one value of each side per unit")
    if not before:
        return 0.0, None
    d = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    mean = float(d.mean())
    smoothed = np.concatenate([d, [1.0, -1.0]])
    rng = np.random.default_rng(GAIN_SEED)
    idx = rng.integers(0, len(smoothed), size=(GAIN_RESAMPLES, len(smoothed)))
    means = smoothed[idx].mean(axis=1)
    tail = (1 - level) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])
    return mean, (float(max(-1.0, lo)), float(min(1.0, hi)))
