from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

import inferbench.report as report
from harness.synthetic import SyntheticConfig, write_run_dir
from inferbench.core.errors import InputError
from inferbench.report import build_report
from inferbench.report.dashboard import DashboardInputs, dashboard_data
from inferbench.report.metrics import X_AXES, axis, y_axes
from inferbench.report.payload import MAX_POINTS_PER_SERIES
from inferbench.report.plots import plots_available
from inferbench.report.prices import load_prices
from inferbench.results.ingest import ingest_paths
from inferbench.results.pareto import build_curves, pareto_frontier, pchip
from inferbench.results.store import open_store

CONFIGS = [
    SyntheticConfig(),
    SyntheticConfig(framework="vllm", tp=4),
    SyntheticConfig(runner="b200", framework="trt", precision="fp4", tp=4, base_tpot_ms=5.0),
    SyntheticConfig(model_prefix="llama70b", isl=8192, tp=4),
]


def two_run_store(tmp_path: Path, *, failed_job: bool = False) -> str:
    """Two nightly runs a day apart; in the second, vllm got 20% slower."""
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    runs = tmp_path / "runs"
    first = write_run_dir(runs, "n1", CONFIGS, seed=1, started="2026-01-01T12:00:00+00:00")
    ingest_paths([first], url)
    second = write_run_dir(
        runs,
        "n2",
        CONFIGS,
        seed=2,
        official=True,
        started="2026-01-02T12:00:00+00:00",
        commit="abc1234",
        speedups={"vllm": 0.8},
    )
    if failed_job:
        broken = second / "job-broken"
        broken.mkdir()
        (broken / "job.json").write_text(json.dumps({"exp-name": "dsr1_8k1k", "fingerprint": "x"}))
        (broken / "outcome.json").write_text(
            json.dumps({"status": "server_crashed", "reason": "server OOM"})
        )
    ingest_paths([second], url)
    return url


