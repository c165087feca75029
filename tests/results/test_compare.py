from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from results_fixtures import sa_bench, sa_bench_requests, write_json, write_run_dir

from inferbench.core.errors import InputError
from inferbench.report.markdown import comparison_markdown
from inferbench.results.compare import Delta, PointDelta, compare_selectors, parse_selector
from inferbench.results.ingest import ingest_paths
from inferbench.results.noise import NoiseModel, failure_interval
from inferbench.results.store import RecordFilter, open_store


def two_runs(tmp_path: Path, *, slow: float = 1.0, n: int = 400, head_repeats: int = 1) -> str:
    """Two runs of one job: conc 64 as `requests` draws it (head `slow`er), and conc 128
    and 256 with sa-bench summaries only (no per-request lists: not judged)."""
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    base = write_run_dir(tmp_path / "runs", "base", failed_job=False, osl=64)
    head = write_run_dir(tmp_path / "runs", "head", failed_job=False, osl=64)
    summary = {"total_output_tokens": 4 * 64}  # the job's 64 output tokens a request
    base128 = sa_bench(128, total_token_throughput=900.0, **summary)  # as write_run_dir
    write_json(base / "fp-disagg-1" / "results" / "conc128.json", base128)
    write_json(
        base / "fp-disagg-1" / "results" / "conc64.json", sa_bench_requests(n, seed=100, conc=64)
    )
    results = head / "fp-disagg-1" / "results"
    for k in range(1, head_repeats + 1):
        name = "conc64.json" if k == 1 else f"conc64_r{k}.json"
        write_json(results / name, sa_bench_requests(n, seed=1 + k, slow=slow, conc=64))
    write_json(results / "conc128.json", sa_bench(128, total_token_throughput=480.0, **summary))
    write_json(results / "conc256.json", sa_bench(256, **summary))
    ingest_paths([base, head], url)
    return url


def _by_metric(point: PointDelta) -> dict[str, Delta]:
    return {d.metric.name: d for d in point.deltas}


def test_same_code_twice_is_noise_with_an_interval_around_zero(tmp_path: Path) -> None:
    url = two_runs(tmp_path)
    with open_store(url) as store:
        cmp = compare_selectors(store, "base", "run:head", threshold=0.05)
    point = next(p for p in cmp.points if "conc 64" in p.label)
    assert point.verdict == "noise"
    for d in point.deltas:  # every interval overlaps the tolerance band: none is called
        assert d.verdict == "noise" and d.interval is not None, d
        assert d.interval.low < 0.05 and d.interval.high > -0.05 and d.samples == (400, 400)
    assert _by_metric(point)["ttft_median"].interval.low < 0  # type: ignore[union-attr]
    # points without per-request samples are shown, not judged (never a regression)
    unjudged = next(p for p in cmp.points if "conc 128" in p.label)
    tput = _by_metric(unjudged)["total_tput_per_gpu"]
    assert unjudged.verdict == "unjudged" and tput.change == pytest.approx(480 / 900 - 1)
    assert tput.interval is None and cmp.count("regression") == 0
    assert len(cmp.only_head) == 1 and not cmp.only_base


def test_a_ten_percent_slowdown_is_a_regression_beyond_the_tolerance(tmp_path: Path) -> None:
    url = two_runs(tmp_path, slow=1.1)
    with open_store(url) as store:
        cmp = compare_selectors(store, "base", "head", threshold=0.05)
    point = cmp.points[0]
    assert point.verdict == "regression" and "conc 64" in point.label
    deltas = _by_metric(point)
    for name in ("ttft_median", "tpot_median", "e2el_median", "total_tput_per_gpu"):
        d = deltas[name]
        assert d.verdict == "regression", d
        assert d.interval is not None and d.interval.low <= d.change <= d.interval.high
    assert deltas["failure_rate"].verdict == "noise"
    # the same change with a tolerance its interval does not clear is noise
    with open_store(url) as store:
        loose = compare_selectors(store, "base", "head", threshold=0.09)
    same = next(p for p in loose.points if "conc 64" in p.label)
    assert _by_metric(same)["tpot_median"].verdict == "noise"


def test_few_samples_are_not_judged(tmp_path: Path) -> None:
    url = two_runs(tmp_path, slow=1.5, n=20)
    with open_store(url) as store:
        cmp = compare_selectors(store, "base", "head")
        fewer = compare_selectors(store, "base", "head", noise=NoiseModel(min_samples=10))
    point = next(p for p in cmp.points if "conc 64" in p.label)
    assert point.verdict == "unjudged" and cmp.count("regression") == 0
    assert _by_metric(point)["ttft_median"].interval_text() == "(n=20/20)"
    assert fewer.count("regression") == 1


