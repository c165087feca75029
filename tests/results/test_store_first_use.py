"""Several processes ingesting into a store that does not exist yet, at the same moment: the
schema is created once, every ingest lands (SQLite here; PostgreSQL when a server is set)."""

from __future__ import annotations

import multiprocessing as mp
import os
import secrets
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from harness.synthetic import SyntheticConfig, write_run_dir
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import open_store
from services import needs_service

WRITERS = 3
CONCS = (4, 8)


def _ingest(barrier: Barrier, run: str, url: str, out: mp.Queue[str]) -> None:
    barrier.wait(timeout=60)
    try:
        report = ingest_paths([Path(run)], url, workers=1)
        out.put(f"ok {report.inserted}")
    except Exception as exc:  # the failure under test: report it, do not hang
        out.put(f"error {type(exc).__name__}: {exc}")


def _race(tmp: Path, url: str) -> list[str]:
    runs = [
        write_run_dir(tmp / f"runs{i}", f"run-{i}", [SyntheticConfig(tp=2 + i)], CONCS)
        for i in range(WRITERS)
    ]
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(WRITERS)
    out: mp.Queue[str] = ctx.Queue()
    procs = [ctx.Process(target=_ingest, args=(barrier, str(r), url, out)) for r in runs]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
    return results


@pytest.mark.slow
def test_concurrent_first_use_of_a_sqlite_store(tmp_path: Path) -> None:
    for trial in range(6):
        url = f"sqlite:///{tmp_path / f'store{trial}.sqlite'}"
        results = _race(tmp_path / f"t{trial}", url)
        assert results == [f"ok {len(CONCS)}"] * WRITERS, (trial, results)
        with open_store(url) as store:
            assert store.count() == WRITERS * len(CONCS)


PG_URL = os.environ.get("INFERBENCH_TEST_PG_URL")


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.integration
@needs_service(not PG_URL, "INFERBENCH_TEST_PG_URL is not set")
def test_concurrent_first_use_of_a_postgres_store(tmp_path: Path) -> None:
    assert PG_URL
    admin = create_engine(PG_URL)
    for trial in range(3):
        schema = f"ib_first_use_{secrets.token_hex(4)}"  # a fresh schema: a new store
        with admin.begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
        try:
            sep = "&" if "?" in PG_URL else "?"
            url = f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
            results = _race(tmp_path / f"t{trial}", url)
            assert results == [f"ok {len(CONCS)}"] * WRITERS, (trial, results)
            with open_store(url) as store:
                assert store.count() == WRITERS * len(CONCS)
        finally:
            with admin.begin() as conn:
                conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()
