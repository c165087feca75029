"""The dashboard in a real headless Chromium (Debian's), offline, driven by Playwright."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from inferbench.report import build_report
from inferbench.results.ingest import ingest_paths
from inferbench.results.synthetic import SyntheticConfig, write_run_dir

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
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium)"
    ),
]


@pytest.fixture()
def dashboard(tmp_path: Path) -> Path:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    configs = [
        SyntheticConfig(),
        SyntheticConfig(framework="vllm", tp=4),
        SyntheticConfig(runner="b200", framework="trt", precision="fp4", tp=4, base_tpot_ms=5.0),
    ]
    run = write_run_dir(tmp_path / "runs", "nightly", configs)
    broken = run / "job-broken"
    broken.mkdir()
    (broken / "job.json").write_text(json.dumps({"exp-name": "dsr1_8k1k", "fingerprint": "x"}))
    (broken / "outcome.json").write_text(json.dumps({"status": "failed", "reason": "server OOM"}))
    ingest_paths([run], url)
    return build_report(url, tmp_path / "report", plots=False).dashboard


def test_dashboard_renders_offline_and_filters(dashboard: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    attempted: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1100})

            def block(route: object) -> None:
                request = route.request  # type: ignore[attr-defined]
                if request.url.startswith("file://"):
                    route.continue_()  # type: ignore[attr-defined]
                else:
                    attempted.append(request.url)
                    route.abort()  # type: ignore[attr-defined]

            page.route("**/*", block)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(dashboard.as_uri())
            page.wait_for_selector("body[data-ready='1']", timeout=10_000)

            assert page.locator("#chart-inter g.series").count() == 3
            assert page.locator("#chart-inter circle.pt").count() == 15
            assert page.locator("#chart-e2el circle.pt").count() == 15
            assert page.locator("#chart-inter polyline.front").count() == 3
            assert page.locator("#rows tr").count() == 15
            assert page.locator("#legend .legend-item").count() == 3
            # unofficial results are watermarked and drawn hollow
            assert page.locator("#chart-inter text.watermark").count() == 1
            assert page.locator("#chart-inter circle.unofficial").count() == 15

            assert "Jobs: 4, failed: 1 (25.0%)" in page.locator("#summary").inner_text()
            assert page.locator("#failed-jobs li").inner_text() == (
                "nightly dsr1_8k1k: failed (server OOM)"
            )
            page.locator("#chart-inter circle.pt").first.hover()
            tip = page.locator("#tip")
            assert tip.is_visible()
            text = tip.inner_text()
            assert "topology: tp" in text and "image: docker.io/lmsysorg/sglang:v0.5.0" in text
            assert "UNOFFICIAL" in text

            page.select_option("#f-hw", "b200")
            assert page.locator("#chart-inter g.series").count() == 1
            assert page.locator("#chart-inter circle.pt").count() == 5
            assert page.locator("#rows tr").count() == 5
            assert page.locator("#legend .legend-item").count() == 1
            assert "5 points in 1 series" in page.locator("#shown").inner_text()

            page.select_option("#f-hw", "")
            assert page.locator("#chart-inter circle.pt").count() == 15
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)
        finally:
            browser.close()
    assert attempted == [], f"the dashboard tried the network: {attempted}"
    assert errors == []
    assert (ARTIFACTS / "dashboard.png").stat().st_size > 10_000
    assert os.path.getsize(dashboard) < 100_000
