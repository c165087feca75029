"""Queueing-dominated points: kept off every frontier and the equal-x comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.synthetic import SyntheticConfig, write_run_dir
from inferbench.report.dashboard import DashboardInputs, dashboard_data
from inferbench.report.prices import load_prices
from inferbench.results.ingest import ingest_paths
from inferbench.results.queueing import QUEUEING_SHARE, queueing_reason
from inferbench.results.record import Record
from inferbench.results.store import open_store


def _queued_store(tmp_path: Path, ttft_ms: float) -> str:
    """One series; its conc-64 point has the highest throughput and a TTFT of `ttft_ms`."""
    run = write_run_dir(tmp_path / "runs", "q", [SyntheticConfig()], seed=5)
    path = next(run.glob("job*/results/conc64.json"))
    point = json.loads(path.read_text())
    point["total_token_throughput"] *= 3
    for stat in ("mean", "median", "p90", "p99", "p99.9"):
        point[f"{stat}_e2el_ms"] += ttft_ms - point[f"{stat}_ttft_ms"]
        point[f"{stat}_ttft_ms"] = ttft_ms
    path.write_text(json.dumps(point))
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    ingest_paths([run], url)
    return url


def _data(url: str) -> tuple[dict[str, Any], list[Record]]:
    with open_store(url) as store:
        latest = [s.record for s in store.latest_per_point()]
        data = dashboard_data(
            DashboardInputs(
                latest=latest,
                outcomes=store.outcomes(),
                history=[],
                comparison=None,
                prices=load_prices(),
                stored=store.count(),
            )
        )
    return data, latest


def test_a_queued_point_is_flagged_and_on_no_frontier(tmp_path: Path) -> None:
    data, latest = _data(_queued_store(tmp_path, 154_000.0))
    pts, strings = data["points"], data["strings"]
    reasons = [strings[k] for k in pts["q"]]
    queued = [k for k, reason in enumerate(reasons) if reason != "-"]
    assert [pts["c"][k] for k in queued] == [64]
    assert reasons[queued[0]].startswith("queueing: TTFT p50 154 s is ")
    # the highest throughput of its series, on none of the frontiers of any axis pair
    tput = pts["y"]["total_tput"]
    assert tput[queued[0]] == max(tput)
    assert all(pts["fm"][x][queued[0]] == 0 for x in pts["fm"])
    assert all(pts["fm"]["interactivity"][k] & 1 for k in range(len(tput)) if k not in queued)
    # nor in the comparison at equal interactivity: every value there is below its throughput
    at = data["at"]["dsr1 1024/1024"]["total_tput"]
    assert at and all(v < tput[queued[0]] / 2 for row in at for _, v in row["values"])
    assert sum(queueing_reason(r) is not None for r in latest) == 1


def test_the_threshold_is_a_share_of_e2e_latency(tmp_path: Path) -> None:
    _, latest = _data(_queued_store(tmp_path, 1_000.0))
    assert all(queueing_reason(r) is None for r in latest)  # 1 s of 10 s: prefill, not a queue
    (busy,) = [r for r in latest if r.identity.concurrency == 64]
    e2el = busy.metrics.e2el_ms.median or 0
    at_share = busy.model_copy(
        update={
            "metrics": busy.metrics.model_copy(
                update={
                    "ttft_ms": busy.metrics.ttft_ms.model_copy(
                        update={"median": QUEUEING_SHARE * e2el}
                    )
                }
            )
        }
    )
    assert queueing_reason(at_share) is not None


def test_the_png_plots_draw_a_queued_point_apart(tmp_path: Path) -> None:
    from inferbench.report import build_report

    paths = build_report(_queued_store(tmp_path, 154_000.0), tmp_path / "report", plots=True)
    assert [p.name for p in paths.plots] == ["pareto_dsr1_1024_1024.png"]
    assert paths.plots[0].stat().st_size > 10_000
