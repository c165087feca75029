"""Token ids of trace segments: a pure function of (salt, key, position).

Token i of a segment is `low + splitmix64(base + i) % (high - low)`, where `base` hashes
the salt and the segment key, so a segment's first n tokens never depend on its length
and two prompts share exactly the segments they name. The salt carries the cache-bust:
with it on, every session instance of every run draws its own tokens, so nothing is
shared with another run or another replay of the same trace; with it off, runs repeat
the same tokens (a second run can hit the cache the first one filled).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from inferbench.bench.traces.model import Segment

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _splitmix(x: np.ndarray) -> np.ndarray:
    z = x + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def salt_base(*parts: int | str) -> bytes:
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).digest()


class TokenSource:
    """Builds prompts of one salt; segment arrays are cached for the life of the source."""

    def __init__(self, salt: bytes, low: int = 1000, high: int = 30000) -> None:
        self.salt = salt
        self.low = low
        self.span = np.uint64(high - low)
        self._cache: dict[int, np.ndarray] = {}

    def _base(self, key: int) -> np.uint64:
        digest = hashlib.blake2b(key.to_bytes(8, "little"), key=self.salt, digest_size=8)
        return np.uint64(int.from_bytes(digest.digest(), "little"))

    def segment(self, seg: Segment) -> np.ndarray:
        have = self._cache.get(seg.key)
        if have is None or len(have) < seg.length:
            with np.errstate(over="ignore"):
                idx = self._base(seg.key) + np.arange(seg.length, dtype=np.uint64)
                ids = (self.low + (_splitmix(idx) % self.span)).astype(np.int32)
            self._cache[seg.key] = have = ids
        return have[: seg.length]

    def prompt(self, segments: Sequence[Segment]) -> np.ndarray:
        if not segments:
            return np.zeros(0, dtype=np.int32)
        return np.concatenate([self.segment(s) for s in segments])
