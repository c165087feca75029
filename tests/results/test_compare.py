from __future__ import annotations

from pathlib import Path

import pytest
from results_fixtures import sa_bench, write_json, write_run_dir

from inferbench.errors import InputError
from inferbench.report.markdown import comparison_markdown
from inferbench.results.compare import compare_selectors, parse_selector
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import RecordFilter, open_store


def two_runs(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    base = write_run_dir(tmp_path / "runs", "base", failed_job=False)
    head = write_run_dir(tmp_path / "runs", "head", failed_job=False)
    results = head / "fp-disagg-1" / "results"
    # conc64: throughput -20% (regression); conc128: +2% (noise)
    write_json(results / "conc64.json", sa_bench(64, total_token_throughput=480.0))
    write_json(results / "conc128.json", sa_bench(128, total_token_throughput=918.0))
    write_json(head / "fp-disagg-1" / "results" / "conc256.json", sa_bench(256))
    ingest_paths([base, head], url)
    return url


def test_per_point_deltas_with_noise_threshold(tmp_path: Path) -> None:
    url = two_runs(tmp_path)
    with open_store(url) as store:
        cmp = compare_selectors(store, "base", "run:head", threshold=0.05)
    assert [p.verdict for p in cmp.points] == ["regression", "noise"]
    worst = cmp.points[0]
    assert "conc 64" in worst.label
    tput = next(d for d in worst.deltas if d.metric.name == "total_tput_per_gpu")
    assert tput.change == pytest.approx(-0.2)
    assert len(cmp.only_head) == 1 and not cmp.only_base
    with open_store(url) as store:
        loose = compare_selectors(store, "base", "head", threshold=0.25)
    assert loose.count("regression") == 0


def test_markdown_lists_regressions_first(tmp_path: Path) -> None:
    url = two_runs(tmp_path)
    with open_store(url) as store:
        md = comparison_markdown(compare_selectors(store, "base", "head"))
    assert md.startswith("### inferbench: `head` vs `base`")
    assert "**1 regressions**" in md and "±5% noise threshold" in md
    rows = [line for line in md.splitlines() if line.startswith("| 🔴") or line.startswith("| 🟢")]
    assert len(rows) == 1 and "conc 64" in rows[0] and "-20.0%" in rows[0]
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
