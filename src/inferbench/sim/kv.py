"""KV-cache block accounting of one DP rank, as vLLM's paged KV cache does it."""

from __future__ import annotations

from inferbench.core.errors import InputError


class BlockPool:
    """A fixed number of KV blocks of `block_size` tokens; counts only, no contents."""

    __slots__ = ("block_size", "free", "total")

    def __init__(self, total_blocks: int, block_size: int = 16) -> None:
        if block_size < 1:
            raise InputError(f"block size must be positive, got {block_size}")
        self.total = total_blocks
        self.block_size = block_size
        self.free = total_blocks

    def blocks_for(self, tokens: int) -> int:
        """Blocks that hold `tokens` tokens."""
        return -(-tokens // self.block_size)

    def take(self, blocks: int) -> bool:
        if blocks > self.free:
            return False
        self.free -= blocks
        return True

    def give_back(self, blocks: int) -> None:
        self.free += blocks
        if self.free > self.total:  # an accounting bug, never a user error
            raise AssertionError(f"freed more KV blocks than exist ({self.free} > {self.total})")

    @property
    def used(self) -> int:
        return self.total - self.free

    @property
    def usage(self) -> float:
        """Fraction of blocks in use (vLLM's kv_cache_usage_perc)."""
        return self.used / self.total if self.total else 0.0
