"""Cache-aware routing between DP ranks, after SGLang's router.

A request goes to the rank holding the longest prefix of it (GPU or DRAM tier), the
least-loaded such rank on ties, unless the ranks are out of balance: when the busiest
rank's load exceeds the idlest's by more than `abs_threshold` requests and by a factor
`rel_threshold`, the request goes to the least-loaded rank (SGLang's defaults: 64, 1.5).
SGLang routes on an approximate tree of what it routed; the simulator asks the ranks'
actual caches, an upper bound on what the router can know.
"""

from __future__ import annotations

from inferbench.sim.engine import RankRouter, Worker
from inferbench.sim.scheduler import RankScheduler, Seq


class CacheAwareRouter(RankRouter):
    def __init__(
        self,
        workers: list[Worker],
        *,
        abs_threshold: int = 64,
        rel_threshold: float = 1.5,
        by_prefill_tokens: bool = False,
    ) -> None:
        # by_prefill_tokens: the fallback's load measure (a prefill pool's queued tokens)
        super().__init__(workers, by_prefill_tokens=by_prefill_tokens)
        self.abs_threshold = abs_threshold
        self.rel_threshold = rel_threshold

    def pick(self, seq: Seq | None = None) -> tuple[Worker, RankScheduler]:
        if seq is None or not seq.hashes or len(self.slots) == 1:
            return super().pick(seq)
        loads = [rank.load for _, rank in self.slots]
        low, high = min(loads), max(loads)
        if high - low > self.abs_threshold and high > self.rel_threshold * low:
            return super().pick(seq)
        best: tuple[Worker, RankScheduler] | None = None
        best_key = (-1, 0)
        for (worker, rank), load in zip(self.slots, loads, strict=True):
            if rank.prefix is None:
                continue
            gpu, cpu = rank.prefix.lookup(seq.hashes, seq.prompt)
            key = (gpu + cpu, -load)
            if best is None or key > best_key:
                best, best_key = (worker, rank), key
        return best if best is not None and best_key[0] > 0 else super().pick(seq)
