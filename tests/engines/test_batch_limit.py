"""The batch-limit flag a launcher writes, per engine, for a per-DP-rank batch."""

from __future__ import annotations

import pytest

from inferbench.engines import engine
from inferbench.engines.flags import batch_schedulers


def batch_limit(name: str, per_rank: int, dp: int) -> int:
    return engine(name).batch_limit(per_rank, dp)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
@pytest.mark.parametrize("dp", [1, 4, 8])
def test_the_written_limit_gives_every_rank_its_batch(engine: str, dp: int) -> None:
    # what the checks read back (flag x schedulers) is the whole worker's batch
    assert batch_limit(engine, 32, dp) * batch_schedulers(engine, dp) == 32 * dp


def test_sglang_writes_the_worker_total_and_the_others_the_per_rank_batch() -> None:
    assert batch_limit("sglang", 32, 8) == 256
    assert batch_limit("vllm", 32, 8) == batch_limit("trtllm", 32, 8) == 32
