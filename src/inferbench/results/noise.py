"""The comparison's noise model: bootstrap intervals of a metric's relative change.

A point measured once is a sample of its requests; measured several times (`--repeats`),
a sample of repeats, each a sample of requests. The bootstrap draws the same way
(hierarchically: repeats with replacement, then requests within each drawn repeat), so
run-to-run differences widen the interval when repeats show them. Per draw, the statistic
is computed on both sides and their ratio taken; the interval of the relative change is
the observed change plus the draws' spread around the full-sample change (the basic
bootstrap's centring, so a metric's recorded value and its resampled estimator may differ).

Requests are drawn in blocks of the point's concurrency (consecutive in send order): the
requests in flight together share batches, and their latencies move together.

Statistics: a quantile of TTFT, TPOT or E2EL; interactivity (1000 / TPOT quantile); and
throughput, resampled as the ratio estimator sum(tokens) / sum(E2EL) of the drawn requests
(a closed loop's throughput is concurrency x tokens / E2EL). Draws are seeded from the
point and the metric, so a rerun of a comparison gives the same intervals.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from inferbench.results.samples import PointSamples

Gather = Callable[[str], np.ndarray]  # a field of the drawn requests, shape (draws, n)
Statistic = Callable[[Gather], np.ndarray]  # one value per draw

_CHUNK_VALUES = 2_000_000  # drawn values held at once (memory stays ~50 MB)


@dataclass(frozen=True)
class NoiseModel:
    """How sure a comparison must be before it calls a change."""

    confidence: float = 0.95  # two-sided interval
    min_samples: int = 30  # per side, of the metric's requests; fewer: not judged
    resamples: int = 1000
    seed: int = 0


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def quantile(field: str, q: float) -> Statistic:
    return lambda g: np.quantile(g(field), q, axis=1)


def inverse_quantile(field: str, q: float, scale: float = 1000.0) -> Statistic:
    """`scale / quantile(field, 1 - q)`: interactivity's p_q from TPOT's p_(100-q)."""
    return lambda g: scale / np.quantile(g(field), 1.0 - q, axis=1)


def token_rate(g: Gather) -> np.ndarray:
    return g("tokens").sum(axis=1) / g("e2el_ms").sum(axis=1)


def _rng(seed: int, *names: str) -> np.random.Generator:
    digest = hashlib.sha256("\0".join((str(seed), *names)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


class _Side:
    """One side's repeats, flattened, for drawing requests of fields of one length.

    Requests are drawn in circular blocks of `block` consecutive requests (send order):
    in a closed loop the requests in flight together share the server's batches, so their
    latencies move together, and drawing them one by one would hide that (a wave's TTFT
    quantile looks exact when every request of the wave is alike)."""

    def __init__(self, parts: Sequence[PointSamples], fields: Sequence[str], block: int) -> None:
        self.fields = tuple(fields)
        self.lens = np.asarray([getattr(p, fields[0]).size for p in parts])
        self.offsets = np.concatenate(([0], np.cumsum(self.lens)[:-1]))
        self.flat = {
            f: np.concatenate([np.asarray(getattr(p, f), dtype=float) for p in parts])
            for f in fields
        }
        self.per_repeat = max(1, round(float(self.lens.mean())))
        # at least 4 blocks a repeat, or every draw would be the sample itself
        self.block = max(1, min(block, int(self.lens.min()) // 4))

    @property
    def size(self) -> int:
        return int(self.lens.sum())

    def full(self) -> Gather:
        return lambda f: self.flat[f][None, :]

    def _gather(self, idx: np.ndarray) -> Gather:
        return lambda field: self.flat[field][idx]

    def draws(self, rng: np.random.Generator, count: int, stat: Statistic) -> np.ndarray:
        repeats = self.lens.size
        width = repeats * self.per_repeat
        step = max(1, _CHUNK_VALUES // width)
        out = []
        for start in range(0, count, step):
            n = min(step, count - start)
            which = rng.integers(0, repeats, size=(n, repeats))  # repeats, with replacement
            blocks = -(-self.per_repeat // self.block)  # then blocks of requests within each
            lens = self.lens[which][..., None]
            starts = (rng.random((n, repeats, blocks)) * lens).astype(int)
            pos = (starts[..., None] + np.arange(self.block)) % lens[..., None]
            pos = pos.reshape(n, repeats, blocks * self.block)[..., : self.per_repeat]
            idx = self.offsets[which][..., None] + pos
            out.append(stat(self._gather(idx.reshape(n, width))))
        return np.concatenate(out)


def change_interval(
    base: Sequence[PointSamples],
    head: Sequence[PointSamples],
    *,
    fields: Sequence[str],
    stat: Statistic,
    change: float,
    model: NoiseModel,
    key: str,
    block: int = 1,
) -> tuple[Interval | None, int, int]:
    """(interval of the relative change head/base - 1, base requests, head requests).

    `change` is the observed relative change the interval is centred on; None when a side
    has fewer than `model.min_samples` requests of the metric (or its statistic is 0).
    `block`: requests drawn together (the point's concurrency)."""
    if min(len(base), len(head)) == 0:
        return None, 0, 0
    b, h = _Side(base, fields, block), _Side(head, fields, block)
    if min(b.size, h.size) < model.min_samples:
        return None, b.size, h.size
    with np.errstate(divide="ignore", invalid="ignore"):
        full_b, full_h = float(stat(b.full())[0]), float(stat(h.full())[0])
        if not (full_b > 0 and math.isfinite(full_b) and math.isfinite(full_h)):
            return None, b.size, h.size
        rng = _rng(model.seed, key)
        draws_b = b.draws(rng, model.resamples, stat)
        draws_h = h.draws(rng, model.resamples, stat)
        ratios = draws_h / draws_b
    ratios = ratios[np.isfinite(ratios)]
    if ratios.size < model.resamples // 2:
        return None, b.size, h.size
    alpha = 1.0 - model.confidence
    lo, hi = (float(q) for q in np.quantile(ratios, (alpha / 2, 1 - alpha / 2)))
    centre = full_h / full_b
    return Interval(change + lo - centre, change + hi - centre), b.size, h.size


def failure_interval(
    base: tuple[int, int], head: tuple[int, int], *, confidence: float
) -> Interval | None:
    """Newcombe's hybrid score interval of the difference of two failure rates, each given
    as (failed, attempted); None when a side attempted nothing."""
    (fb, nb), (fh, nh) = base, head
    if nb <= 0 or nh <= 0:
        return None
    z = _z(confidence)
    lb, ub = _wilson(fb, nb, z)
    lh, uh = _wilson(fh, nh, z)
    pb, ph = fb / nb, fh / nh
    d = ph - pb
    low = d - math.sqrt((ph - lh) ** 2 + (ub - pb) ** 2)
    high = d + math.sqrt((uh - ph) ** 2 + (pb - lb) ** 2)
    return Interval(low, high)


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _z(confidence: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + confidence / 2)
