"""A point's per-request samples, as the store keeps them for the regression gate.

The comparison's noise model resamples requests, so a point keeps its requests' TTFT,
TPOT, E2EL and tokens (from the result file's `inferbench.samples`, or a plain sa-bench
file's `ttfts` / `itls`). Stored beside the record, not in it (listing and reporting
never read them), as float32 arrays in a compressed `.npz`: about 10 KB for 1,000 requests.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from inferbench.bench.result import MAX_SAMPLES, RequestSamples

_FIELDS = ("ttft_ms", "e2el_ms", "tokens", "tpot_ms")


@dataclass(frozen=True, eq=False)
class PointSamples:
    """Per-request values of one measured point (ok requests only)."""

    ttft_ms: np.ndarray
    e2el_ms: np.ndarray  # the same requests as ttft_ms
    tokens: np.ndarray  # input + output tokens of the same requests
    tpot_ms: np.ndarray  # requests with more than one output token

    @property
    def size(self) -> int:
        return int(self.ttft_ms.size)

    @classmethod
    def of_block(cls, block: RequestSamples) -> PointSamples:
        return cls(
            ttft_ms=np.asarray(block.ttft_ms, dtype=np.float32),
            e2el_ms=np.asarray(block.e2el_ms, dtype=np.float32),
            tokens=np.asarray(block.tokens, dtype=np.float32),
            tpot_ms=np.asarray(block.tpot_ms, dtype=np.float32),
        )

    @classmethod
    def of_sa_bench(cls, raw: Mapping[str, Any]) -> PointSamples | None:
        """From sa-bench's per-request lists (`--save-detailed`): `ttfts` and `itls` in
        seconds, `input_lens` / `output_lens`; None when the file has none or they disagree."""
        ttfts, itls = raw.get("ttfts"), raw.get("itls")
        ins, outs = raw.get("input_lens"), raw.get("output_lens")
        lists = (ttfts, itls, ins, outs)
        if not all(isinstance(v, list) for v in lists):
            return None
        assert isinstance(ttfts, list) and isinstance(itls, list)
        assert isinstance(ins, list) and isinstance(outs, list)
        if not ttfts or len({len(v) for v in (ttfts, itls, ins, outs)}) != 1:
            return None
        try:
            ttft = np.asarray(ttfts, dtype=float) * 1e3
            gaps = np.asarray([float(sum(g)) for g in itls]) * 1e3
            out = np.asarray(outs, dtype=float)
            tokens = np.asarray(ins, dtype=float) + out
        except (TypeError, ValueError):
            return None
        many = out > 1
        return cls(
            ttft_ms=_spaced(ttft),
            e2el_ms=_spaced(ttft + gaps),
            tokens=_spaced(tokens),
            tpot_ms=_spaced(gaps[many] / (out[many] - 1)),
        )

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        arrays = {name: np.asarray(getattr(self, name), dtype=np.float32) for name in _FIELDS}
        np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> PointSamples | None:
        """None for bytes that are not samples (a damaged row costs the interval only)."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                return cls(**{name: np.asarray(npz[name], dtype=float) for name in _FIELDS})
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            return None


def pooled(parts: Sequence[PointSamples]) -> PointSamples:
    """Repeats of one point as one sample."""
    return PointSamples(
        **{name: np.concatenate([getattr(p, name) for p in parts]) for name in _FIELDS}
    )


def _spaced(values: np.ndarray) -> np.ndarray:
    if values.size <= MAX_SAMPLES:
        return values.astype(np.float32)
    idx = np.linspace(0, values.size - 1, MAX_SAMPLES).round().astype(int)
    return values[idx].astype(np.float32)
