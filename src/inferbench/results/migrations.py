"""Versioned schema migrations for the results store (SQLite and PostgreSQL).

`schema_migrations` holds one row per applied version. Each migration runs inside the
caller's transaction, so a failed upgrade leaves the database as it was.
  v1  records: one row per point (natural key, filter columns, the record as JSON)
  v2  records.tag (backfilled from the stored JSON) + job_outcomes (failed jobs stay
      visible) + an index for the dashboard's model/length filters
  v3  records re-keyed to record schema v2 (identity from the config layer's
      conventions: images as `docker.io/...`, a layout note on single-rank DEP pools),
      so a re-ingest of an old run finds its rows instead of adding new ones
  v4  eval_results: one accuracy eval per (run, point, task), its primary score in
      columns and the whole EvalRecord as JSON
  v5  records.samples: the point's per-request values (a compressed .npz) for the
      comparison's noise model; NULL for points ingested before, or without them
  v6  predicted_points: the points an adaptive run left to the simulator (its prediction,
      interval and why it was skipped), kept apart from the measured `records`
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import orjson
from pydantic import ValidationError
from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    delete,
    inspect,
    select,
    text,
    update,
)

from inferbench.engines.layout import Spelling
from inferbench.results.identity import LAYOUT_NOTES, canonical_image
from inferbench.results.record import Record, content_hash

metadata = MetaData()

schema_migrations = Table(
    "schema_migrations",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", String(40), nullable=False),
)


def _record_columns() -> list[Column[object]]:
    """The v1 columns of `records` (fresh objects each call: a Column has one table)."""
    return [
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("natural_key", String(64), nullable=False, unique=True),
        Column("point_key", String(64), nullable=False, index=True),
        Column("content_hash", String(64), nullable=False),
        Column("run_id", String(200), nullable=False, index=True),
        Column("model_prefix", String(100), nullable=False),
        Column("precision", String(20), nullable=False),
        Column("framework", String(60), nullable=False),
        Column("hardware", String(100), nullable=False),
        Column("isl", Integer, nullable=False),
        Column("osl", Integer, nullable=False),
        Column("concurrency", Integer, nullable=False),
        Column("official", Boolean, nullable=False),
        Column("ingested_at", String(40), nullable=False),
        Column("record_json", Text, nullable=False),
    ]


records = Table(
    "records",
    metadata,
    *_record_columns(),
    Column("tag", String(200), nullable=True),  # added by v2
    Column("samples", LargeBinary, nullable=True),  # added by v5
)

job_outcomes = Table(
    "job_outcomes",
    metadata,
    Column("run_id", String(200), primary_key=True),
    Column("job_fingerprint", String(200), primary_key=True),
    Column("label", String(300), nullable=False),
    Column("status", String(40), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("reason", Text, nullable=True),
)


eval_results = Table(
    "eval_results",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("natural_key", String(64), nullable=False, unique=True),
    Column("point_key", String(64), nullable=False, index=True),
    Column("run_id", String(200), nullable=False, index=True),
    Column("tag", String(200), nullable=True),
    Column("model_prefix", String(100), nullable=False),
    Column("precision", String(20), nullable=False),
    Column("framework", String(60), nullable=False),
    Column("hardware", String(100), nullable=False),
    Column("isl", Integer, nullable=False),
    Column("osl", Integer, nullable=False),
    Column("concurrency", Integer, nullable=False),
    Column("task", String(60), nullable=False),
    Column("status", String(20), nullable=False),
    Column("simulated", Boolean, nullable=False),
    Column("score", Float, nullable=True),  # the task's primary metric and filter
    Column("stderr", Float, nullable=True),
    Column("samples", Integer, nullable=True),
    Column("ingested_at", String(40), nullable=False),
    Column("eval_json", Text, nullable=False),
)


predicted_points = Table(
    "predicted_points",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("natural_key", String(64), nullable=False, unique=True),
    Column("run_id", String(200), nullable=False, index=True),
    Column("point_key", String(64), nullable=False),
    Column("model_prefix", String(100), nullable=False),
    Column("isl", Integer, nullable=False),
    Column("osl", Integer, nullable=False),
    Column("hardware", String(100), nullable=False),
    Column("status", String(20), nullable=False),
    Column("ingested_at", String(40), nullable=False),
    Column("point_json", Text, nullable=False),
)


def _v1(conn: Connection) -> None:
    # v1 as it really was (no `tag`), built on its own metadata.
    Table("records", MetaData(), *_record_columns()).create(conn)


def _v2(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE records ADD COLUMN tag VARCHAR(200)"))
    rows = conn.execute(select(records.c.id, records.c.record_json)).all()
    for row_id, payload in rows:
        tag = orjson.loads(payload).get("provenance", {}).get("tag")
        if tag:
            conn.execute(update(records).where(records.c.id == row_id).values(tag=tag))
    job_outcomes.create(conn)
    Index("ix_records_filters", records.c.model_prefix, records.c.isl, records.c.osl).create(conn)


_BATCH = 500


def _rekeyed(payload: str) -> dict[str, object] | None:
    """A schema-v1 record in v2 form, with its keys; None when it is not one (or unreadable)."""
    try:
        raw = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None
    ident = raw.get("identity") if isinstance(raw, dict) else None
    if not isinstance(ident, dict) or raw.get("schema_version", 1) != 1:
        return None
    if isinstance(ident.get("image"), str):
        ident["image"] = canonical_image(ident["image"])
    for pool in ident.get("pools") or ():
        # v1 left a DEP pool of one rank (tp 1, ep 1, dp-attn) without a note
        if isinstance(pool, dict) and pool.get("dp_attn") and pool.get("layout_note") is None:
            pool["layout_note"] = LAYOUT_NOTES[Spelling.DEP_TP_IS_GPUS]
    raw["schema_version"] = 2
    try:
        record = Record.model_validate(raw)
    except ValidationError:
        return None
    new = record.model_dump_json()
    return {
        "key": record.natural_key(),
        "point_key": record.point_key(),
        "content_hash": content_hash(new),
        "record_json": new,
    }


def _v3(conn: Connection) -> None:
    # Rewritten rows first take a temporary key (unique, never a hex digest) so no
    # update collides with a row not yet rewritten; two rows of one run that now name
    # the same point keep the newer one (higher id), as a re-ingest would have.
    final: dict[int, str] = {}
    last = 0
    rewrite = (
        update(records)
        .where(records.c.id == bindparam("b_id"))
        .values(
            natural_key=bindparam("temp"),
            point_key=bindparam("point_key"),
            content_hash=bindparam("content_hash"),
            record_json=bindparam("record_json"),
        )
    )
    moved: dict[int, str] = {}
    columns = select(records.c.id, records.c.natural_key, records.c.record_json)
    while True:
        stmt = columns.where(records.c.id > last).order_by(records.c.id).limit(_BATCH)
        rows = conn.execute(stmt).all()
        if not rows:
            break
        last = rows[-1][0]
        batch = []
        for row_id, key, payload in rows:
            new = _rekeyed(payload)
            if new is None:
                final[row_id] = key
                continue
            final[row_id] = moved[row_id] = str(new.pop("key"))
            batch.append({**new, "b_id": row_id, "temp": f"v3-{row_id}"})
        if batch:
            conn.execute(rewrite, batch)
    newest: dict[str, int] = {}
    for row_id, key in final.items():
        newest[key] = max(row_id, newest.get(key, 0))
    losers = [row_id for row_id, key in final.items() if newest[key] != row_id]
    for start in range(0, len(losers), _BATCH):
        conn.execute(delete(records).where(records.c.id.in_(losers[start : start + _BATCH])))
    keep = [{"b_id": i, "key": k} for i, k in moved.items() if newest[k] == i]
    if keep:
        rename = update(records).where(records.c.id == bindparam("b_id"))
        conn.execute(rename.values(natural_key=bindparam("key")), keep)


def _v4(conn: Connection) -> None:
    eval_results.create(conn)


def _v5(conn: Connection) -> None:
    kind = LargeBinary().compile(dialect=conn.dialect)  # BLOB in SQLite, BYTEA in PostgreSQL
    conn.execute(text(f"ALTER TABLE records ADD COLUMN samples {kind}"))


def _v6(conn: Connection) -> None:
    predicted_points.create(conn)


MIGRATIONS: tuple[tuple[int, Callable[[Connection], None]], ...] = (
    (1, _v1),
    (2, _v2),
    (3, _v3),
    (4, _v4),
    (5, _v5),
    (6, _v6),
)
LATEST = MIGRATIONS[-1][0]


def current_version(conn: Connection) -> int:
    if not inspect(conn).has_table("schema_migrations"):
        return 0
    found = conn.execute(select(schema_migrations.c.version)).scalars().all()
    return max(found, default=0)


# pg_advisory_xact_lock key serialising schema changes ("ib" + "schema" in ASCII, shortened).
_PG_LOCK_KEY = 0x69625343
_SQLITE_LOCK_WAIT_MS = 120_000  # a big v3 re-key can take a while; a first use is instant


def lock_for_migration(conn: Connection) -> None:
    """Take the database's schema lock for the rest of `conn`'s transaction, so processes
    opening a new store at the same moment migrate it one after the other (each re-reads
    the version under the lock). SQLite: `BEGIN IMMEDIATE`, the write lock up front
    (pysqlite would run CREATE TABLE outside any transaction); PostgreSQL: an advisory
    transaction lock. Must be the first statement of a fresh connection."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(f"PRAGMA busy_timeout = {_SQLITE_LOCK_WAIT_MS}")
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    elif conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})


def migrate(conn: Connection, target: int = LATEST) -> list[int]:
    """Apply every migration above the current version up to `target`; returns those run.
    Concurrent callers must hold `lock_for_migration` (open_store does)."""
    if not inspect(conn).has_table("schema_migrations"):
        schema_migrations.create(conn)
    have = current_version(conn)
    applied = []
    for version, step in MIGRATIONS:
        if have < version <= target:
            step(conn)
            conn.execute(
                schema_migrations.insert().values(
                    version=version, applied_at=datetime.now(UTC).isoformat()
                )
            )
            applied.append(version)
    return applied
