from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from results_fixtures import disagg_job, write_run_dir
from sqlalchemy import TextClause, create_engine, inspect, select, text

from inferbench.core.outcome import StoredOutcome
from inferbench.core.status import JobStatus
from inferbench.results.identity import identity_from_job
from inferbench.results.ingest import ingest_paths
from inferbench.results.migrations import LATEST, current_version, migrate, records
from inferbench.results.record import SCHEMA_VERSION, Record
from inferbench.results.sources import Point, discover
from inferbench.results.store import RecordFilter, Store, StoreError, open_store


def test_filters_and_get(db_url: str, tmp_path: Path) -> None:
    ingest_paths([write_run_dir(tmp_path / "runs", "run-1")], db_url)
    ingest_paths([write_run_dir(tmp_path / "runs", "run-2")], db_url)
    with open_store(db_url) as store:
        assert store.count() == 4
        assert len(store.query(RecordFilter(run_id="run-2"))) == 2
        assert len(store.query(RecordFilter(model_prefix="dsr1", isl=1024, osl=1024))) == 4
        assert store.query(RecordFilter(precision="fp4")) == []
        first = store.query()[0]
        got = store.get(first.id)
        assert got is not None and got.record == first.record
        assert store.get(10_000) is None


def test_a_failed_write_leaves_nothing(db_url: str, tmp_path: Path) -> None:
    points = [
        p for p in discover([write_run_dir(tmp_path / "runs")]) if not isinstance(p, StoredOutcome)
    ]
    good = [p.record for p in points if p.record is not None]
    # label is NOT NULL: the outcome insert fails after the records went in
    broken = StoredOutcome.model_construct(
        run_id="run-1",
        job_fingerprint="fp",
        label=None,
        status=JobStatus.FAILED,
        attempt=1,
        reason=None,
    )
    with open_store(db_url) as store:
        with pytest.raises(StoreError):
            store.write(good, [broken])
        assert store.count() == 0


def test_migration_v1_to_v2_keeps_rows_and_backfills(db_url: str) -> None:
    engine = create_engine(db_url)
    with engine.begin() as conn:
        assert migrate(conn, target=1) == [1]
        assert "tag" not in {c["name"] for c in inspect(conn).get_columns("records")}
        conn.execute(_v1_insert())
    engine.dispose()
    with open_store(db_url) as store:  # migrates to the latest version
        with store.engine.connect() as conn:
            assert current_version(conn) == LATEST == 6
            assert inspect(conn).has_table("predicted_points")
            assert inspect(conn).has_table("job_outcomes")
            rows = conn.execute(select(records.c.run_id, records.c.tag)).all()
        assert rows == [("old", "weekly")]


def _v1_form(rec: Record, **identity: object) -> Record:
    """`rec` as schema v1 stored it (the results package's own image/layout conventions)."""
    data = rec.model_dump(mode="json")
    data["schema_version"] = 1
    data["identity"].update(identity)
    return Record.model_validate(data)


