"""Prefix caching and a CPU DRAM offload tier for one DP rank (vLLM APC, SGLang radix/HiCache).

Blocks are named by a hash chain over their tokens (block i's hash covers blocks 0..i), so
two prompts share exactly their common full-block prefix, as vLLM's automatic prefix caching
and SGLang's radix tree do. The GPU tier is the rank's own KV pool: blocks of finished
requests stay cached in free space, least recently used first out when a request needs the
room; blocks of running requests are in use and can be hit (a hit never saves their memory:
the simulator allocates every request its whole context, a conservative simplification).
With an offload tier, blocks evicted from the GPU are kept in host DRAM (its own LRU, sized
from the job's `total-cpu-dram-gb`), and a request whose prefix continues there loads those
blocks over the host link: the step that admits it lasts at least the load time. Writes to
DRAM (GPU -> CPU) are counted, not timed: the engines overlap them with compute.
Only prompt blocks are cached: a replayed conversation's next turn carries the trace's
recorded output, not what the engine generated.
"""

from __future__ import annotations

from collections import OrderedDict
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
import yaml
from pydantic import Field

from inferbench.core.model import FrozenModel


class CacheSpec(FrozenModel):
    """Prefix caching and offload of a deployment (per worker figures derived in `build`)."""

    prefix_caching: bool = True
    cpu_offload_gb: float = Field(default=0.0, ge=0, description="host DRAM for KV, whole job")
    backend: str | None = None  # vllm-native, vllm-simple, lmcache, hicache, mooncake
    host_link_gbps: float | None = Field(default=None, gt=0, description="None: host_links.yaml")
    cache_aware_routing: bool = True


@lru_cache(maxsize=1)
def _links() -> dict[str, Any]:
    text = resources.files("inferbench.sim").joinpath("host_links.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def host_link_bytes_per_s(gpu_key: str, override_gbps: float | None = None) -> float:
    data = _links()
    entry = data["links"].get(gpu_key)
    gbps = override_gbps or (entry["gbps"] if entry else data["default_gbps"])
    return float(gbps) * 1e9 * float(data["efficiency"])


def token_block_hashes(ids: Any, block_size: int, salt: int = 0) -> tuple[int, ...]:
    """Hash chain of the full blocks of a token-id prompt (the sim server's view)."""
    try:
        arr = np.asarray(ids, dtype=np.int64)
    except (TypeError, ValueError):  # not a flat list of token ids
        return ()
    n = len(arr) // block_size if arr.ndim == 1 else 0
    if n == 0:
        return ()
    rows = arr[: n * block_size].reshape(n, block_size)
    out = []
    prev = salt
    for row in rows:
        prev = hash((prev, row.tobytes()))
        out.append(prev)
    return tuple(out)


class TierStats:
    """Counters a rank's cache adds to (the server's /metrics and the estimate read them)."""

    __slots__ = ("cpu_hit_tokens", "gpu_hit_tokens", "load_bytes", "queried_tokens", "write_bytes")

    def __init__(self) -> None:
        self.queried_tokens = 0
        self.gpu_hit_tokens = 0
        self.cpu_hit_tokens = 0
        self.load_bytes = 0.0  # CPU -> GPU
        self.write_bytes = 0.0  # GPU -> CPU


class PrefixCache:
    """The cached blocks of one rank: in use (refcounted), GPU free-but-cached, host DRAM."""

    def __init__(
        self,
        block_size: int,
        *,
        cpu_blocks: int = 0,
        bytes_per_token: float = 0.0,
        link_bytes_per_s: float = 0.0,
        stats: TierStats | None = None,
    ) -> None:
        self.block_size = block_size
        self.in_use: dict[int, int] = {}
        self.gpu: OrderedDict[int, None] = OrderedDict()  # evictable, LRU first
        self.cpu: OrderedDict[int, None] = OrderedDict()
        self.cpu_blocks = cpu_blocks
        self.block_bytes = bytes_per_token * block_size
        self.link = link_bytes_per_s
        self.stats = stats or TierStats()
        self.step_load_s = 0.0  # load time of requests admitted in the current step
        self.version = 0  # bumped when blocks are added (admissions); evictions do not

    def lookup(self, hashes: tuple[int, ...], prompt: int) -> tuple[int, int]:
        """(GPU-hit tokens, DRAM-hit tokens) of a prompt; at least one token is computed."""
        end = min(len(hashes), (prompt - 1) // self.block_size)  # the last token is computed
        in_use, gpu, cpu = self.in_use, self.gpu, self.cpu
        g = 0
        while g < end and (hashes[g] in in_use or hashes[g] in gpu):
            g += 1
        c = g
        while c < end and hashes[c] in cpu:
            c += 1
        return g * self.block_size, (c - g) * self.block_size

    def admit(self, hashes: tuple[int, ...], prompt: int) -> int:
        """A request starts its prefill: pin its blocks; returns tokens it need not compute."""
        gpu_hit, cpu_hit = self.lookup(hashes, prompt)
        st = self.stats
        st.queried_tokens += prompt
        st.gpu_hit_tokens += gpu_hit
        st.cpu_hit_tokens += cpu_hit
        if cpu_hit:
            loaded = cpu_hit * self.block_bytes / self.block_size
            st.load_bytes += loaded
            self.step_load_s += loaded / self.link if self.link else 0.0
        in_use, gpu = self.in_use, self.gpu
        for h in hashes:
            in_use[h] = in_use.get(h, 0) + 1
            gpu.pop(h, None)
        self.version += 1
        return gpu_hit + cpu_hit

    def release(self, hashes: tuple[int, ...]) -> None:
        """A request ended (or was preempted): its blocks become cached, most recent last."""
        for h in hashes:
            n = self.in_use.get(h, 0) - 1
            if n > 0:
                self.in_use[h] = n
                continue
            self.in_use.pop(h, None)
            self.gpu[h] = None
            self.gpu.move_to_end(h)

    def fit(self, free_blocks: int) -> None:
        """Evict LRU cached blocks until they fit the pool's free blocks (into DRAM if any)."""
        while len(self.gpu) > max(free_blocks, 0):
            h, _ = self.gpu.popitem(last=False)
            if self.cpu_blocks:
                if h not in self.cpu:
                    self.stats.write_bytes += self.block_bytes
                self.cpu[h] = None
                self.cpu.move_to_end(h)
                while len(self.cpu) > self.cpu_blocks:
                    self.cpu.popitem(last=False)

    def take_step_load(self) -> float:
        load, self.step_load_s = self.step_load_s, 0.0
        return load

    @property
    def cpu_used_blocks(self) -> int:
        return len(self.cpu)
