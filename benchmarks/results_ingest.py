"""Ingest N synthetic points from run directories, build the dashboard, time both.

    .venv/bin/python benchmarks/results_ingest.py [--points 100000] [--repeats 3] [--browser]
        [--workers auto,1]

Writes the run directories once (not timed), then for each repeat: a fresh SQLite
store, `ingest_paths` over every run directory (files read, validated, derived, bulk
inserted in one transaction), then `build_report` (dashboard + PNG plots). With
--browser, also loads the dashboard in headless Chromium (--loads times per repeat)
and times it from navigation start until every chart is drawn (the page sets
`data-ready` after its last Plotly call), as the page's own clock sees it; beside it,
a page holding only the same plotly.js, so the library's share is visible. Prints
medians; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

from harness.synthetic import SyntheticConfig, job_json, sa_bench_result
from inferbench.report import build_report
from inferbench.results.ingest import ingest_paths

HARDWARE = ("h100", "h200", "b200", "mi300x", "mi355x")
FRAMEWORKS = ("vllm", "sglang", "trt", "dynamo-sglang")
PRECISIONS = ("fp8", "fp4")
CONCS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


def write_tree(root: Path, points: int) -> int:
    """Runs of 40 jobs x 10 concurrencies (400 points each) until `points` exist."""
    configs = [
        SyntheticConfig(runner=hw, framework=fw, precision=prec, tp=tp, base_tpot_ms=5 + k % 7)
        for k, (hw, fw, prec, tp) in enumerate(
            (hw, fw, prec, tp)
            for hw in HARDWARE
            for fw in FRAMEWORKS
            for prec in PRECISIONS
            for tp in (4, 8)
        )
    ][:40]
    rng = random.Random(0)
    written = 0
    run = 0
    while written < points:
        run_dir = root / f"run-{run:04d}"
        run_dir.mkdir(parents=True)
        # one nightly run a day, each from its own commit (the history view's x axis)
        day = (datetime(2026, 1, 1, 12, tzinfo=UTC) + timedelta(days=run)).isoformat()
        info = {"run_id": run_dir.name, "created": day, "commit": f"{run:07x}"}
        (run_dir / "run.json").write_bytes(orjson.dumps(info))
        for n, cfg in enumerate(configs):
            job_dir = run_dir / f"job{n:03d}"
            (job_dir / "results").mkdir(parents=True)
            job = job_json(cfg, f"fp{n:03d}")
            job["conc"] = list(CONCS)
            (job_dir / "job.json").write_bytes(orjson.dumps(job))
            outcome = {"status": "completed", "times": {"started": day, "finished": day}}
            (job_dir / "outcome.json").write_bytes(orjson.dumps(outcome))
            for conc in CONCS:
                if written >= points:
                    break
                bench = sa_bench_result(cfg, conc, rng=rng, speedup=rng.uniform(0.9, 1.1))
                (job_dir / "results" / f"conc{conc}.json").write_bytes(orjson.dumps(bench))
                written += 1
        run += 1
    return written


def browser_load_ms(html: Path, loads: int = 3) -> list[tuple[float, float]]:
    """Per load: in-page ms from navigation start to `data-ready` (wall clock, as the page
    sees it), and the page script's own part of it (`data-render-ms`: from the end of
    plotly.js to the last chart drawn; 0 for a page without it)."""
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        return []
    from playwright.sync_api import sync_playwright

    args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), args=args)
        for _ in range(loads):
            page = browser.new_page(viewport={"width": 1300, "height": 1000})
            page.route(
                "**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort()
            )
            page.goto(html.as_uri())
            page.wait_for_selector("body[data-ready='1']", state="attached", timeout=60_000)
            wall = float(page.evaluate("performance.now()"))
            own = float(page.evaluate("document.body.dataset.renderMs || 0"))
            out.append((wall, own))
            page.close()
        browser.close()
    return out


def plotly_only_page(path: Path) -> Path:
    """A page with nothing but the dashboard's plotly.js: the library's own load time."""
    from inferbench.report.dashboard import plotly_js

    path.write_text(
        "<!DOCTYPE html><html><body><script>" + plotly_js() + "</script>"
        "<script>document.body.setAttribute('data-ready', '1')</script></body></html>"
    )
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--browser", action="store_true")
    parser.add_argument("--loads", type=int, default=3, help="browser loads per repeat")
    parser.add_argument(
        "--workers",
        default="auto",
        help="reading processes, comma-separated settings run in turn each repeat: auto,1",
    )
    args = parser.parse_args()
    settings = [None if w == "auto" else int(w) for w in args.workers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        n = write_tree(root / "runs", args.points)
        print(f"wrote {n} result files in {time.perf_counter() - t0:.1f} s (not timed)")
        ingest_s: dict[int | None, list[float]] = {w: [] for w in settings}
        report_s: dict[int | None, list[float]] = {w: [] for w in settings}
        loads: list[tuple[float, float]] = []
        bare: list[tuple[float, float]] = []
        for rep in range(args.repeats):
            for workers in settings:
                name = f"{rep}-{workers or 'auto'}"
                url = f"sqlite:///{root / f'results-{name}.sqlite'}"
                t0 = time.perf_counter()
                report = ingest_paths([root / "runs"], url, workers=workers)
                t1 = time.perf_counter()
                paths = build_report(url, root / f"report-{name}")
                t2 = time.perf_counter()
                assert report.inserted == n, report
                ingest_s[workers].append(t1 - t0)
                report_s[workers].append(t2 - t1)
                size = paths.dashboard.stat().st_size
                print(
                    f"repeat {rep}, workers {workers or 'auto'}: ingest {t1 - t0:.1f} s, "
                    f"report {t2 - t1:.1f} s, total {t2 - t0:.1f} s; dashboard "
                    f"{size / 1024:.0f} KiB, {paths.points} points shown of {paths.stored}"
                )
                if args.browser and workers == settings[0]:
                    ms = browser_load_ms(paths.dashboard, args.loads)
                    only = browser_load_ms(plotly_only_page(root / "plotly.html"), args.loads)
                    loads += ms
                    bare += only
                    print(
                        "  chromium, navigation to charts drawn (wall / the page script's own): "
                        + ", ".join(f"{w:.0f}/{b:.0f}" for w, b in ms)
                        + " ms; plotly.js alone: "
                        + ", ".join(f"{w:.0f}/{b:.0f}" for w, b in only)
                        + " ms"
                    )
        for workers in settings:
            ing, rep_ = ingest_s[workers], report_s[workers]
            total = [a + b for a, b in zip(ing, rep_, strict=True)]
            print(
                f"workers {workers or 'auto'}, median of {args.repeats}: "
                f"ingest {statistics.median(ing):.1f} s, report {statistics.median(rep_):.1f} s, "
                f"total {statistics.median(total):.1f} s"
            )
        if loads:

            def med(rows: list[tuple[float, float]], k: int) -> float:
                return statistics.median(r[k] for r in rows)

            print(
                f"chromium, median of {len(loads)} loads: report {med(loads, 0):.0f} ms wall, "
                f"{med(loads, 1):.0f} ms of it the page script; plotly.js alone "
                f"{med(bare, 0):.0f} ms wall"
            )


if __name__ == "__main__":
    main()
