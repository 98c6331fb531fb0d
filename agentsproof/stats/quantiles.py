"""The quantile functions the statistics use (normal, Student's t, beta), from
``scipy.special`` alone.

``import scipy.stats`` costs about 0.55 s of CPU (it formats the docstrings of hundreds of
functions as it loads), more than a thousand chat trials' HTTP; ``scipy.special`` holds the
very functions ``scipy.stats`` calls for these quantiles (``ndtri``, ``stdtrit`` and the
Boost beta quantile). Each function here is ``scipy.stats.<dist>.ppf`` with ``loc=0``,
``scale=1``, number for number (``tests/stats/test_quantiles.py``): the same domain
checks (a probability of 0 or 1 gives the support's end, anything else outside (0, 1) or
an invalid shape gives NaN), a NumPy scalar for scalar arguments, an array otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special as sc


def _ppf(kernel: Callable[..., Any], q: Any, shapes: tuple[Any, ...], valid: Callable[..., Any], support: tuple[float, float]) -> Any:
    """``rv_continuous.ppf`` of scipy.stats for ``loc=0``, ``scale=1``: ``kernel(q, *shapes)``
    where ``0 < q < 1`` and the shapes are ``valid``, the support's ends at ``q`` 0 and 1, NaN elsewhere."""
    q = np.asarray(q)
    arrays = tuple(np.asarray(s) for s in shapes)
    ok = np.asarray(valid(*arrays), dtype=bool) if arrays else np.asarray(True)
    inside = ok & (q > 0) & (q < 1)
    out = np.full(np.shape(inside), np.nan)
    at_low, at_high = ok & (q == 0), ok & (q == 1)
    if np.any(at_low):
        out[np.broadcast_to(at_low, out.shape)] = support[0]
    if np.any(at_high):
        out[np.broadcast_to(at_high, out.shape)] = support[1]
    if np.any(inside):
        args = [np.broadcast_to(a, out.shape)[inside] for a in (q, *arrays)]
        out[inside] = kernel(*args) * 1 + 0  # scipy's ``* scale + loc``: -0.0 becomes 0.0 as there
    return out[()] if out.ndim == 0 else out


def norm_ppf(q: Any) -> Any:
    """The standard normal quantile (``scipy.stats.norm.ppf``)."""
    return _ppf(sc.ndtri, q, (), lambda: True, (-np.inf, np.inf))


def t_ppf(q: Any, df: Any) -> Any:
    """Student's t quantile with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    return _ppf(lambda p, d: sc.stdtrit(d, p), q, (df,), lambda d: d > 0, (-np.inf, np.inf))


def _beta_kernel() -> Callable[..., Any]:
    import scipy.special._ufuncs as ufuncs

    kernel: Callable[..., Any] | None = getattr(ufuncs, "_beta_ppf", None)  # what scipy.stats.beta calls (Boost's quantile)
    if kernel is None:  # a SciPy without it: scipy.stats itself, at its import cost
        from scipy.stats import beta

        return lambda q, a, b: beta.ppf(q, a, b)
    return kernel


def beta_ppf(q: Any, a: Any, b: Any) -> Any:
    """The beta distribution's quantile (``scipy.stats.beta.ppf``)."""
    return _ppf(_beta_kernel(), q, (a, b), lambda x, y: (x > 0) & (y > 0), (0.0, 1.0))
