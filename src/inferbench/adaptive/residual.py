"""Local residual correction: an unmeasured point shares the simulator's error of the
measured points the simulator thinks behave like it.

The calibration's refit moves every point of a (GPU, engine) pair with a few parameters, and
the planner's spread is that fit's held-out error, as if each unmeasured point's error were
drawn afresh. But the simulator's error is not noise: two settings it predicts alike (a
concurrency under `--max-num-seqs` and the same one above it; two chunk budgets at
concurrency 1) are alike on the engine too, and miss alike. Here the log residuals of the
measured points (measured / predicted) are interpolated to the unmeasured ones by simple
kriging (a Gaussian process) over the points' predicted (log tok/s/GPU, log interactivity):
near a measured point the correction is its residual and the spread its measurement noise;
far from all, the correction fades to none and the spread to the held-out spread.

Its uncertainty is its own held-out error: the length scale and the noise are the ones whose
leave-one-out predictions of the measured residuals are likeliest, and the interval is then
widened by the upper 90% bound of the leave-one-out errors' RMS in units of their predicted
spread (never narrowed): a correction that misses what it held out gets no credit for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from inferbench.adaptive.uncertainty import FLOOR, upper_factor

MIN_POINTS = 4  # measured points of a group before its residuals are interpolated
LENGTHS = (0.05, 0.1, 0.2, 0.4, 0.8)  # length scales tried, in log units of the predictions
NOISES = (FLOOR, 0.05, 0.1, 0.2)  # run-to-run noise tried (log sd of a measurement)


@dataclass(frozen=True)
class Correction:
    """Per unmeasured point: the log residual to add to its prediction, and its log sd."""

    shift: np.ndarray
    sd: np.ndarray
    length: float
    noise: float
    widen: float  # the held-out widening applied to the process's own sd (>= 1)


def _kernel(a: np.ndarray, b: np.ndarray, var: float, length: float) -> np.ndarray:
    d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=-1)
    return np.asarray(var * np.exp(-d2 / (2 * length * length)))


def _loo(
    x: np.ndarray, y: np.ndarray, var: float, length: float, noise: float
) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out predictive means and sds of the measured residuals (closed form)."""
    k = _kernel(x, x, var, length) + noise * noise * np.eye(len(y))
    inv = np.linalg.inv(k)
    alpha = inv @ y
    diag = np.diag(inv)
    return y - alpha / diag, np.sqrt(1.0 / diag)


def correct(
    measured_at: Sequence[Sequence[float]],
    residuals: Sequence[float],
    open_at: Sequence[Sequence[float]],
    spread: float,
    noise: float = FLOOR,
) -> Correction | None:
    """Kriged residuals at `open_at` from `residuals` measured at `measured_at` (both in
    the predictions' log coordinates), the prior sd of a residual being `spread` (the
    held-out spread, noise included) and `noise` the least run-to-run noise of a
    measurement (log sd; measured points that are not repeats cannot tell it apart from the
    simulator's error). None below MIN_POINTS measured points."""
    y = np.asarray(residuals, dtype=float)
    if len(y) < MIN_POINTS or not len(open_at):
        return None
    x = np.asarray(measured_at, dtype=float)
    u = np.asarray(open_at, dtype=float)
    least = noise
    best: tuple[float, float, float] | None = None  # (log-likelihood, length, noise)
    for tried in sorted({least, *(n for n in NOISES if n > least)}):
        if tried >= spread:
            continue
        var = spread * spread - tried * tried
        for length in LENGTHS:
            mu, sd = _loo(x, y, var, length, tried)
            ll = float(-(np.log(sd) + 0.5 * ((y - mu) / sd) ** 2).sum())
            if best is None or ll > best[0]:
                best = (ll, length, tried)
    if best is None:
        return None
    _, length, noise = best
    var = spread * spread - noise * noise
    mu, sd = _loo(x, y, var, length, noise)
    z = (y - mu) / sd
    widen = max(1.0, math.sqrt(float((z * z).mean())) * upper_factor(len(y)))
    k = _kernel(x, x, var, length) + noise * noise * np.eye(len(y))
    ks = _kernel(u, x, var, length)
    shift = ks @ np.linalg.solve(k, y)
    reduce = np.einsum("ij,ji->i", ks, np.linalg.solve(k, ks.T))
    post = np.sqrt(np.maximum(var + noise * noise - reduce, noise * noise))
    return Correction(shift, post * widen, length, noise, widen)