def test_intervals_are_seeded_and_repeats_are_pooled(tmp_path: Path) -> None:
    url = two_runs(tmp_path, head_repeats=3)
    with open_store(url) as store:
        first = compare_selectors(store, "base", "head")
        again = compare_selectors(store, "base", "head")
        other_seed = compare_selectors(store, "base", "head", noise=NoiseModel(seed=7))
    point = next(p for p in first.points if "conc 64" in p.label)
    assert point.repeats == (1, 3) and point.verdict == "noise"
    ttft = _by_metric(point)["ttft_median"]
    assert ttft.samples == (400, 1200)
    same = _by_metric(next(p for p in again.points if "conc 64" in p.label))["ttft_median"]
    assert same.interval == ttft.interval
    moved = _by_metric(next(p for p in other_seed.points if "conc 64" in p.label))
    assert moved["ttft_median"].interval != ttft.interval


def test_failure_rate_interval_in_absolute_points() -> None:
    none_failed = failure_interval((0, 400), (0, 400), confidence=0.95)
    assert none_failed is not None and none_failed.low < 0 < none_failed.high
    worse = failure_interval((0, 400), (80, 400), confidence=0.95)
    assert worse is not None and 0.05 < worse.low < 0.2 < worse.high


def test_markdown_lists_regressions_first(tmp_path: Path) -> None:
    url = two_runs(tmp_path, slow=1.1)
    with open_store(url) as store:
        md = comparison_markdown(compare_selectors(store, "base", "head"))
    assert md.startswith("### inferbench: `head` vs `base`")
    assert "**1 regressions**" in md and "±5% tolerance" in md and "1 not judged" in md
    rows = [line for line in md.splitlines() if line.startswith("| 🔴") or line.startswith("| 🟢")]
    assert len(rows) == 1 and "conc 64" in rows[0]
    assert re.search(r"\(\+\d+\.\d% \[\+\d+\.\d%, \+\d+\.\d%\]\)", rows[0]), rows[0]
    assert "1 only in head" in md


def test_selectors() -> None:
    assert parse_selector("abc") == RecordFilter(run_id="abc")
    assert parse_selector("tag:nightly") == RecordFilter(tag="nightly")
    assert parse_selector("model=dsr1,isl=8192,run-id=r") == RecordFilter(
        run_id="r", model_prefix="dsr1", isl=8192
    )
    with pytest.raises(InputError, match="unknown selector key"):
        parse_selector("colour=red")


def test_unknown_selector_matches_nothing(tmp_path: Path) -> None:
    url = two_runs(tmp_path)
    with open_store(url) as store, pytest.raises(InputError, match="no stored results"):
        compare_selectors(store, "base", "nope")


def _history(url: str, out: Path) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """The report's history view: (its data, (regressed, unjudged) tok/s/GPU bits per record)."""
    from inferbench.report import build_report
    from inferbench.report.metrics import y_axes
    from inferbench.report.prices import load_prices

    html = build_report(url, out, plots=False).dashboard.read_text()
    m = re.search(r'<script type="application/json" id="ib-data">(.*?)</script>', html, re.S)
    assert m
    h = json.loads(m.group(1))["history"]
    bit = 1 << [a.key for a in y_axes(load_prices())].index("total_tput")
    return h, [(r & bit, u & bit) for r, u in zip(h["reg"], h["unj"], strict=True)]


def test_history_judges_each_step_like_results_compare(tmp_path: Path) -> None:
    # same code: conc 64 moved by noise alone, the summary-only points cannot be judged
    h, marks = _history(two_runs(tmp_path / "same"), tmp_path / "same" / "out")
    assert not any(reg for reg, _ in marks)
    assert sum(1 for _, unj in marks if unj) == 1  # conc 128's second record: no samples
    # 10% slower: conc 64 is a regression in history as in compare
    h, marks = _history(two_runs(tmp_path / "slow", slow=1.1), tmp_path / "slow" / "out")
    assert sum(1 for reg, _ in marks if reg) == 1
    # and a tolerance its interval does not clear leaves it unmarked, as compare does
    with open_store(f"sqlite:///{tmp_path / 'slow' / 'r.sqlite'}") as store:
        assert compare_selectors(store, "base", "head", threshold=0.05).count("regression") == 1


def test_a_regression_without_a_column_is_named_in_its_row() -> None:
    from inferbench.report.markdown import _row
    from inferbench.results.compare import METRICS
    from inferbench.results.noise import Interval

    specs = {m.name: m for m in METRICS}
    calm = [
        Delta(m, 1.0, 1.0, 0.0, "noise", Interval(-0.01, 0.01))
        for m in METRICS
        if "p90" not in m.name
    ]
    worse = Delta(specs["tpot_p90"], 4.0, 4.5, 0.125, "regression", Interval(0.07, 0.19))
    record = None
    point = PointDelta("gate conc 16", record, record, (*calm, worse))  # type: ignore[arg-type]
    row = _row(point)
    assert point.verdict == "regression" and row.startswith("| 🔴 |")
    assert "gate conc 16 (TPOT p90 ms **4 → 4.5 (+12.5% [+7.0%, +19.0%])**)" in row
