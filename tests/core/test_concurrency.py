import pytest

from inferbench.core.concurrency import (
    ConcRule,
    expand_concurrency,
    expand_range,
    filter_list,
    geometric_range,
)


def test_range_doubles_and_always_ends_on_end() -> None:
    assert geometric_range(4, 100) == [4, 8, 16, 32, 64, 100]


def test_range_step_four() -> None:
    assert geometric_range(4, 100, 4) == [4, 16, 64, 100]


def test_range_exact_power_has_no_duplicate_end() -> None:
    assert geometric_range(4, 64) == [4, 8, 16, 32, 64]
    assert geometric_range(7, 7) == [7]


@pytest.mark.parametrize(("start", "end", "step"), [(0, 4, 2), (8, 4, 2), (4, 8, 1)])
def test_range_rejects_bad_input(start: int, end: int, step: int) -> None:
    with pytest.raises(ValueError):
        geometric_range(start, end, step)


def test_min_conc_raises_the_start_of_a_range() -> None:
    assert expand_range(4, 100, min_conc=10) == [10, 20, 40, 80, 100]
    assert expand_range(4, 100, min_conc=101) == []


def test_max_conc_lowers_the_end_or_gives_one_point() -> None:
    assert expand_range(4, 100, max_conc=50) == [4, 8, 16, 32, 50]
    assert expand_range(64, 256, max_conc=16) == [16]


def test_list_used_as_written_then_filtered() -> None:
    assert filter_list([64, 8, 2048]) == [64, 8, 2048]
    assert filter_list([8, 64, 2048], min_conc=16) == [64, 2048]
    assert filter_list([8, 64], min_conc=100) == []
    assert filter_list([512, 2048], max_conc=256) == [256]
    assert filter_list([8, 512], max_conc=256) == [8]


def test_expand_needs_exactly_one_form() -> None:
    assert expand_concurrency(conc_list=[1, 2]) == [1, 2]
    assert expand_concurrency(conc_start=4, conc_end=16, step=4) == [4, 16]
    with pytest.raises(ValueError):
        expand_concurrency(conc_list=[1], conc_start=1, conc_end=2)
    with pytest.raises(ValueError):
        expand_concurrency(conc_start=1)


def test_rules_follow_the_kind_of_entry() -> None:
    """Single-node clamps the range, multinode filters the full range, agentic filters strictly."""
    rng = dict(conc_start=4, conc_end=100, min_conc=10)
    assert expand_concurrency(**rng) == [10, 20, 40, 80, 100]
    assert expand_concurrency(**rng, rule=ConcRule.FILTER) == [16, 32, 64, 100]
    assert expand_concurrency(**rng, rule=ConcRule.STRICT) == [16, 32, 64, 100]
    low = dict(conc_start=64, conc_end=256, max_conc=16)
    assert expand_concurrency(**low) == [16]
    assert expand_concurrency(**low, rule=ConcRule.FILTER) == [16]
    assert expand_concurrency(**low, rule=ConcRule.STRICT) == []
    band = dict(conc_list=[1, 8, 64, 512], min_conc=4, max_conc=100)
    assert expand_concurrency(**band, rule=ConcRule.STRICT) == [8, 64]
