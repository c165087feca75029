"""The dashboard in a real headless Chromium (Debian's), offline, driven by Playwright.

Every request but file:// is refused and recorded; a test fails if the page tried the
network or threw. Screenshots of each view go to $INFERBENCH_SCREENSHOTS when set (the
docs' pictures are made that way), else into the test's tmp dir.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from inferbench.report import build_report
from inferbench.report.markdown import comparison_markdown
from inferbench.results.compare import compare_selectors
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import open_store
from inferbench.results.synthetic import SyntheticConfig, write_run_dir
from services import needs_service

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.integration,
    pytest.mark.slow,
    needs_service(not CHROMIUM.exists(), "no /usr/bin/chromium (apt-get install chromium)"),
]

CONFIGS = [
    SyntheticConfig(),
    SyntheticConfig(framework="vllm", tp=4),
    SyntheticConfig(runner="b200", framework="trt", precision="fp4", tp=4, base_tpot_ms=5.0),
    # a second topology of the same series: some of its points are dominated
    SyntheticConfig(runner="b200", framework="trt", precision="fp4", tp=8, base_tpot_ms=4.0),
    SyntheticConfig(model_prefix="llama70b", isl=8192, tp=4),
]


@dataclass
class Report:
    path: Path
    db_url: str
    root: Path
    shots: Path
    attempted: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """Two nightly runs a day apart; in the second vllm is 20% slower and one job crashed."""
    root = tmp_path_factory.mktemp("dash")
    url = f"sqlite:///{root / 'r.sqlite'}"
    runs = root / "runs"
    ingest_paths([write_run_dir(runs, "nightly-1", CONFIGS, seed=1, commit="1111aaa")], url)
    second = write_run_dir(
        runs,
        "nightly-2",
        CONFIGS,
        seed=2,
        started="2026-01-02T12:00:00+00:00",
        commit="2222bbb",
        speedups={"vllm": 0.8},
    )
    broken = second / "job-broken"
    broken.mkdir()
    (broken / "job.json").write_text(json.dumps({"exp-name": "dsr1_8k1k", "fingerprint": "x"}))
    (broken / "outcome.json").write_text(
        json.dumps({"status": "server_crashed", "reason": "server OOM"})
    )
    ingest_paths([second], url)
    dashboard = build_report(url, root / "report", plots=False).dashboard
    shots = Path(os.environ.get("INFERBENCH_SCREENSHOTS") or root / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    return Report(dashboard, url, root, shots)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture()
def page(browser: Any, report: Report) -> Iterator[Any]:
    report.attempted.clear()
    report.errors.clear()
    pg = browser.new_page(viewport={"width": 1300, "height": 1000})

    def block(route: Any) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            report.attempted.append(route.request.url)
            route.abort()

    pg.route("**/*", block)
    pg.on("pageerror", lambda exc: report.errors.append(str(exc)))
    yield pg
    pg.close()
    assert report.attempted == [], f"the dashboard tried the network: {report.attempted}"
    assert report.errors == []


def open_view(page: Any, report: Report, fragment: str = "") -> None:
    page.goto(report.path.as_uri() + fragment)
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)


def traces(page: Any, facet: int = 0) -> list[dict[str, Any]]:
    """What Plotly drew in one facet: each trace's name, part, point count, x and y."""
    return page.evaluate(
        """(k) => document.querySelectorAll('#facets .plot')[k].data.map(t => ({
            name: t.name, part: t.meta.part, series: t.meta.series, n: t.x.length,
            x: t.x, y: t.y, opacity: t.opacity}))""",
        facet,
    )


def layout(page: Any, facet: int = 0) -> dict[str, Any]:
    return page.evaluate(
        """(k) => { const l = document.querySelectorAll('#facets .plot')[k].layout;
            return {x: l.xaxis.title.text, y: l.yaxis.title.text, xtype: l.xaxis.type,
                    ytype: l.yaxis.type, notes: l.annotations.map(a => a.text)}; }""",
        facet,
    )


