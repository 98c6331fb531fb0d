"""Coverage of every interval `agentsproof judge-check` prints, by simulation.

Each simulated gold set is drawn from a model whose true agreement is known, and the
project's own functions (agentsproof.stats.agreement) compute the interval; a cell's
coverage is the share of its printed intervals that hold the truth, beside the mean
width, whether every interval held its own estimate, and the share of sets on which the
figure is undefined (printed "—", no claim made).

- **Cohen's κ** (pass/fail, and three labels like a pairwise judge's A / B / tie). Both
  raters have label shares m (the prevalence); a cell holds chance
  P(i, j) = (1 − κ) m_i m_j + κ m_i [i = j]. Then p_o = κ + (1 − κ) Σ m², p_e = Σ m² and
  the population κ, (p_o − p_e)/(1 − p_e), is exactly the κ of the grid: the truth is
  exact, not estimated. The table of a gold set of n items is one multinomial draw;
  `kappa_interval` takes the tables of all sets of a cell at once (the same function
  `cohen_kappa` calls with one). Also a **lenient judge**, passing more often than the
  person (pass shares 0.65 vs 0.5 and 0.35 vs 0.2): the cell chances mix independence
  and the most agreeing table those shares allow; p_e is the same for both and p_o is
  linear in the weight, so the weight sets the population κ exactly (0 to 0.6).
  **Accuracy** is checked on the same sets: its truth is p_o.
- **Spearman's ρ** (rubric scores): the person's and the judge's scores are a standard
  bivariate normal pair with correlation r = 2 sin(πρ/6), whose Spearman correlation is
  exactly ρ (Pearson–Kendall) — the truth of the **continuous** rows. The **5-level**
  rows cut both at the normal quintiles to 0, .25, .5, .75, 1 like rubric scores; the
  sample ρ with average ranks for ties then estimates corr(F*(X), F*(Y)) with
  F*(x) = P(X < x) + P(X = x)/2, computed exactly from the 25 cell chances of the
  bivariate normal (scipy): that is the truth of those rows (printed beside the latent ρ).
  Each set goes through `spearman` itself.
- **Self-consistency** (each item asked twice; an item consistent with chance c) and
  **position consistency** (a pair asked both ways on each of the two asks: two flags
  per item, the item's own chance drawn from a beta with mean c and intra-item
  correlation ICC, so flags of one item go together): the figures `judge_check` computes,
  through `consistency` and `consistency_by_item`, against the true mean chance c (and,
  for comparison, the exact interval over all flags that judge-check printed before).

    python bench/agreement.py [--sims 1000] [--seed 0] [--markdown [--full]]
    python bench/agreement.py --before --sims 300   # κ: the bootstrap used before, beside today's

The full grid (384 cells × 1,000 sets) runs in a few minutes.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentsproof.stats.agreement import accuracy, consistency, consistency_by_item, kappa_interval, spearman  # noqa: E402

SIZES = (10, 20, 28, 50, 100, 300)
KAPPAS = (0.0, 0.2, 0.4, 0.6, 0.8, 0.95)
SHARES = {"0.5": (0.5, 0.5), "0.2": (0.2, 0.8), "0.8": (0.8, 0.2), "A/B/tie 0.4/0.4/0.2": (0.4, 0.4, 0.2)}
LENIENT = ((0.65, 0.5), (0.35, 0.2))
"""A judge that passes more often than the person (pass shares judge/person): κ at most 0.70 and 0.63."""
LENIENT_KAPPAS = (0.0, 0.2, 0.4, 0.6)
RHOS = (0.0, 0.3, 0.6, 0.9)
CONSISTENCY = (0.6, 0.8, 0.95)
ICCS = (0.0, 0.5)
EPS = 1e-9


class Cell:
    """One row: coverage, mean width, estimate held, undefined share."""

    def __init__(self, block: str, params: str, n: int, truth: float) -> None:
        self.block, self.params, self.n, self.truth = block, params, n, truth
        self.hits = self.shown = self.undefined = 0
        self.width = 0.0
        self.held = True

    def add(self, value: float | None, ci: Any) -> None:
        if value is None or ci is None or any(math.isnan(x) for x in (value, *ci)):
            self.undefined += 1
            return
        lo, hi = ci
        self.shown += 1
        self.hits += lo - EPS <= self.truth <= hi + EPS
        self.width += hi - lo
        self.held &= lo - EPS <= value <= hi + EPS

    @property
    def coverage(self) -> float:
        return self.hits / self.shown if self.shown else float("nan")

    def row(self) -> list[str]:
        total = self.shown + self.undefined
        return [self.block, self.params, str(self.n), f"{self.truth:.3f}", f"{self.coverage:.3f}",
                f"{self.width / self.shown:.3f}" if self.shown else "—", "yes" if self.held else "**NO**",
                f"{self.undefined / total:.1%}"]


def _lenient(judge: float, person: float, kappa: float) -> np.ndarray:
    """Cell chances with pass shares ``judge`` (rows) and ``person`` (columns) and population
    κ exactly ``kappa``: a mixture of independence and the most agreeing table those shares
    allow (p_e is the same for both, p_o is linear in the weight, so κ is too)."""
    ind = np.outer([judge, 1 - judge], [person, 1 - person])
    both = min(judge, person)
    top = np.array([[both, judge - both], [person - both, 1 - judge - person + both]])
    pe = float((ind.sum(axis=1) * ind.sum(axis=0)).sum())
    top_kappa = (float(np.trace(top)) - pe) / (1 - pe)
    w = kappa / top_kappa
    return (1 - w) * ind + w * top


def _settings() -> list[tuple[str, float, np.ndarray]]:
    out = []
    for name, m in SHARES.items():
        shares = np.asarray(m)
        for kappa in KAPPAS:
            out.append((f"shares {name}, κ {kappa:g}", kappa, (1 - kappa) * np.outer(shares, shares) + kappa * np.diag(shares)))
    for judge, person in LENIENT:
        for kappa in LENIENT_KAPPAS:
            out.append((f"lenient judge {judge:g}/person {person:g}, κ {kappa:g}", kappa, _lenient(judge, person, kappa)))
    return out


def kappa_cells(rng: np.random.Generator, sims: int) -> list[Cell]:
    out = []
    for name, kappa, table in _settings():
        k = table.shape[0]
        p_o = float(np.trace(table))
        for n in SIZES:
            tables = rng.multinomial(n, table.ravel(), size=sims).reshape(sims, k, k)
            value, lo, hi = kappa_interval(tables)
            kc, ac = Cell("kappa", name, n, kappa), Cell("accuracy", name, n, p_o)
            memo: dict[int, dict[str, Any] | None] = {}
            for r in range(sims):
                kc.add(None if math.isnan(value[r]) else float(value[r]), (float(lo[r]), float(hi[r])))
                hits = int(np.trace(tables[r]))
                if hits not in memo:  # the exact function the command calls, once per count
                    memo[hits] = accuracy([True] * n, [True] * hits + [False] * (n - hits))
                got = memo[hits]
                assert got is not None
                ac.add(got["value"], got["ci"])
            out += [kc, ac]
    return out


def _discrete_truth(r: float, cuts: np.ndarray) -> float:
    """Population Spearman (average ranks) of a bivariate normal cut at ``cuts`` on both axes."""
    from scipy.stats import multivariate_normal, norm

    edges = np.concatenate([[-np.inf], cuts, [np.inf]])
    lim = lambda x: np.clip(x, -12, 12)  # noqa: E731
    mvn = multivariate_normal(mean=[0, 0], cov=[[1, r], [r, 1]])
    cdf = lambda a, b: mvn.cdf([lim(a), lim(b)])  # noqa: E731
    k = len(edges) - 1
    cell = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            cell[i, j] = (cdf(edges[i + 1], edges[j + 1]) - cdf(edges[i], edges[j + 1])
                          - cdf(edges[i + 1], edges[j]) + cdf(edges[i], edges[j]))
    cell = np.clip(cell, 0, None)
    cell /= cell.sum()
    px = np.diff(norm.cdf(edges))
    mid = np.cumsum(px) - px / 2  # F*(level)
    mean = float((px * mid).sum())
    var = float((px * (mid - mean) ** 2).sum())
    cov = float((cell * np.outer(mid - mean, mid - mean)).sum())
    return cov / var


def spearman_cells(rng: np.random.Generator, sims: int) -> list[Cell]:
    from scipy.stats import norm

    cuts = norm.ppf([0.2, 0.4, 0.6, 0.8])
    levels = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    out = []
    for rho in RHOS:
        r = 2 * math.sin(math.pi * rho / 6)
        truths = {"continuous": rho, "5 levels": _discrete_truth(r, cuts)}
        for n in SIZES:
            z1 = rng.standard_normal((sims, n))
            z2 = r * z1 + math.sqrt(1 - r * r) * rng.standard_normal((sims, n))
            for kind, truth in truths.items():
                cell = Cell("spearman", f"{kind}, latent ρ {rho:g}", n, truth)
                a, b = (z1, z2) if kind == "continuous" else (levels[np.searchsorted(cuts, z1)], levels[np.searchsorted(cuts, z2)])
                for s in range(sims):
                    got = spearman(a[s].tolist(), b[s].tolist())
                    cell.add(got["value"] if got else None, got["ci"] if got else None)
                out.append(cell)
    return out


def consistency_cells(rng: np.random.Generator, sims: int) -> list[Cell]:
    out = []
    for c in CONSISTENCY:
        for n in SIZES:
            cell = Cell("self-consistency", f"chance {c:g}", n, c)
            same = rng.random((sims, n)) < c
            for s in range(sims):
                got = consistency(same[s].tolist(), [True] * n)
                cell.add(got["value"] if got else None, got["ci"] if got else None)
            out.append(cell)
        for icc in ICCS:
            for n in SIZES:
                cell = Cell("position consistency", f"chance {c:g}, ICC {icc:g}", n, c)
                flat = Cell("position consistency, every flag as one (before)", f"chance {c:g}, ICC {icc:g}", n, c)
                if icc == 0:
                    chance = np.full((sims, n), c)
                else:  # beta with mean c and correlation icc between an item's flags
                    s_ab = 1 / icc - 1
                    chance = rng.beta(c * s_ab, (1 - c) * s_ab, size=(sims, n))
                flags = rng.random((sims, n, 2)) < chance[:, :, None]
                for s in range(sims):
                    got = consistency_by_item(flags[s].tolist())  # as judge_check: each item's flag of each ask
                    cell.add(got["value"] if got else None, got["ci"] if got else None)
                    f = flags[s].ravel().tolist()  # the exact interval over all flags judge-check printed before
                    was = consistency(f, [True] * len(f))
                    flat.add(was["value"] if was else None, was["ci"] if was else None)
                out += [cell, flat]
    return out


def before_kappa(rng: np.random.Generator, sims: int, resamples: int = 2000) -> list[tuple[str, int, Cell, Cell]]:
    """The κ interval judge-check printed before (percentile bootstrap over items, widened
    to hold κ̂) beside today's, on the same tables. Resampling n items of a table is one
    multinomial draw of its cell shares, so the bootstrap is drawn that way."""
    from agentsproof.stats.agreement import kappa_tables

    out = []
    for name, m in SHARES.items():
        shares = np.asarray(m)
        k = len(shares)
        for kappa in KAPPAS:
            chances = ((1 - kappa) * np.outer(shares, shares) + kappa * np.diag(shares)).ravel()
            for n in SIZES:
                tables = rng.multinomial(n, chances, size=sims).reshape(sims, k, k)
                value, lo, hi = kappa_interval(tables)
                old, new = Cell("kappa before", "", n, kappa), Cell("kappa", "", n, kappa)
                for r in range(sims):
                    new.add(None if math.isnan(value[r]) else float(value[r]), (float(lo[r]), float(hi[r])))
                    if math.isnan(value[r]):
                        old.add(None, None)
                        continue
                    boot = kappa_tables(rng.multinomial(n, tables[r].ravel() / n, size=resamples).reshape(-1, k, k))[0]
                    boot = boot[~np.isnan(boot)]
                    b_lo, b_hi = np.quantile(boot, [0.025, 0.975])
                    old.add(float(value[r]), (min(float(b_lo), float(value[r])), max(float(b_hi), float(value[r]))))
                out.append((f"shares {name}, κ {kappa:g}", n, old, new))
    return out


def print_before(rng: np.random.Generator, sims: int, markdown: bool) -> None:
    rows = before_kappa(rng, sims)
    if markdown:  # per true κ and size: the lowest coverage over the label shares, the mean width
        print("| true κ | n | bootstrap: lowest coverage | its mean width | this method: lowest coverage | its mean width |")
        print("|--:|--:|--:|--:|--:|--:|")
        for kappa in KAPPAS:
            for n in SIZES:
                mine = [r for r in rows if r[1] == n and r[0].endswith(f"κ {kappa:g}")]
                old = [r[2] for r in mine if r[2].shown]
                new = [r[3] for r in mine if r[3].shown]
                wo = sum(c.width / c.shown for c in old) / len(old)
                wn = sum(c.width / c.shown for c in new) / len(new)
                print(f"| {kappa:g} | {n} | {min(c.coverage for c in old):.3f} | {wo:.2f} | {min(c.coverage for c in new):.3f} | {wn:.2f} |")
    else:
        for params, n, old, new in rows:
            o, w = old.row(), new.row()
            print(f"{params:<32} {n:>4}  bootstrap {o[4]} width {o[5]}   now {w[4]} width {w[5]}")
    worst_old = min((r[2] for r in rows if r[2].shown), key=lambda c: c.coverage)
    worst_new = min((r[3] for r in rows if r[3].shown), key=lambda c: c.coverage)
    print(f"\nlowest coverage: bootstrap {worst_old.coverage:.3f}, this method {worst_new.coverage:.3f}; "
          f"cells below 0.93: bootstrap {sum(r[2].coverage < 0.93 for r in rows if r[2].shown)}, "
          f"this method {sum(r[3].coverage < 0.93 for r in rows if r[3].shown)} of {len(rows)}")


HEAD = ["interval", "cell", "n", "truth", "coverage", "mean width", "holds estimate", "undefined"]


def condensed(cells: list[Cell]) -> list[list[str]]:
    """Per interval and gold-set size: the lowest coverage (and its cell), the median, the
    range of mean widths, whether every run held its estimate."""
    rows = []
    for block in dict.fromkeys(c.block for c in cells):
        for n in SIZES:
            mine = [c for c in cells if c.block == block and c.n == n and c.shown]
            if not mine:
                continue
            low = min(mine, key=lambda c: c.coverage)
            widths = [c.width / c.shown for c in mine]
            cov = sorted(c.coverage for c in mine)
            rows.append([block, str(n), str(len(mine)), f"{low.coverage:.3f} ({low.params})", f"{cov[len(cov) // 2]:.3f}",
                         f"{min(widths):.2f}–{max(widths):.2f}", "yes" if all(c.held for c in mine) else "**NO**"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=1000, help="simulated gold sets per cell (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--markdown", action="store_true", help="Markdown: per interval and size, the lowest and median coverage")
    ap.add_argument("--full", action="store_true", help="with --markdown: every cell")
    ap.add_argument("--before", action="store_true",
                    help="only kappa: the percentile bootstrap judge-check used before, beside today's method (use --sims 300)")
    args = ap.parse_args()
    if args.before:
        print_before(np.random.default_rng([args.seed, 9]), args.sims, args.markdown)
        return
    cells = []
    for i, make in enumerate((kappa_cells, spearman_cells, consistency_cells)):
        cells += make(np.random.default_rng([args.seed, i]), args.sims)
    if args.markdown and args.full:
        print("| " + " | ".join(HEAD) + " |")
        print("|" + "|".join(["---", "---", "--:", "--:", "--:", "--:", "---", "--:"]) + "|")
        for c in cells:
            print("| " + " | ".join(c.row()) + " |")
    elif args.markdown:
        print("| interval | n | cells | lowest coverage (its cell) | median coverage | mean widths | holds estimate |")
        print("|---|--:|--:|---|--:|--:|---|")
        for r in condensed(cells):
            print("| " + " | ".join(r) + " |")
    else:
        print(f"{HEAD[0]:<21} {HEAD[1]:<34} {'n':>4} {'truth':>6} {'cover':>6} {'width':>6} {'held':>5} {'undef':>6}")
        for c in cells:
            row = c.row()
            print(f"{row[0]:<21} {row[1]:<34} {row[2]:>4} {row[3]:>6} {row[4]:>6} {row[5]:>6} {row[6].strip('*'):>5} {row[7]:>6}")
    print()
    for block in dict.fromkeys(c.block for c in cells):
        mine = [c for c in cells if c.block == block and c.shown]
        low = min(mine, key=lambda c: c.coverage)
        below = sum(c.coverage < 0.93 for c in mine)
        held = all(c.held for c in mine)
        undefined = max(c.undefined / (c.undefined + c.shown) for c in cells if c.block == block)
        line = (f"{block}: {len(mine)} cells, lowest coverage {low.coverage:.3f} ({low.params}, n {low.n}), "
                f"{below} below 0.93, estimate held in every run: {'yes' if held else 'NO'}, "
                f"undefined in at most {undefined:.1%} of a cell's sets")
        print(("- " if args.markdown else "") + line)


if __name__ == "__main__":
    main()
