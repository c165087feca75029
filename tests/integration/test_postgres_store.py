"""The results store against a real PostgreSQL (.ci/services/10-postgres.sh starts one).

The shared store/ingest suite in tests/results runs on PostgreSQL too (its `db_url`
fixture); these are the checks only a server database can answer: the CLI's --db,
concurrent writers of the same points, and a bulk write.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from harness.synthetic import SyntheticConfig, write_run_dir
from inferbench.cli import report as report_cli
from inferbench.cli import results as results_cli
from inferbench.results.ingest import IngestReport, ingest_paths
from inferbench.results.store import StoreError, open_store
from services import needs_service

PG_URL = os.environ.get("INFERBENCH_TEST_PG_URL")

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.integration,
    needs_service(not PG_URL, "INFERBENCH_TEST_PG_URL is not set (.ci/services/10-postgres.sh)"),
]


@pytest.fixture()
def pg() -> Iterator[str]:
    assert PG_URL
    engine = create_engine(PG_URL)

    def reset() -> None:
        from inferbench.results.migrations import metadata

        names = ", ".join(table.name for table in metadata.sorted_tables)
        with engine.begin() as conn:
            conn.execute(text(f"DROP TABLE IF EXISTS {names} CASCADE"))

    reset()
    yield PG_URL
    reset()
    engine.dispose()


CONFIGS = [SyntheticConfig(), SyntheticConfig(framework="vllm", tp=4)]


def test_cli_ingest_and_compare_on_postgres(pg: str, tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        pass

    results_cli.register(app)
    report_cli.register(app)
    base = write_run_dir(tmp_path / "runs", "base", CONFIGS, seed=1)
    head = write_run_dir(tmp_path / "runs", "head", CONFIGS, seed=2, speedup=1.2)
    runner = CliRunner()
    res = runner.invoke(app, ["results", "ingest", str(base), str(head), "--db", pg])
    assert res.exit_code == 0, res.output
    assert "20 points found: 20 new" in res.output
    res = runner.invoke(
        app, ["results", "compare", "base", "head", "--db", pg, "--format", "markdown"]
    )
    assert res.exit_code == 0 and "10 matched points" in res.output
    # the synthetic points carry no per-request samples: changes are shown, not judged, and
    # the frontier at equal interactivity still reads the 1.2x speed-up
    assert "10 not judged" in res.output and "base (" in res.output


def test_concurrent_writers_of_the_same_points(pg: str, tmp_path: Path) -> None:
    run = write_run_dir(tmp_path / "runs", "shared", CONFIGS * 3, tuple(range(1, 41)))
    open_store(pg).close()  # migrate once, so the writers race on the rows only
    reports: list[IngestReport] = []
    failures: list[BaseException] = []

    def ingest() -> None:
        try:
            reports.append(ingest_paths([run], pg))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=ingest) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    with open_store(pg) as store:
        assert store.count() == 240  # 6 jobs x 40 concurrencies, each exactly once
    assert sum(r.inserted for r in reports) == 240


def test_wrong_password_is_a_clear_error(pg: str) -> None:
    bad = pg.replace("inferbench:", "inferbench:wrong", 1)
    with pytest.raises(StoreError, match="cannot use database") as exc:
        open_store(bad)
    assert "wrong" not in exc.value.render()