def test_curves_facets_series_frontiers_and_header(page: Any, report: Report) -> None:
    open_view(page, report)
    facets = page.locator("#facets .facet h3").all_inner_texts()
    assert facets == ["dsr1 1024/1024", "llama70b 8192/1024"]
    drawn = traces(page)
    assert {t["name"] for t in drawn} == {"b200 trt fp4", "h200 sglang fp8", "h200 vllm fp8"}
    assert sum(t["n"] for t in drawn) == 20
    dominated = [t for t in drawn if t["part"] == "dominated"]
    assert [t["name"] for t in dominated] == ["b200 trt fp4"] and dominated[0]["opacity"] < 0.5
    assert layout(page)["x"] == "interactivity p50 (tok/s/user)"
    assert "UNOFFICIAL" in layout(page)["notes"]
    summary = page.locator("#summary").inner_text()
    assert "Jobs: 11, failed: 1 (9.1%)" in summary and "server_crashed 1" in summary
    assert page.locator("#failed-jobs li").all_inner_texts() == [
        "nightly-2 dsr1_8k1k: server_crashed (server OOM)"
    ]
    sentence = page.locator(".facet").first.locator(".at .sentence").inner_text()
    assert re.match(
        r"at \d+ tok/s/user, \S+ \S+ \S+ delivers [\d,.]+ tok/s/GPU, [\d.]+x ", sentence
    )
    page.locator(".facet").first.locator("select.at-target").select_option(label="50 tok/s/user")
    sentence = page.locator(".facet").first.locator(".at .sentence").inner_text()
    assert sentence.startswith("at 50 tok/s/user, h200 vllm fp8 delivers ")
    page.screenshot(path=str(report.shots / "report-curves.png"), full_page=True)


def test_filters_and_series_toggles_reach_charts_table_and_url(page: Any, report: Report) -> None:
    open_view(page, report)
    assert page.locator("#rows tr").count() == 25
    page.select_option("#f-hw", "b200")
    assert page.locator("#facets .facet").count() == 1
    assert {t["name"] for t in traces(page)} == {"b200 trt fp4"}
    assert page.locator("#rows tr").count() == 10
    assert "10 points in 1 series" in page.locator("#shown").inner_text()
    assert "f.hw=b200" in page.evaluate("location.hash")
    page.select_option("#f-hw", "")
    page.locator(".series-toggle", has_text="h200 vllm fp8").click()
    assert "h200 vllm fp8" not in {t["name"] for t in traces(page)}
    assert page.locator("#rows tr").count() == 20
    toggle = page.locator(".series-toggle", has_text="h200 vllm fp8")
    assert toggle.get_attribute("aria-pressed") == "false"
    assert "hide=" in page.evaluate("location.hash")
    toggle.click()
    assert len(traces(page)) == 4  # three series, one of them with dominated points


def test_metric_and_axis_switches(page: Any, report: Report) -> None:
    open_view(page, report)
    before = {t["name"]: max(t["y"]) for t in traces(page)}
    page.select_option("#y", "cost_total")
    assert layout(page)["y"] == "cost per million total tokens ($)"
    cost = {t["name"]: t["y"] for t in traces(page)}
    assert cost.keys() == before.keys() and all(v > 0 for ys in cost.values() for v in ys)
    assert "$/GPU-hour from" in page.locator("#axis-note").inner_text()
    page.select_option("#y", "output_tput")
    page.select_option("#x", "ttft")
    assert layout(page)["x"] == "time to first token p50 (ms)"
    assert layout(page)["xtype"] == "log"  # TTFT defaults to a log axis
    page.locator("#logy").check()
    assert layout(page)["ytype"] == "log"
    hashed = page.evaluate("location.hash")
    assert "y=output_tput" in hashed and "x=ttft" in hashed and "logy=1" in hashed
    page.select_option("#y", "tok_per_joule")  # no energy in these runs
    assert traces(page) == [] and any("no tok/J values" in n for n in layout(page)["notes"])