def test_migration_v3_rekeys_old_identities_so_reingest_matches(
    db_url: str, tmp_path: Path
) -> None:
    url = db_url
    run = write_run_dir(tmp_path / "runs", failed_job=False)
    new = sorted(
        (p.record for p in discover([run]) if isinstance(p, Point) and p.record),
        key=lambda r: r.identity.concurrency,
    )
    assert new[0].identity.image == "docker.io/lmsysorg/sglang:v0.5.2-cu129"
    old = [_v1_form(r, image="lmsysorg/sglang:v0.5.2-cu129") for r in new]
    # two spellings of one image for one point: the same point now, the newer row stays
    twin = new[0].model_copy(
        update={"provenance": new[0].provenance.model_copy(update={"run_id": "twin"})}
    )
    twin_a = _v1_form(twin, image="nvcr.io#nvidia/sglang:1")
    tagged = twin.model_copy(
        update={"provenance": twin.provenance.model_copy(update={"tag": "newer"})}
    )
    twin_b = _v1_form(tagged, image="nvcr.io/nvidia/sglang:1")
    # a one-rank DEP pool had no layout note in v1
    dep1 = identity_from_job(
        {**disagg_job(), "prefill": {"num-worker": 1, "tp": 1, "ep": 1, "dp-attn": True}},
        concurrency=64,
    )
    assert dep1.pools[0].layout_note == "DEP written as tp=N ep=N"
    dep1_rec = new[0].model_copy(
        update={
            "identity": dep1,
            "provenance": new[0].provenance.model_copy(update={"run_id": "dep1"}),
        }
    )
    pools = dep1_rec.model_dump(mode="json")["identity"]["pools"]
    pools[0]["layout_note"] = None
    dep1_old = _v1_form(dep1_rec, pools=pools)
    engine = create_engine(url)
    with engine.begin() as conn:
        migrate(conn, target=2)
    Store(engine, url).write([*old, twin_a, twin_b, dep1_old])
    engine.dispose()
    with open_store(url) as store:  # migrates v2 -> v3
        stored = {s.record.natural_key(): s.record for s in store.query()}
        assert len(stored) == 4
        # rewritten into the v2 form (v3 only added an optional field)
        assert {r.schema_version for r in stored.values()} == {2} and SCHEMA_VERSION >= 2
        assert new[0].natural_key() in stored and new[1].natural_key() in stored
        assert dep1_rec.natural_key() in stored
        twins = [r for r in stored.values() if r.provenance.run_id == "twin"]
        assert [(t.identity.image, t.provenance.tag) for t in twins] == [
            ("nvcr.io/nvidia/sglang:1", "newer")
        ]
        with store.engine.connect() as conn:
            keys = dict(conn.execute(select(records.c.natural_key, records.c.point_key)).all())
        assert all(keys[k] == r.point_key() for k, r in stored.items())
    # the old run's rows are found again: nothing added (they are rewritten once in the
    # current record schema), and from then on nothing changes
    again = ingest_paths([run], url)
    assert (again.inserted, again.updated + again.unchanged) == (0, 2)
    again = ingest_paths([run], url)
    assert (again.inserted, again.updated, again.unchanged) == (0, 0, 2)
    assert open_store(url).count() == 4


def _v1_insert() -> TextClause:
    """An insert naming only v1 columns (the v2 table object knows `tag`)."""
    return text(
        "INSERT INTO records (natural_key, point_key, content_hash, run_id, model_prefix, "
        "precision, framework, hardware, isl, osl, concurrency, official, ingested_at, "
        "record_json) VALUES ('k1', 'p1', 'h', 'old', 'dsr1', 'fp8', 'vllm', 'h200', 1024, "
        '1024, 4, false, \'2025\', \'{"provenance": {"tag": "weekly"}}\')'
    )


def test_newer_database_schema_is_refused(db_url: str) -> None:
    with open_store(db_url) as store, store.engine.begin() as conn:
        from inferbench.results.migrations import schema_migrations

        conn.execute(schema_migrations.insert().values(version=LATEST + 1, applied_at="future"))
    with pytest.raises(StoreError, match="newer than this inferbench"):
        open_store(db_url)


def test_locked_sqlite_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "locked.sqlite"
    url = f"sqlite:///{path}"
    open_store(url).close()
    holder = sqlite3.connect(path)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        run = write_run_dir(tmp_path / "runs")
        recs = [p.record for p in discover([run]) if getattr(p, "record", None)]
        with (
            pytest.raises(StoreError, match="locked"),
            open_store(url, busy_timeout_s=0.1) as store,
        ):
            store.write(recs)  # type: ignore[arg-type]
    finally:
        holder.rollback()
        holder.close()
    assert open_store(url).count() == 0


def test_unreachable_and_malformed_urls() -> None:
    with pytest.raises(StoreError, match="cannot use database postgresql"):
        open_store("postgresql+psycopg://nobody:secret@127.0.0.1:1/none", busy_timeout_s=1)
    with pytest.raises(StoreError) as exc:
        open_store("postgresql+psycopg://nobody:secret@127.0.0.1:1/none", busy_timeout_s=1)
    assert "secret" not in exc.value.render()
    with pytest.raises(StoreError, match="not a database URL"):
        open_store("not a url")
    with pytest.raises(StoreError, match="cannot use database"):
        open_store("sqlite:////proc/definitely/not/here.sqlite")
