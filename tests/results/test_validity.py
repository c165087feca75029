"""The validity gates: a point that measured nothing useful is stored invalid, with why."""

from __future__ import annotations

import pytest

from inferbench.bench.metrics import Lengths
from inferbench.results.record import Identity, Metrics, PointValidity, Pool
from inferbench.results.validity import ValidityBounds, judge_point


def _identity(**update: object) -> Identity:
    base = Identity(
        model="m",
        model_prefix="m",
        precision="fp8",
        framework="vllm",
        hardware_prefill="h100",
        hardware_decode="h100",
        pools=(Pool(role="worker", workers=1, gpus_per_worker=1, tp=1, hardware="h100"),),
        isl=1024,
        osl=1024,
        concurrency=8,
    )
    return base.model_copy(update=update)


def _metrics(completed: int = 80, out_per_req: float = 1024, **update: object) -> Metrics:
    values: dict[str, object] = {
        "duration_s": 10.0,
        "completed": completed,
        "total_input_tokens": completed * 1024,
        "total_output_tokens": int(completed * out_per_req),
        "request_throughput": completed / 10,
        "output_throughput": completed * out_per_req / 10,
        "total_token_throughput": completed * (1024 + out_per_req) / 10,
    }
    values.update(update)
    return Metrics.model_validate(values)


def test_a_sound_point_is_valid() -> None:
    assert judge_point(_identity(), _metrics()) == PointValidity()


def test_no_generated_token_is_invalid_whatever_else_the_file_says() -> None:
    verdict = judge_point(_identity(), _metrics(out_per_req=0))
    assert not verdict.valid
    assert verdict.reasons == (
        "the server generated no tokens (80 requests completed empty; a failed KV transfer"
        " or a broken engine reads like this)",
    )


def test_no_completed_request_is_invalid() -> None:
    verdict = judge_point(_identity(), _metrics(completed=0, failed=8))
    assert "no request completed" in verdict.reasons


def test_short_outputs_beyond_the_tolerance_are_invalid() -> None:
    verdict = judge_point(_identity(range_ratio=1.0), _metrics(out_per_req=700))
    assert verdict.reasons == (
        "700.0 generated tokens per request on average, 1024.0 asked (beyond ±10%)",
    )
    assert judge_point(_identity(range_ratio=1.0), _metrics(out_per_req=1000)).valid


def test_unknown_range_ratio_accepts_any_mean_the_ratio_could_give() -> None:
    # InferenceX's 0.8 ratio gives a mean of 0.9 x osl, which a plain sa-bench file does not
    # record: anything between half and the whole nominal length (plus the tolerance) passes
    assert judge_point(_identity(), _metrics(out_per_req=921.6)).valid
    assert judge_point(_identity(), _metrics(out_per_req=470)).valid
    assert not judge_point(_identity(), _metrics(out_per_req=300)).valid
    assert not judge_point(_identity(), _metrics(out_per_req=1300)).valid


def test_the_clients_own_lengths_win_over_the_identity() -> None:
    lengths = Lengths(nominal_mean_input=1024, nominal_mean_output=512, achieved_mean_output=512)
    assert judge_point(_identity(), _metrics(out_per_req=512), lengths=lengths).valid
    assert not judge_point(_identity(), _metrics(out_per_req=1024), lengths=lengths).valid


def test_replays_are_not_held_to_fixed_lengths() -> None:
    assert judge_point(_identity(), _metrics(out_per_req=37), fixed_lengths=False).valid


@pytest.mark.parametrize(
    ("update", "expected"),
    [
        ({"failed": 20}, "20 of 100 requests failed (20.0%, above 5.0%)"),
        (
            {"gate_failure": "3 prompts had the wrong length"},
            "the load generator judged it untrustworthy: 3 prompts had the wrong length",
        ),
        (
            {"complete": False, "incomplete_reason": "interrupted"},
            "the point did not run to the end (interrupted)",
        ),
    ],
)
def test_client_verdicts_make_a_point_invalid(update: dict[str, object], expected: str) -> None:
    assert judge_point(_identity(), _metrics(**update)).reasons == (expected,)


def test_bounds_are_settings() -> None:
    loose = ValidityBounds(max_failure_rate=0.5, length_tolerance=0.5)
    assert judge_point(
        _identity(range_ratio=1.0), _metrics(out_per_req=600, failed=20), bounds=loose
    ).valid