def test_url_state_reopens_the_same_view(page: Any, report: Report) -> None:
    open_view(
        page, report, "#view=curves&y=cost_output&x=e2el&logx=1&f.model=dsr1&sort=conc&desc=1"
    )
    assert page.locator("#y").input_value() == "cost_output"
    assert page.locator("#x").input_value() == "e2el"
    assert page.locator("#f-model").input_value() == "dsr1"
    assert layout(page)["xtype"] == "log"
    assert page.locator("#facets .facet").count() == 1
    first_conc = page.locator("#rows tr").first.locator("td").nth(6).inner_text()
    assert first_conc == "64"


def test_hover_shows_full_identity_and_click_links_the_run_directory(
    page: Any, report: Report
) -> None:
    open_view(page, report, "#f.hw=b200")
    point = page.locator("#facets .plot .scatterlayer .trace .points path").first
    point.hover(force=True)
    hover = page.locator("#facets .hoverlayer .hovertext")
    hover.wait_for(timeout=5_000)
    text = hover.text_content() or ""
    assert "b200 trt fp4" in text and "image docker.io/lmsysorg/sglang:v0.5.0" in text
    assert "run nightly-2" in text and "commit 2222bbb" in text and "topology tp4" in text
    point.click(force=True)
    link = page.locator("#detail-link")
    href = link.get_attribute("href")
    assert href is not None and (report.path.parent / href / "job.json").is_file()


def test_table_sorts_filters_and_pages(page: Any, report: Report) -> None:
    open_view(page, report)
    page.locator("#points-head th[data-col='y']").click()
    values = [
        float(v.replace(",", ""))
        for v in page.locator("#rows tr td:nth-child(8)").all_inner_texts()
    ]
    assert values == sorted(values)
    page.locator("#points-head th[data-col='y']").click()
    assert page.locator("#points-head th.sorted-desc").inner_text().startswith("tok/s/GPU")
    page.fill("#table-filter", "llama70b tp4")
    assert page.locator("#rows tr").count() == 5
    assert "(5 points)" in page.locator("#page").inner_text()
    page.fill("#table-filter", "")
    assert page.locator("#rows tr").count() == 25


def test_history_view_marks_the_regression(page: Any, report: Report) -> None:
    open_view(page, report, "#view=history")
    options = page.locator("#h-series option").all_inner_texts()
    assert "dsr1 1024/1024 h200 vllm fp8" in options
    page.select_option("#h-series", label="dsr1 1024/1024 h200 vllm fp8")
    names = page.evaluate("document.getElementById('h-chart').data.map(t => t.name)")
    assert "regression" in names and len(names) == 6  # five concurrencies + the marks
    rows = page.locator("#h-rows tr")
    assert rows.count() == 10
    assert page.locator("#h-rows tr.reg-row").count() == 5
    assert "2222bbb" in page.locator("#h-rows tr.reg-row").first.inner_text()
    assert "hs=" in page.evaluate("location.hash")
    page.screenshot(path=str(report.shots / "report-history.png"), full_page=True)
    page.select_option("#h-series", label="dsr1 1024/1024 h200 sglang fp8")
    assert page.locator("#h-rows tr.reg-row").count() == 0


def test_compare_view_is_the_markdown_comparison(page: Any, report: Report) -> None:
    open_view(page, report, "#view=compare")
    assert "HEAD nightly-2 vs BASE nightly-1" in page.locator("#cmp-summary").inner_text()
    assert page.locator("#cmp-rows tr").count() == 25
    assert page.locator("#cmp-rows tr.cmp-regression").count() == 5
    assert page.locator("#cmp-rows td.regression").count() >= 5
    with open_store(report.db_url) as store:
        markdown = comparison_markdown(compare_selectors(store, "nightly-1", "nightly-2"))
    assert page.locator("#cmp-md").inner_text().strip() == markdown.strip()
    at = page.locator("#cmp-at li.cell-regression").all_inner_texts()
    assert any("h200 vllm fp8" in line for line in at)
    page.screenshot(path=str(report.shots / "report-compare.png"), full_page=True)
