"""The dashboard in a real headless Chromium (Debian's), offline, driven by Playwright.

Every request but file:// is refused and recorded; a test fails if the page tried the
network or threw. Screenshots of each view go to $INFERBENCH_SCREENSHOTS when set (the
docs' pictures are made that way), else into the test's tmp dir.

Two stores: `report` (two nightly runs, no power, no evals, no agentic point) and
`rich` (one run with GPU power samples and accuracy evals, plus a real agentic replay
on the simulator through `inferbench run`).
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import runcli

from harness.synthetic import SyntheticConfig, write_run_dir
from inferbench.evals.result import (
    EvalResult,
    EvalScore,
    EvalStatus,
    eval_file_name,
    write_eval_result,
)
from inferbench.evals.spec import EvalSpec
from inferbench.report import build_report
from inferbench.report.markdown import comparison_markdown
from inferbench.results.compare import compare_selectors
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import open_store
from services import needs_service

CHROMIUM = Path("/usr/bin/chromium")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
AGENTIC_KEY = "llama3.1-8b-bf16-h200-vllm-agentic"
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
    first = write_run_dir(runs, "nightly-1", CONFIGS, seed=1, commit="1111aaa", requests=True)
    ingest_paths([first], url)
    second = write_run_dir(
        runs,
        "nightly-2",
        CONFIGS,
        seed=2,
        started="2026-01-02T12:00:00+00:00",
        commit="2222bbb",
        speedups={"vllm": 0.8},
        requests=True,
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


def _eval(score: float, *, simulated: bool = False) -> EvalResult:
    n = 1319
    return EvalResult(
        task="gsm8k",
        lm_eval_task="gsm8k",
        status=EvalStatus.OK,
        simulated=simulated,
        scores=(
            EvalScore(
                metric="exact_match",
                filter="strict-match",
                value=score,
                stderr=(score * (1 - score) / (n - 1)) ** 0.5,
                samples=n,
            ),
        ),
        primary_metric="exact_match",
        primary_filter="strict-match",
        model="deepseek-ai/DeepSeek-R1",
        base_url="http://127.0.0.1:8000",
        spec=EvalSpec(concurrency=64, context_length=9472),
        started_at="2026-01-05T10:40:00+00:00",
        finished_at="2026-01-05T10:50:00+00:00",
    )


RICH = [
    SyntheticConfig(power_w=700.0),
    SyntheticConfig(framework="vllm", tp=4, power_w=700.0),
    SyntheticConfig(runner="b200", framework="trt", precision="fp4", tp=4, power_w=1000.0),
]


@pytest.fixture(scope="module")
def rich(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """Power samples on every point, a gsm8k eval per job (one simulated), and a real
    agentic replay of the example tree on the simulator, all in one store."""
    root = tmp_path_factory.mktemp("rich")
    url = f"sqlite:///{root / 'r.sqlite'}"
    run = write_run_dir(root / "runs", "power-1", RICH, seed=3, commit="3333ccc")
    for job, score, sim in zip(sorted(run.glob("job*")), (0.95, 0.93, 0.0), (0, 0, 1), strict=True):
        write_eval_result(
            job / "results" / eval_file_name("gsm8k"), _eval(score, simulated=bool(sim))
        )
    agentic_runs = root / "agentic"
    args = ["--root", str(EXAMPLES), "--config-keys", AGENTIC_KEY, "--engine", "sim"]
    args += ["--max-concurrency", "4", "--duration", "3", "--synth", "sessions=6,delay=0.2"]
    # its own process: the browser fixture's event loop may already run in this one
    code, out = runcli.finish(runcli.start(root, *args, "--runs-dir", str(agentic_runs)))
    assert code == 0, out
    ingest_paths([run, *[p for p in agentic_runs.iterdir() if p.is_dir()]], url)
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
    yield from _page(browser, report)


@pytest.fixture()
def rich_page(browser: Any, rich: Report) -> Iterator[Any]:
    yield from _page(browser, rich)


def _page(browser: Any, report: Report) -> Iterator[Any]:
    report.attempted.clear()
    report.errors.clear()
    pg = browser.new_page(viewport={"width": 1300, "height": 1000}, accept_downloads=True)

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
    facets = page.locator("#facets .facet h3 .title").all_inner_texts()
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
    page.select_option("#y", "cost_total.on_demand")
    assert layout(page)["y"] == "cost per million total tokens ($, on-demand rental)"
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
    # no power samples in these runs: no energy metric is offered, and no empty frame
    offered = page.locator("#y option").evaluate_all("os => os.map(o => o.value)")
    assert not {"tok_per_joule", "out_tok_per_joule", "tput_per_mw"} & set(offered)
    assert "energy" not in page.locator("#y optgroup").evaluate_all("gs => gs.map(g => g.label)")


def test_url_state_reopens_the_same_view(page: Any, report: Report) -> None:
    open_view(
        page, report, "#view=curves&y=cost_output&x=e2el&logx=1&f.model=dsr1&sort=conc&desc=1"
    )
    # a link from before cost models were keyed opens the first (on-demand) model
    assert page.locator("#y").input_value() == "cost_output.on_demand"
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
    assert "run nightly-2" in text and "commit 2222bbb" in text and "topology TP4" in text
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
    page.fill("#table-filter", "llama70b TP4")
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
    # vllm's five points are 20% slower, beyond their intervals; the rest is noise
    assert page.locator("#cmp-rows tr.cmp-regression").count() == 5
    assert page.locator("#cmp-rows tr.cmp-unjudged").count() == 0
    with open_store(report.db_url) as store:
        markdown = comparison_markdown(compare_selectors(store, "nightly-1", "nightly-2"))
    assert page.locator("#cmp-md").inner_text().strip() == markdown.strip()
    at = page.locator("#cmp-at li.cell-regression").all_inner_texts()
    assert any("h200 vllm fp8" in line for line in at)
    page.screenshot(path=str(report.shots / "report-compare.png"), full_page=True)


def download_csv(page: Any, button: Any) -> list[list[str]]:
    with page.expect_download() as info:
        button.click()
    path = info.value.path()
    with open(path, newline="") as handle:
        return list(csv.reader(handle))


def test_tail_latency_axes(page: Any, report: Report) -> None:
    open_view(page, report, "#f.model=dsr1")
    p50 = {t["name"]: sorted(t["x"]) for t in traces(page) if t["part"] == "frontier"}
    page.select_option("#x", "ttft_p90")
    assert layout(page)["x"] == "time to first token p90 (ms)"
    assert layout(page)["xtype"] == "log"
    page.select_option("#x", "e2el_p99")
    assert layout(page)["x"] == "end-to-end latency p99 (ms)"
    page.select_option("#x", "e2e_inter")
    e2e = {t["name"]: sorted(t["x"]) for t in traces(page) if t["part"] == "frontier"}
    # whole-request interactivity counts the wait for the first token: always below p50's
    assert e2e.keys() == p50.keys()
    assert all(max(e2e[n]) < max(p50[n]) for n in p50)
    page.select_option("#x", "e2e_inter_p90")
    tail = {t["name"]: sorted(t["x"]) for t in traces(page) if t["part"] == "frontier"}
    assert all(max(tail[n]) < max(e2e[n]) for n in e2e)  # the p90 request is slower
    assert "x=e2e_inter_p90" in page.evaluate("location.hash")
    page.locator("#facets").screenshot(path=str(report.shots / "report-tail.png"))


def test_cost_models_with_their_sources_and_tokens_per_dollar(page: Any, report: Report) -> None:
    open_view(page, report, "#f.model=dsr1")
    groups = page.locator("#y optgroup").evaluate_all("gs => gs.map(g => g.label)")
    assert groups == [
        "throughput",
        "cost: on-demand rental",
        "cost: owned (hyperscaler TCO)",
        "cost: owned (neocloud giant TCO)",
        "cost: 3-year rental",
        "provisioned power",  # per-GPU constants: offered without any power samples
    ]
    page.select_option("#y", "tput_per_provisioned_mw")
    assert all(v > 0 for t in traces(page) for v in t["y"])
    assert "provisioned kW" in page.locator("#axis-note").inner_text()
    page.select_option("#y", "cost_total.on_demand")
    on_demand = {t["name"]: t["y"] for t in traces(page)}
    page.select_option("#y", "cost_total.rental_3y")
    rental = {t["name"]: t["y"] for t in traces(page)}
    assert rental.keys() == on_demand.keys()
    for name, ys in rental.items():  # same tokens, cheaper hours: 1.60/3.99 of h200's price
        assert all(r < o for r, o in zip(ys, on_demand[name], strict=True))
    sources = page.locator("#cost-sources")
    assert "3-year rental" in sources.inner_text()
    sources.locator("summary").click()
    rows = page.locator("#cost-table tr").all_inner_texts()
    assert any(r.startswith("h200") and "1.6" in r and "InferenceX" in r for r in rows)
    page.select_option("#y", "tok_per_dollar.owned_hyperscaler")
    assert layout(page)["y"] == "total tokens per dollar (tok/$, owned (hyperscaler TCO))"
    owned = {t["name"]: t["y"] for t in traces(page)}
    page.select_option("#y", "tok_per_dollar.on_demand")
    rented = {t["name"]: t["y"] for t in traces(page)}
    for name, ys in owned.items():  # more tokens per dollar owned than rented on demand
        assert all(o > r for o, r in zip(ys, rented[name], strict=True))
    # a link to a cost model the prices no longer hold opens the first model's metric
    page.goto("about:blank")  # a new load, not a fragment change on the same page
    open_view(page, report, "#y=cost_total.reserved_1y&f.model=dsr1")
    assert page.locator("#y").input_value() == "cost_total.on_demand"
    page.select_option("#y", "tok_per_dollar.on_demand")
    page.select_option("#f-model", "dsr1")
    page.locator("#view-curves").screenshot(path=str(report.shots / "report-cost.png"))


def test_energy_views_hidden_without_power_and_shown_with_it(
    page: Any, report: Report, rich_page: Any, rich: Report
) -> None:
    open_view(page, report, "#y=tok_per_joule")
    assert page.locator("#y").input_value() == "total_tput"  # not offered: the default
    assert page.locator("#tabs button[data-view='accuracy']").is_hidden()
    assert page.locator("#tabs button[data-view='agentic']").is_hidden()
    open_view(rich_page, rich, "#f.model=dsr1&y=tok_per_joule")
    per_joule = {t["name"]: t["y"] for t in traces(rich_page)}
    assert set(per_joule) == {"b200 trt fp4", "h200 sglang fp8", "h200 vllm fp8"}
    assert all(v > 0 for ys in per_joule.values() for v in ys)
    rich_page.select_option("#y", "tput_per_mw")
    per_mw = {t["name"]: t["y"] for t in traces(rich_page)}
    for name, ys in per_mw.items():  # tok/s per MW of measured power is 1e6 tok/J
        assert ys == pytest.approx([v * 1e6 for v in per_joule[name]], rel=2e-3)
    assert "power samples" in rich_page.locator("#axis-note").inner_text()
    rich_page.locator("#facets").screenshot(path=str(rich.shots / "report-power.png"))


def test_csv_download_per_chart_is_the_chart_as_shown(page: Any, report: Report) -> None:
    open_view(page, report, "#f.hw=b200&y=output_tput&x=ttft_p99")
    drawn = traces(page)
    rows = download_csv(page, page.locator("#facets .facet").first.locator("button.csv"))
    head, body = rows[0], rows[1:]
    assert head[:6] == ["series", "part", "topology", "concurrency", "TTFT p99 ms", "out tok/s/GPU"]
    assert len(body) == sum(t["n"] for t in drawn) == 10
    shown = sorted((float(x), float(y)) for t in drawn for x, y in zip(t["x"], t["y"], strict=True))
    assert sorted((float(r[4]), float(r[5])) for r in body) == shown
    assert {r[1] for r in body} == {"frontier", "dominated"}
    page.locator("#tabs button[data-view='history']").click()
    rows = download_csv(page, page.locator("#h-head button.csv"))
    assert rows[0][2] == "out tok/s/GPU" and len(rows) > 1


def test_gpus_compared_at_equal_interactivity(page: Any, report: Report) -> None:
    open_view(page, report, "#view=gpus&f.model=dsr1")
    box = page.locator("#gpu-facets .facet").first
    data = page.evaluate("() => JSON.parse(document.getElementById('ib-data').textContent)")
    # an interactivity both GPUs' frontiers reach
    row = next(
        r
        for r in data["at"]["dsr1 1024/1024"]["total_tput"]
        if {data["series"][si]["hw"] for si, _ in r["values"]} == {"b200", "h200"}
    )
    box.locator("select.gpu-target").select_option(label=f"{row['at']:g} tok/s/user")
    bars = page.evaluate(
        "() => { const t = document.querySelector('#gpu-facets .plot').data[0];"
        " return {x: t.x, y: t.y, best: t.customdata}; }"
    )
    assert sorted(bars["x"]) == ["b200", "h200"]
    # each GPU's bar is its best series at that interactivity, read off the frontiers
    best: dict[str, float] = {}
    for si, v in row["values"]:
        hw = data["series"][si]["hw"]
        best[hw] = max(best.get(hw, 0.0), v)
    assert dict(zip(bars["x"], bars["y"], strict=True)) == best
    assert bars["y"] == sorted(bars["y"], reverse=True)
    rows = download_csv(page, box.locator("button.csv"))
    assert rows[0][:3] == ["interactivity (tok/s/user)", "hardware", "best series"]
    assert [r[1] for r in rows[1:]] == bars["x"]
    page.locator("#tabs button[data-view='curves']").click()
    page.locator(".series-toggle", has_text="h200 vllm fp8").click()
    page.locator("#tabs button[data-view='gpus']").click()
    assert "view=gpus" in page.evaluate("location.hash")
    page.locator("#view-gpus").screenshot(path=str(report.shots / "report-gpus.png"))


def test_accuracy_view_scores_each_configuration(rich_page: Any, rich: Report) -> None:
    open_view(rich_page, rich, "#view=accuracy")
    bars = rich_page.evaluate(
        "() => { const t = document.querySelector('#acc-charts .plot').data[0];"
        " return {y: t.y, x: t.x, err: t.error_x.array, color: t.marker.color}; }"
    )
    assert len(bars["y"]) == 3 and all("conc" in c for c in bars["y"])
    scores = dict(zip(bars["y"], bars["x"], strict=True))
    assert sorted(scores.values()) == [0.0, 0.93, 0.95]
    assert all(0 < e < 0.01 for e, x in zip(bars["err"], bars["x"], strict=True) if x)
    assert bars["color"].count("#9ca3af") == 1  # the simulated eval: grey, not an accuracy
    assert rich_page.locator("#evals tbody tr").count() == 3
    rows = download_csv(rich_page, rich_page.locator("#acc-charts button.csv"))
    assert rows[0][:4] == ["configuration", "task", "metric", "score"] and len(rows) == 4
    rich_page.locator("#acc-charts").screenshot(path=str(rich.shots / "report-accuracy.png"))


def test_agentic_view_per_turn_per_session_and_cache(rich_page: Any, rich: Report) -> None:
    open_view(rich_page, rich, "#view=agentic")
    with open_store(rich.db_url) as store:
        (agentic,) = [s.record for s in store.latest_per_point() if s.record.agentic]
    block = agentic.agentic
    assert block is not None and block.per_turn
    turns = rich_page.evaluate(
        "() => document.getElementById('ag-turns').data.map(t => ({x: t.x, y: t.y, name: t.name}))"
    )
    assert len(turns) == 1 and "agentic synth kv-none" in turns[0]["name"]
    assert turns[0]["x"] == [t.turn for t in block.per_turn]
    assert turns[0]["y"] == pytest.approx([t.median_ttft_ms for t in block.per_turn], rel=1e-3)
    rich_page.select_option("#ag-metric", "ttft_p90")
    p90 = rich_page.evaluate("() => document.getElementById('ag-turns').data[0].y")
    assert p90 == pytest.approx([t.p90_ttft_ms for t in block.per_turn], rel=1e-3)
    assert "tm=ttft_p90" in rich_page.evaluate("location.hash")
    cache = rich_page.evaluate(
        "() => document.getElementById('ag-cache').data.map(t => [t.name, t.y[0]])"
    )
    shares = dict(cache)
    assert shares["reusable prompt share (a perfect prefix cache)"] == pytest.approx(
        block.client_reuse_share, rel=1e-3
    )
    assert block.server is not None and block.server.overall_hit_rate is not None
    assert shares["server hit rate, all tiers"] == pytest.approx(
        block.server.overall_hit_rate, rel=1e-3
    )
    cells = rich_page.locator("#ag-rows tr").first.locator("td").all_inner_texts()
    assert cells[1] == "synth kv-none" and int(cells[4]) == block.sessions.completed
    rows = download_csv(rich_page, rich_page.locator("#ag-turns-head button.csv"))
    assert len(rows) == 1 + len(block.per_turn)
    rows = download_csv(rich_page, rich_page.locator("#ag-sessions-head button.csv"))
    assert rows[1][3] == str(block.sessions.started)
    rich_page.locator("#view-agentic").screenshot(path=str(rich.shots / "report-agentic.png"))


def test_detail_box_closes_on_escape_outside_click_and_tab_change(
    page: Any, report: Report
) -> None:
    open_view(page, report, "#f.hw=b200")
    point = page.locator("#facets .plot .scatterlayer .trace .points path").first
    detail = page.locator("#detail")
    for close in ("Escape", "outside", "tab"):
        point.click(force=True)
        detail.wait_for(state="visible", timeout=5_000)
        if close == "Escape":
            page.keyboard.press("Escape")
        elif close == "outside":
            page.locator("#summary").click()
        else:
            page.locator("#tabs button[data-view='history']").click()
        detail.wait_for(state="hidden", timeout=5_000)
        if close == "tab":
            page.locator("#tabs button[data-view='curves']").click()
    # a click inside the box (its link, its text) keeps it open
    point.click(force=True)
    detail.click()
    assert detail.is_visible()
    page.locator("#detail-close").click()
    assert detail.is_hidden()


def _overflowing(page: Any, selector: str) -> list[str]:
    """The elements of `selector` that reach past the viewport's right or left edge."""
    return page.evaluate(
        """(sel) => [...document.querySelectorAll(sel)].filter(e => {
            const r = e.getBoundingClientRect();
            return r.width > 0 && (r.left < -1 || r.right > window.innerWidth + 1);
        }).map(e => e.id || e.textContent.slice(0, 60))""",
        selector,
    )


