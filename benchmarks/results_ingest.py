"""Ingest N synthetic points from run directories, build the dashboard, time both.

    .venv/bin/python benchmarks/results_ingest.py [--points 100000] [--repeats 3] [--browser]

Writes the run directories once (not timed), then for each repeat: a fresh SQLite
store, `ingest_paths` over every run directory (files read, validated, derived, bulk
inserted in one transaction), then `build_report` (dashboard + PNG plots). With
--browser, also loads the dashboard in headless Chromium and times it until the
charts are drawn. Prints medians; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import orjson

from inferbench.report import build_report
from inferbench.results.ingest import ingest_paths
from inferbench.results.synthetic import SyntheticConfig, job_json, sa_bench_result

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
        (run_dir / "run.json").write_bytes(orjson.dumps({"run_id": run_dir.name}))
        for n, cfg in enumerate(configs):
            job_dir = run_dir / f"job{n:03d}"
            (job_dir / "results").mkdir(parents=True)
            job = job_json(cfg, f"fp{n:03d}")
            job["conc"] = list(CONCS)
            (job_dir / "job.json").write_bytes(orjson.dumps(job))
            (job_dir / "outcome.json").write_bytes(orjson.dumps({"status": "succeeded"}))
            for conc in CONCS:
                if written >= points:
                    break
                bench = sa_bench_result(cfg, conc, rng=rng, speedup=rng.uniform(0.9, 1.1))
                (job_dir / "results" / f"conc{conc}.json").write_bytes(orjson.dumps(bench))
                written += 1
        run += 1
    return written


def browser_load_ms(html: Path) -> float | None:
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        return None
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
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), args=args)
        page = browser.new_page()
        start = time.perf_counter()
        page.goto(html.as_uri())
        page.wait_for_selector("body[data-ready='1']")
        elapsed = (time.perf_counter() - start) * 1000
        browser.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--browser", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        n = write_tree(root / "runs", args.points)
        print(f"wrote {n} result files in {time.perf_counter() - t0:.1f} s (not timed)")
        ingest_s, report_s, loads = [], [], []
        for rep in range(args.repeats):
            url = f"sqlite:///{root / f'results-{rep}.sqlite'}"
            t0 = time.perf_counter()
            report = ingest_paths([root / "runs"], url)
            t1 = time.perf_counter()
            paths = build_report(url, root / f"report-{rep}")
            t2 = time.perf_counter()
            assert report.inserted == n, report
            ingest_s.append(t1 - t0)
            report_s.append(t2 - t1)
            size = paths.dashboard.stat().st_size
            print(
                f"repeat {rep}: ingest {t1 - t0:.1f} s, report {t2 - t1:.1f} s, "
                f"total {t2 - t0:.1f} s; dashboard {size / 1024:.0f} KiB, "
                f"{paths.points} points shown of {paths.stored}"
            )
            if args.browser:
                ms = browser_load_ms(paths.dashboard)
                if ms is not None:
                    loads.append(ms)
                    print(f"  chromium load to charts drawn: {ms:.0f} ms")
        total = [a + b for a, b in zip(ingest_s, report_s, strict=True)]
        print(
            f"median of {args.repeats}: ingest {statistics.median(ingest_s):.1f} s, "
            f"report {statistics.median(report_s):.1f} s, total {statistics.median(total):.1f} s"
            + (f", chromium load {statistics.median(loads):.0f} ms" if loads else "")
        )


if __name__ == "__main__":
    main()
