from __future__ import annotations

import json
import re
from pathlib import Path

from inferbench.report import build_report
from inferbench.report.dashboard import MAX_POINTS_PER_SERIES, dashboard_data
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import open_store
from inferbench.results.synthetic import SyntheticConfig, write_run_dir


def store_with_two_runs(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    configs = [SyntheticConfig(), SyntheticConfig(framework="vllm", tp=4, precision="fp4")]
    ingest_paths([write_run_dir(tmp_path / "runs", "old", configs, seed=1)], url)
    ingest_paths([write_run_dir(tmp_path / "runs", "new", configs, seed=2, official=True)], url)
    return url


def embedded_data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="ib-data">(.*?)</script>', html, re.S)
    assert m
    return json.loads(m.group(1))


def test_report_writes_self_contained_dashboard_and_plots(tmp_path: Path) -> None:
    paths = build_report(store_with_two_runs(tmp_path), tmp_path / "out")
    html = paths.dashboard.read_text()
    # no network: nothing fetched from anywhere (only the SVG namespace string appears)
    urls = set(re.findall(r"(?:https?:)?//[\w.-]+\.\w+[^\s\"')]*", html))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls
    assert "<link" not in html and "src=" not in html
    data = embedded_data(html)
    # only the latest run of each point is shown: 2 series x 5 concurrencies
    assert paths.stored == 20 and paths.points == 10 and paths.series == 2
    assert len(data["points"]) == 10
    assert {data["strings"][p["run"]] for p in data["points"]} == {"new"}
    assert all(p["off"] == 1 for p in data["points"])
    assert [p.name for p in paths.plots] == ["pareto_dsr1_1024_1024.png"]
    assert paths.plots[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_dashboard_data_thins_large_series_keeping_the_frontier(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    concs = tuple(range(1, MAX_POINTS_PER_SERIES + 101))
    ingest_paths([write_run_dir(tmp_path / "runs", "big", [SyntheticConfig()], concs)], url)
    with open_store(url) as store:
        data = dashboard_data([s.record for s in store.latest_per_point()], store.outcomes())
    assert len(data["points"]) == MAX_POINTS_PER_SERIES
    assert sum(p["f"] for p in data["points"]) >= 1
    assert data["outcomes"] == {"total": 1, "failed": 0, "failures": []}