def embedded_data(html: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="ib-data">(.*?)</script>', html, re.S)
    assert m
    return json.loads(m.group(1))


@pytest.mark.slow  # a whole report with plotly.js inside (1-2 s)
def test_report_is_one_offline_file_with_plotly_inside(tmp_path: Path) -> None:
    paths = build_report(two_run_store(tmp_path), tmp_path / "out")
    html = paths.dashboard.read_text()
    assert "plotly.js v" in html  # the library itself is inline
    assert not re.search(r"<script[^>]+src=", html) and "<link" not in html
    assert "default-src 'none'" in html  # the page may not load anything
    data = embedded_data(html)
    # the curves show the latest run of each point: 4 series x 5 concurrencies
    assert paths.stored == 40 and paths.points == 20 and paths.series == 4
    assert {data["strings"][r] for r in data["points"]["run"]} == {"n2"}
    assert set(data["points"]["off"]) == {1}
    assert {data["strings"][c] for c in data["points"]["commit"]} == {"abc1234"}
    assert [p.name for p in paths.plots] == [
        "pareto_dsr1_1024_1024.png",
        "pareto_llama70b_8192_1024.png",
    ]


@pytest.mark.slow  # a whole report of a run (1-2.5 s)
def test_a_clean_run_has_no_failed_jobs_and_injected_failures_are_counted(
    tmp_path: Path,
) -> None:
    clean = embedded_data(
        build_report(two_run_store(tmp_path / "a"), tmp_path / "a/out").dashboard.read_text()
    )
    assert clean["outcomes"]["total"] == 8 and clean["outcomes"]["failed"] == 0
    assert clean["outcomes"]["by_status"] == {"completed": 8}
    url = two_run_store(tmp_path / "b", failed_job=True)
    broken = embedded_data(build_report(url, tmp_path / "b/out").dashboard.read_text())
    assert broken["outcomes"]["total"] == 9 and broken["outcomes"]["failed"] == 1
    assert broken["outcomes"]["failures"] == ["n2 dsr1_8k1k: server_crashed (server OOM)"]
    assert {"run": "n2", "jobs": 5, "failed": 1} in broken["outcomes"]["runs"]


def _data(url: str, tmp_path: Path) -> dict[str, Any]:
    with open_store(url) as store:
        latest = [s.record for s in store.latest_per_point()]
        return dashboard_data(
            DashboardInputs(
                latest=latest,
                outcomes=store.outcomes(),
                history=[(k, s.record) for k, s in store.history(40)],
                comparison=None,
                prices=load_prices(),
                stored=store.count(),
                output_dir=tmp_path,
            )
        )


def test_every_axis_is_a_column_and_frontier_bits_match_the_results_frontier(
    tmp_path: Path,
) -> None:
    data = _data(two_run_store(tmp_path), tmp_path)
    pts = data["points"]
    assert set(pts["x"]) == {a.key for a in X_AXES}
    # no power samples: the energy metrics are not offered at all (no empty frames)
    offered = [a["key"] for a in data["axes"]["y"]]
    assert set(pts["y"]) == set(offered)
    every = [a.key for a in y_axes(load_prices())]
    assert set(every) - set(offered) == {"tok_per_joule", "out_tok_per_joule", "tput_per_mw"}
    # bit for (interactivity, total_tput) is the results package's frontier
    with open_store(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        latest = [s.record for s in store.latest_per_point()]
    expected = sum(len(c.frontier) for c in build_curves(latest))
    assert sum(1 for m in pts["fm"]["interactivity"] if m & 1) == expected
    # cost is lower-better: its frontier (bit of x=interactivity, y=cost_total) differs in
    # direction, yet with one topology per series every point is on both
    cost_bit = 1 << offered.index("cost_total.on_demand")
    assert sum(1 for m in pts["fm"]["interactivity"] if m & cost_bit) == expected
    assert pareto_frontier([1, 2, 3], [3, 2, 1], higher_y=False) == [2]


def test_cost_per_million_tokens_uses_the_price_table(tmp_path: Path) -> None:
    url = two_run_store(tmp_path)
    with open_store(url) as store:
        record = store.latest_per_point()[0].record
    prices = load_prices()
    ys = y_axes(prices)
    gpus = record.identity.total_gpus
    tps = record.metrics.total_token_throughput
    for model in prices.models:
        cost = axis(f"cost_total.{model.key}", ys).value(record, prices)
        per_dollar = axis(f"tok_per_dollar.{model.key}", ys).value(record, prices)
        hour = model.gpu_hour("h200")
        if hour is None:  # a model without an h200 figure: no point rather than a zero
            assert cost is None and per_dollar is None
            continue
        assert cost == pytest.approx(hour * gpus * 1e6 / (3600 * tps))
        assert per_dollar == pytest.approx(3600 * tps / (hour * gpus))
    tiers = ["owned_hyperscaler", "owned_neocloud", "rental_3y"]  # the InferenceX site's
    assert [m.key for m in prices.models] == ["on_demand", *tiers]
    assert prices.gpu_hour("b200-dgxc") == prices.gpu_hour("b200") == 4.99
    # the site's figures, for every GPU it prices (B200: 1.95, 2.34, 2.90 $/GPU-hr)
    assert [prices.model(k).gpu_hour("b200") for k in tiers] == [1.95, 2.34, 2.9]
    site = ["h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x"]
    assert all(prices.model(k).gpu_hour(g) for k in tiers for g in site)
    assert prices.gpu_hour("tpu-v9") is None
    # a GPU without a figure in a model has no cost point there, never a zero
    mine = tmp_path / "b200-only.yaml"
    mine.write_text("per_gpu_hour:\n  b200: {price: 2.0, source: our contract}\n")
    partial = load_prices(mine)
    for key in ("cost_total.custom", "tok_per_dollar.custom"):
        assert axis(key, y_axes(partial)).value(record, partial) is None  # an h200 record
    # no energy samples in these runs: tokens per joule stays empty rather than zero
    assert axis("tok_per_joule", ys).value(record, prices) is None
    assert all(source for m in prices.models for source in m.sources.values())


def test_a_bad_price_file_names_file_line_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "prices.yaml"
    bad.write_text("per_gpu_hour:\n  h200:\n    price: -1\n    source: me\n")
    with pytest.raises(InputError) as err:
        load_prices(bad)
    text = err.value.render()
    assert "prices.yaml:3" in text and "per_gpu_hour.h200.price" in text and "fix:" in text
    own = tmp_path / "mine.yaml"
    own.write_text("per_gpu_hour:\n  h200: {price: 2.0, source: our contract}\n")
    assert load_prices(own).gpu_hour("h200-nv") == 2.0


def test_equal_interactivity_values_are_the_pchip_of_each_frontier(tmp_path: Path) -> None:
    url = two_run_store(tmp_path)
    data = _data(url, tmp_path)
    rows = data["at"]["dsr1 1024/1024"]["total_tput"]
    assert [r["at"] for r in rows] == [50.0, 100.0]
    at50 = rows[0]
    names = {data["series"][s]["variant"]: v for s, v in at50["values"]}
    with open_store(url) as store:
        latest = [s.record for s in store.latest_per_point()]
    curve = next(
        c for c in build_curves(latest) if c.key.framework == "sglang" and c.key.isl == 1024
    )
    xs = [curve.x[k] for k in curve.frontier]
    ys = [curve.y[k] for k in curve.frontier]
    assert names["h200 sglang fp8"] == pytest.approx(pchip(xs, ys, 50.0), rel=1e-3)
    (best, vb), (second, vs) = sorted(names.items(), key=lambda kv: -kv[1])[:2]
    assert at50["sentence"] == (
        f"at 50 tok/s/user, {best} delivers {vb:,.4g} tok/s/GPU, {vb / vs:.2f}x {second}"
    )


def test_history_shows_steps_without_samples_as_not_judged(tmp_path: Path) -> None:
    data = _data(two_run_store(tmp_path), tmp_path)
    h = data["history"]
    assert len(h["configs"]) == 20 and len(h["cfg"]) == 40
    bit = 1 << [a.key for a in y_axes(load_prices())].index("total_tput")
    # synthetic points carry no per-request samples: a step is shown, not judged
    assert not any(reg & bit for reg in h["reg"])
    unjudged = {
        data["series"][h["configs"][c]["s"]]["fw"]
        for c, unj in zip(h["cfg"], h["unj"], strict=True)
        if unj & bit
    }
    assert unjudged == {"sglang", "vllm", "trt"}
    dates = {data["strings"][d] for d in h["date"]}
    assert dates == {"2026-01-01 12:00", "2026-01-02 12:00"}


def test_report_compares_the_last_two_runs_like_results_compare(tmp_path: Path) -> None:
    from inferbench.report.markdown import comparison_markdown
    from inferbench.results.compare import compare_selectors

    url = two_run_store(tmp_path)
    data = embedded_data(build_report(url, tmp_path / "out", plots=False).dashboard.read_text())
    cmp = data["compare"]
    assert (cmp["base"], cmp["head"]) == ("n1", "n2")
    # synthetic points carry no per-request samples: their changes are shown, not judged
    assert cmp["counts"]["unjudged"] == 20 and cmp["counts"]["regression"] == 0
    vllm_rows = [r for r in cmp["rows"] if " vllm " in r["label"]]
    assert len(vllm_rows) == 5
    assert all(r["cells"][0][2] == pytest.approx(-0.2, abs=0.03) for r in vllm_rows)
    assert all(r["cells"][0][4] is None for r in vllm_rows)  # no interval without samples
    with open_store(url) as store:
        assert cmp["markdown"] == comparison_markdown(compare_selectors(store, "n1", "n2"))
    # at equal interactivity I the synthetic curve runs c = knee * (1000 * speed / (tpot0 * I) - 1)
    # users at I tok/s each: at 50 tok/s/user, 20% slower is (2 - 1) / (2.5 - 1) = 0.67x
    vllm = [a for a in cmp["at"] if " vllm " in a["series"]]
    assert len(vllm) == 1 and vllm[0]["at"] == 50
    assert vllm[0]["ratio"] == pytest.approx(2 / 3, abs=0.04)


def test_run_directory_links_are_relative_to_the_report(tmp_path: Path) -> None:
    url = two_run_store(tmp_path)
    data = embedded_data(build_report(url, tmp_path / "out", plots=False).dashboard.read_text())
    links = {data["strings"][d] for d in data["points"]["dir"]}
    assert all(link.startswith("../runs/n2/") for link in links)
    assert all((tmp_path / "out" / link / "job.json").is_file() for link in links)


@pytest.mark.parametrize("name", ["javascript:alert(document.domain)", "data:text,x", "a b#c?d"])
def test_a_job_folder_name_is_never_a_link_of_its_own(tmp_path: Path, name: str) -> None:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    run = write_run_dir(tmp_path, "run", CONFIGS[:1], concurrencies=(4,))
    (job,) = [p for p in run.iterdir() if p.is_dir()]
    job.rename(run / name)
    ingest_paths([run], url)
    # the report beside the jobs: the link is the folder's name alone
    data = embedded_data(build_report(url, run, plots=False).dashboard.read_text())
    (link,) = {data["strings"][d] for d in data["points"]["dir"]}
    assert link.startswith("./") and ":" not in link and "#" not in link and "?" not in link
    assert unquote(link) == f"./{name}/" and (run / unquote(link) / "job.json").is_file()


@pytest.mark.slow  # a report of a large store (1-2 s)
def test_large_series_are_thinned_keeping_every_frontier_point(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    concs = tuple(range(1, MAX_POINTS_PER_SERIES + 101))
    ingest_paths([write_run_dir(tmp_path / "runs", "big", [SyntheticConfig()], concs)], url)
    data = _data(url, tmp_path)
    assert len(data["points"]["s"]) == MAX_POINTS_PER_SERIES
    assert sum(1 for m in data["points"]["fm"]["interactivity"] if m & 1) >= 1
    assert data["outcomes"]["failed"] == 0


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from inferbench.cli.main import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out, out.err


def test_results_compare_reports_equal_interactivity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = two_run_store(tmp_path)
    code, out, _ = _cli(capsys, "results", "compare", "n1", "n2", "--db", url, "--at", "50")
    assert code == 0
    # the sentences are prose, wrapped between words at the terminal's width
    vllm = re.search(
        r"at 50 tok/s/user, \S+ \S+ h200 vllm fp8: head .*? tok/s/GPU, (\S+) base \(",
        " ".join(out.split()),
    )
    assert vllm is not None and vllm.group(1).startswith("0.6")
    code, md, _ = _cli(
        capsys, "results", "compare", "n1", "n2", "--db", url, "--format", "markdown"
    )
    assert code == 0 and "Throughput per GPU at equal interactivity" in md
    assert "- 🔴 at 50 tok/s/user, dsr1 1024/1024 h200 vllm fp8: head" in md
    code, _, err = _cli(capsys, "results", "compare", "n1", "n2", "--db", url, "--at", "-1")
    assert code == 2 and "--at must be a positive" in err
    code, _, err = _cli(
        capsys, "report", "--db", url, "--base", "n1", "--output-dir", str(tmp_path)
    )
    assert code == 2 and "--base and --head go together" in err


# PNG plots are the `plots` extra: written where matplotlib is installed, asked for when
# --plots is given without it; the dashboard never needs it
def test_plots_by_default_where_matplotlib_is_installed(tmp_path: Path) -> None:
    assert plots_available()  # the dev extra installs it
    paths = build_report(two_run_store(tmp_path), tmp_path / "out")
    assert paths.plots and all(p.suffix == ".png" and p.is_file() for p in paths.plots)


def test_without_matplotlib_the_dashboard_alone_and_plots_are_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "plots_available", lambda: False)
    url = two_run_store(tmp_path)
    paths = build_report(url, tmp_path / "out")
    assert paths.dashboard.is_file() and paths.plots == ()
    assert not list((tmp_path / "out").glob("*.png"))
    with pytest.raises(InputError, match="PNG plots need matplotlib") as err:
        build_report(url, tmp_path / "out2", plots=True)
    assert "inferbench[plots]" in (err.value.hint or "")
