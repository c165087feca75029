"""Engine flag knowledge: the limit flags per engine, and how flag values read."""

from __future__ import annotations

import pytest

from inferbench.engines import Limit, engine, flag_engines
from inferbench.engines.flags import EngineFlags, batch_schedulers
from inferbench.engines.values import enables, flag_int, switch_on


def spelled(name: str, flag: str) -> str:
    return engine(name).spelled(flag)


def test_every_engine_names_a_known_flag_for_every_limit() -> None:
    for spec in flag_engines():
        assert set(spec.limit_flags) == set(Limit)
        for names in spec.limit_flags.values():
            assert names and set(names) <= spec.known_flags, (spec.key, names)


def test_limit_takes_the_first_flag_given_a_value() -> None:
    flags = EngineFlags("vllm", {"cuda-graph-sizes": [8, 16], "max-cudagraph-capture-size": None})
    hit = flags.limit(Limit.CUDAGRAPH)
    assert hit is not None and (hit.written, hit.value) == ("cuda-graph-sizes", [8, 16])
    sglang = EngineFlags("sglang", {"speculative-algo": "EAGLE", "context_length": 9472})
    assert sglang.get("context-length") == 9472
    spec = sglang.limit(Limit.SPECULATIVE)
    assert spec is not None and spec.written == "speculative-algo"
    assert EngineFlags("trtllm", {}).limit(Limit.MAX_NUM_SEQS) is None
    assert EngineFlags("other", {"max-num-seqs": 4}).limit(Limit.MAX_NUM_SEQS) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (64, 64),
        (" 64 ", 64),
        (True, None),
        ("64.5", None),
        ([1, "8", 4], 8),
        ({"max_cudagraph_capture_size": 512, "max_batch_size": 2}, 512),
        ({"batch_sizes": [1, 2, 32]}, 32),
        ({"mode": 3}, None),
        (None, None),
    ],
)
def test_flag_int(value: object, expected: int | None) -> None:
    assert flag_int(value) == expected


def test_a_switch_and_a_valued_flag_read_empty_and_words_differently() -> None:
    # `enable-expert-parallel:` given empty is on; `speculative-algorithm: ""` is not
    assert switch_on("") and not enables("")
    assert enables("EAGLE") and not switch_on("EAGLE")
    for off in ("false", "0", "no", "off", None):
        assert not switch_on(off) and not enables(off)
    assert switch_on(" True ") and enables({"method": "mtp"}) and not enables("None")


def test_spelling_and_schedulers() -> None:
    assert spelled("trtllm", "speculative-config") == "speculative_config"
    assert spelled("vllm", "--speculative_config") == "speculative-config"
    assert batch_schedulers("sglang", 8) == 1
    assert batch_schedulers("vllm", 8) == batch_schedulers("trtllm", 8) == 8