def test_phone_width_fits_selectors_charts_and_accuracy_labels(browser: Any, rich: Report) -> None:
    pg = browser.new_page(viewport={"width": 390, "height": 844})
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        open_view(pg, rich, "#y=cost_total.on_demand")  # the longest metric name
        assert _overflowing(pg, "#axes select, #filters select, #tabs button") == []
        assert _overflowing(pg, "#facets .facet, #facets .main-svg") == []
        # the page itself never scrolls sideways: wide tables scroll in their own box
        assert pg.evaluate("document.documentElement.scrollWidth") <= 390
        pg.screenshot(path=str(rich.shots / "report-phone.png"), full_page=True)
        pg.locator("#tabs button[data-view='accuracy']").click()
        labels = pg.locator("#acc-charts .ytick text")
        assert labels.count() == 3
        assert _overflowing(pg, "#acc-charts .ytick text") == []
        # every configuration's name is drawn in full (wrapped, never cut)
        drawn = " ".join(labels.all_text_contents())
        for config in pg.evaluate(
            "JSON.parse(document.getElementById('ib-data').textContent).evals.map(e => e.config)"
        ):
            assert all(word in drawn for word in config.split())
        assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        pg.close()
    assert errors == []


@pytest.fixture(scope="module")
def queueing(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """One series whose busiest point queued: TTFT p50 154 s, and the highest throughput
    (it would top the frontier if it were crowned)."""
    root = tmp_path_factory.mktemp("queue")
    url = f"sqlite:///{root / 'r.sqlite'}"
    run = write_run_dir(root / "runs", "queue-1", [SyntheticConfig()], seed=4, commit="4444ddd")
    path = next(run.glob("job*/results/conc64.json"))
    point = json.loads(path.read_text())
    for key in ("total_token_throughput", "output_throughput", "request_throughput"):
        point[key] *= 3
    for stat in ("mean", "median", "p90", "p99", "p99.9"):
        point[f"{stat}_e2el_ms"] += 154_000.0 - point[f"{stat}_ttft_ms"]
        point[f"{stat}_ttft_ms"] = 154_000.0
    path.write_text(json.dumps(point))
    ingest_paths([run], url)
    dashboard = build_report(url, root / "report", plots=False).dashboard
    shots = Path(os.environ.get("INFERBENCH_SCREENSHOTS") or root / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    return Report(dashboard, url, root, shots)


def test_queueing_point_is_flagged_not_crowned(browser: Any, queueing: Report) -> None:
    pg = browser.new_page(viewport={"width": 1300, "height": 1000})
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        open_view(pg, queueing)
        drawn = {t["part"]: t for t in traces(pg)}
        assert set(drawn) == {"frontier", "queueing"}
        queued = drawn["queueing"]
        assert queued["n"] == 1 and queued["name"].endswith("(queueing)")
        # the highest throughput of the chart, yet not on its frontier
        assert queued["y"][0] > max(drawn["frontier"]["y"])
        assert len(drawn["frontier"]["y"]) == 4
        symbol = pg.evaluate(
            "document.querySelector('#facets .plot').data.find(t => t.meta.part === 'queueing')"
            ".marker.symbol[0]"
        )
        assert symbol == "x-thin-open"
        pg.locator("#facets .plot .scatterlayer .trace").nth(1).locator(".points path").first.click(
            force=True
        )
        detail = pg.locator("#detail").inner_text()
        assert "QUEUEING" in detail and "TTFT p50 154 s" in detail
        pg.screenshot(path=str(queueing.shots / "report-queueing.png"))
    finally:
        pg.close()
    assert errors == []


def test_equal_interactivity_widget_follows_the_x_axis(page: Any, report: Report) -> None:
    open_view(page, report, "#f.model=dsr1")
    at = page.locator(".facet").first.locator(".at")
    assert "tok/s/user" in at.inner_text()
    page.select_option("#x", "ttft")
    assert "interactivity" not in at.inner_text().replace("compare at equal", "")
    assert at.locator("select").count() == 0
    at.locator("button.at-switch").click()
    assert page.locator("#x").input_value() == "interactivity"
    assert at.locator("select.at-target").count() == 1
