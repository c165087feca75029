"""The conventions users name on the command line: range ratios, concurrency lists, SLOs,
and the sa-bench preset (one definition each)."""

from __future__ import annotations

import numpy as np
import pytest

from inferbench.bench.api import sa_bench_point, sa_bench_workload
from inferbench.bench.arguments import build_workload, load_points, parse_slo
from inferbench.bench.metrics import Slo
from inferbench.bench.preset import SA_BENCH, Preset
from inferbench.bench.schedule import parse_concurrency_list
from inferbench.bench.workload import RangeMode, draw_lengths, length_bounds
from inferbench.core.errors import InputError


@pytest.mark.parametrize(
    ("mode", "bounds"),
    [
        (RangeMode.INFERENCEX, (819, 1024)),  # U[floor(L r), L]
        (RangeMode.VLLM, (204, 1844)),  # U[floor(L(1-r)), ceil(L(1+r))]
        (RangeMode.SGLANG, (819, 1024)),  # U[max(1, int(L r)), L]
    ],
)
def test_range_ratio_conventions(mode: RangeMode, bounds: tuple[int, int]) -> None:
    assert length_bounds(1024, 0.8, mode) == bounds
    drawn = draw_lengths(1024, 0.8, mode, np.random.default_rng(0), 20_000)
    assert (drawn.min(), drawn.max()) == bounds  # both ends inclusive and reached
    again = draw_lengths(1024, 0.8, mode, np.random.default_rng(0), 20_000)
    assert np.array_equal(drawn, again)


def test_sglang_default_ratio_zero_means_one_to_l() -> None:
    assert length_bounds(100, 0.0, RangeMode.SGLANG) == (1, 100)
    assert length_bounds(100, 1.0, RangeMode.INFERENCEX) == (100, 100)


def test_concurrency_lists_in_both_spellings() -> None:
    assert parse_concurrency_list("4,8,16") == [4, 8, 16]
    assert parse_concurrency_list("4x8x16") == [4, 8, 16]
    assert parse_concurrency_list(" 8 x 4 , 8 ") == [8, 4]
    for bad in ("", "4;8", "-4", "4,,8", "0"):
        with pytest.raises(InputError):
            parse_concurrency_list(bad)


def test_slo_parsing() -> None:
    assert parse_slo(None) is None
    assert parse_slo("ttft=2000,tpot=50ms,e2el_ms=60000") == Slo(
        ttft_ms=2000.0, tpot_ms=50.0, e2el_ms=60000.0
    )
    for bad in ("itl=5", "ttft=fast", "ttft=-1"):
        with pytest.raises(InputError) as err:
            parse_slo(bad)
        assert err.value.location is not None and err.value.location.key == "--slo"


def test_sa_bench_preset_is_one_definition() -> None:
    (cli,) = load_points("64", None, 1.0, None, None, None, Preset.SA_BENCH)
    assert cli == sa_bench_point(64)
    assert (cli.num_prompts, cli.warmups) == (640, 128)
    assert SA_BENCH.max_failure_rate == 0.05
    workload = build_workload(1024, 512, None, "jsonl", None, None, None, Preset.SA_BENCH)
    assert workload == sa_bench_workload(1024, 512)
    # an explicit count or warm-up still wins over the preset
    (own,) = load_points("64", None, 1.0, 100, 0, None, Preset.SA_BENCH)
    assert (own.num_prompts, own.warmups) == (100, 0)


def test_without_a_preset_the_counts_are_asked_for() -> None:
    with pytest.raises(InputError, match="--num-prompts"):
        load_points("8", None, 1.0, None, None, None, None)
    with pytest.raises(InputError, match="--range-mode"):
        build_workload(1024, 512, None, "jsonl", None, 0.8, None, None)


@pytest.mark.parametrize(
    "concurrency, rate, prompts, option",
    [
        (None, None, 0, "--num-prompts"),  # a wrong count is named before the missing load
        (None, None, -1, "--num-prompts"),
        ("8", None, 0, "--num-prompts"),  # 0 is a value, not "unset" (sa-bench's count)
        (None, -1.0, 10, "--request-rate"),
        (None, float("nan"), 10, "--request-rate"),
        (None, None, 10, "--concurrency"),
    ],
)
def test_a_bad_load_value_names_its_own_option(
    concurrency: str | None, rate: float | None, prompts: int, option: str
) -> None:
    with pytest.raises(InputError) as err:
        load_points(concurrency, rate, 1.0, prompts, None, None, Preset.SA_BENCH)
    assert err.value.location.key == option and err.value.hint


def test_an_slo_without_a_number_says_how_to_write_one() -> None:
    for bad in ("ttft", "ttft=abc"):
        with pytest.raises(InputError, match="needs a number of milliseconds") as err:
            parse_slo(bad)
        assert err.value.hint is not None and "ttft=" in err.value.hint
