"""The estimate's finished requests as the load generator's `RecordColumns`.

A request's output tokens are a few pieces: single stamps (a prefill's first token, a
KV arrival) and runs of its decode worker's step ends (`Seq.pieces`). A client reading
with `stream_interval` n sees a chunk at every n-th token and at the last. Inside one
run the gap between two chunks is `steps[k + n] - steps[k]`, shared by every request
decoding over step k, so the pooled gaps are counted per step index (a strided
difference array) instead of being listed one float per token: a 20,480-request 8k1k
estimate has about 20M gaps but only tens of thousands of distinct ones. The gaps at
the pieces' seams and the short last chunk are listed one by one. The values are the
same float subtractions the records would give.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from inferbench.bench.records import RecordColumns
from inferbench.sim.scheduler import Seq


def estimate_columns(
    seqs: Sequence[Seq], sent: Sequence[float], stream_interval: int
) -> RecordColumns:
    """Columns of `seqs` (all finished; `sent[i]` when seqs[i] was sent), in their order."""
    n = max(stream_interval, 1)
    # one array of every time stamp: each worker's step ends, then the single stamps
    bases: dict[int, int] = {}
    arrays: list[list[float]] = []
    size = 0
    for seq in seqs:
        steps = seq.step_times
        if steps is not None and id(steps) not in bases:
            bases[id(steps)] = size
            arrays.append(steps)
            size += len(steps)
    singles: list[float] = []
    starts: list[int] = []  # each piece: its first stamp's index in the stamp array
    lengths: list[int] = []  # and how many tokens it holds
    per_seq: list[int] = []
    for seq in seqs:
        steps = seq.step_times
        base = bases[id(steps)] if steps is not None else 0
        count = 0
        for piece in seq.pieces:
            if isinstance(piece, tuple):
                if piece[1] > piece[0]:
                    starts.append(base + piece[0])
                    lengths.append(piece[1] - piece[0])
                    count += 1
            else:
                starts.append(-1 - len(singles))  # resolved below, after the step arrays
                singles.append(piece)
                lengths.append(1)
                count += 1
        per_seq.append(count)
    stamps = np.concatenate([np.asarray(a, dtype=float) for a in arrays] + [np.asarray(singles)])
    start = np.asarray(starts, dtype=np.int64)
    start = np.where(start < 0, size - 1 - start, start)
    length = np.asarray(lengths, dtype=np.int64)
    pieces = np.asarray(per_seq, dtype=np.int64)
    req = np.repeat(np.arange(len(seqs)), pieces)
    first_piece = np.cumsum(pieces) - pieces
    total = np.bincount(req, weights=length, minlength=len(seqs)).astype(np.int64)
    before = np.cumsum(length) - length  # tokens of the request before each piece
    offset = before - before[first_piece[req]]
    has = pieces > 0
    last_piece = first_piece + pieces - 1
    first = np.full(len(seqs), np.nan)
    last = np.full(len(seqs), np.nan)
    first[has] = stamps[start[first_piece[has]]]
    last[has] = stamps[start[last_piece[has]] + length[last_piece[has]] - 1]
    gaps, counts = _chunk_gaps(
        stamps, start, length, offset, req, total[req] if req.size else req, n
    )
    prompt = np.array([s.prompt for s in seqs], dtype=np.int64)
    sent_arr = np.asarray(sent, dtype=float)
    done = np.array([np.nan if s.done is None else s.done for s in seqs], dtype=float)
    return RecordColumns(
        scheduled=sent_arr,
        sent=sent_arr,
        done=done,
        ok=np.ones(len(seqs), dtype=bool),
        input_tokens=prompt,
        has_input=np.ones(len(seqs), dtype=bool),
        intended_input=prompt,
        intended_output=np.array([s.output for s in seqs], dtype=np.int64),
        output_tokens=total,
        first_chunk=first,
        last_chunk=last,
        itl=gaps,
        itl_counts=counts,
        itl_per_token=np.empty(0),
        failures={},
    )


def _chunk_gaps(
    stamps: np.ndarray,
    start: np.ndarray,
    length: np.ndarray,
    offset: np.ndarray,
    req: np.ndarray,
    total: np.ndarray,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(distinct gap values, how often each occurs) between a request's successive chunks.

    Chunks sit at token positions 0, n, 2n, ... and at the last token (total - 1). Per
    piece (tokens offset .. offset + length - 1 of its request, stamps start ..):
    the gaps between two multiples of n inside it are counted on the stamp index of the
    earlier one; the gap into the last token, when that is no multiple, and the gap
    from the previous piece's last chunk to this piece's first are listed singly.
    """
    if start.size == 0:
        return np.empty(0), np.empty(0, dtype=np.int64)
    end = offset + length - 1  # the piece's last token position
    lo = -(-offset // n) * n  # first multiple of n in the piece
    hi = (end // n) * n  # last multiple of n in the piece
    mult = lo <= hi
    tail_pos = total - 1
    tail = (tail_pos % n != 0) & (offset <= tail_pos) & (tail_pos <= end)
    # strided runs: gaps at stamp indices k_lo, k_lo + n, ..., (hi - lo) / n of them
    runs = np.where(mult, (hi - lo) // n, 0)
    k_lo = start + (lo - offset)
    size = stamps.size
    run = runs > 0
    marks = np.bincount(k_lo[run], minlength=size + n) - np.bincount(
        (k_lo + runs * n)[run], minlength=size + n
    )
    counts = np.empty_like(marks)
    for r in range(n):
        counts[r::n] = np.cumsum(marks[r::n])
    counts = counts[: max(size - n, 0)]
    values = stamps[n:] - stamps[:-n] if size > n else np.empty(0)
    # each piece's first and last chunk stamp (pieces with no chunk are skipped)
    chunky = mult | tail
    first_k = np.where(mult, k_lo, start + (tail_pos - offset))
    last_k = np.where(tail, start + (tail_pos - offset), start + (hi - offset))
    singles: list[np.ndarray] = []
    # the short last chunk, inside a piece that also holds a multiple of n
    inner = tail & mult
    singles.append(stamps[last_k[inner]] - stamps[(start + (hi - offset))[inner]])
    # seams: from one chunky piece's last chunk to the next chunky piece of that request
    idx = np.flatnonzero(chunky)
    same = req[idx[1:]] == req[idx[:-1]]
    prev, nxt = idx[:-1][same], idx[1:][same]
    singles.append(stamps[first_k[nxt]] - stamps[last_k[prev]])
    extra = np.concatenate(singles)
    keep = counts > 0
    gaps = np.concatenate([values[keep], extra])
    weights = np.concatenate([counts[keep], np.ones(extra.size, dtype=np.int64)])
    return gaps, weights
