"""srtctl's union fields (`concurrencies: list[int] | str`): a value loads when one of the
alternatives loads it, as marshmallow_dataclass's Union does (the verdicts below are the
real srtctl's; tests/upstream compares the whole key table with it)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from inferbench.config.srtctl_schema import schema_problems

RECIPE: dict[str, Any] = {
    "name": "r",
    "model": {"path": "m", "container": "c", "precision": "fp8"},
    "resources": {"gpu_type": "h200", "gpus_per_node": 8, "agg_nodes": 1},
    "backend": {"type": "vllm"},
    "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": "4", "req_rate": "inf"},
}
NEITHER = "Not a valid list. Or: Not a valid string."


def _problems(**benchmark: Any) -> list[str]:
    recipe = copy.deepcopy(RECIPE)
    recipe["benchmark"].update(benchmark)
    return [p.render() for p in schema_problems(recipe)]


@pytest.mark.parametrize(
    "benchmark",
    [{"concurrencies": "2048"}, {"concurrencies": [4, 8]}, {"concurrencies": ["4", 8]},
     {"req_rate": 10}, {"req_rate": 1.5}, {"concurrencies": None}],
)  # fmt: skip
def test_a_value_one_alternative_loads_is_accepted(benchmark: dict[str, Any]) -> None:
    assert _problems(**benchmark) == []


@pytest.mark.parametrize(
    ("benchmark", "message"),
    [
        ({"concurrencies": True}, f"benchmark.concurrencies: {NEITHER}"),
        ({"concurrencies": 2048}, f"benchmark.concurrencies: {NEITHER}"),
        ({"concurrencies": [4, "x"]},
         "benchmark.concurrencies: 1: Not a valid integer. Or: Not a valid string."),
        ({"req_rate": True}, "benchmark.req_rate: Not a valid string. Or: Not a valid integer."),
    ],
)  # fmt: skip
def test_a_value_no_alternative_loads_is_refused(benchmark: dict[str, Any], message: str) -> None:
    assert _problems(**benchmark) == [message]
