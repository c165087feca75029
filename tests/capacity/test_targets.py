from __future__ import annotations

import pytest

from inferbench.bench.result import PointResult
from inferbench.capacity.targets import Target, parse_targets
from inferbench.core.errors import InputError

from .conftest import shaped


def test_targets_read_units_and_both_directions() -> None:
    got = parse_targets("ttft_p90<=2s, tpot_p50<=50ms,e2el_p99<=30000,interactivity_p90>=20")
    assert got == (
        Target(metric="ttft", stat="p90", bound=2000.0),
        Target(metric="tpot", stat="median", bound=50.0),
        Target(metric="e2el", stat="p99", bound=30000.0),
        Target(metric="interactivity", stat="p90", bound=20.0),
    )
    assert [t.upper for t in got] == [True, True, True, False]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "no target given"),
        ("ttft<=2s", "is not a target"),
        ("ttft_p95<=2s", "is not a target"),
        ("queue_p90<=2s", "unknown metric"),
        ("ttft_p90>=2s", "ttft takes <="),
        ("interactivity_p90<=20", "interactivity takes >="),
        ("tpot_p90<=50tok/s", "is not a unit of tpot"),
        ("ttft_p90<=0ms", "above 0"),
    ],
)
def test_a_bad_target_is_named(text: str, says: str) -> None:
    with pytest.raises(InputError) as err:
        parse_targets(text)
    assert says in str(err.value) and "--slo" in err.value.render()


def test_values_come_from_the_result_file(template: PointResult) -> None:
    point = shaped(template, p90_ttft_ms=1500.0, median_tpot_ms=40.0)
    ttft, tpot = parse_targets("ttft_p90<=2s,tpot_median<=50ms")
    assert ttft.value(point) == 1500.0 and ttft.slack(1500.0) == pytest.approx(0.25)
    assert tpot.value(point) == 40.0 and tpot.slack(60.0) == pytest.approx(-0.2)
    # 90% of requests at least this fast: interactivity's 10th percentile
    (speed,) = parse_targets("interactivity_p90>=20")
    assert speed.value(point) == template.inferbench.interactivity.p10
