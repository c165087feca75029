"""Versioned schema migrations for the results store (SQLite and PostgreSQL).

`schema_migrations` holds one row per applied version. Each migration runs inside the
caller's transaction, so a failed upgrade leaves the database as it was.
  v1  records: one row per point (natural key, filter columns, the record as JSON)
  v2  records.tag (backfilled from the stored JSON) + job_outcomes (failed jobs stay
      visible) + an index for the dashboard's model/length filters
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import orjson
from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    inspect,
    select,
    text,
    update,
)

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


MIGRATIONS: tuple[tuple[int, Callable[[Connection], None]], ...] = ((1, _v1), (2, _v2))
LATEST = MIGRATIONS[-1][0]


def current_version(conn: Connection) -> int:
    if not inspect(conn).has_table("schema_migrations"):
        return 0
    found = conn.execute(select(schema_migrations.c.version)).scalars().all()
    return max(found, default=0)


def migrate(conn: Connection, target: int = LATEST) -> list[int]:
    """Apply every migration above the current version up to `target`; returns those run."""
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
