"""Reading a SQLite store that cannot be written (a read-only file, folder or mount).

A store is migrated to the latest schema when it is opened; one made by an earlier
inferbench and now read-only cannot be. Where what it lacks is only tables (v4
eval_results, v6 predicted_points), those are made empty and TEMPORARY on every connection
of the reader (SQLite finds a temp table before a main one of the same name), so the store
reads as it is; a store that lacks a column or a rewrite is refused with what to do.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, event
from sqlalchemy.engine import Engine
from sqlalchemy.schema import CreateTable

from inferbench.results.migrations import LATEST, eval_results, predicted_points

# schema version -> the table it added (and nothing else)
_TABLE_ONLY: dict[int, Table] = {4: eval_results, 6: predicted_points}


def is_read_only_error(detail: str) -> bool:
    """SQLite's words for a write refused by the file, its folder or the mount."""
    text = detail.lower()
    return "readonly" in text or "read-only" in text


def readable_as_latest(have: int) -> bool:
    """True when a store of schema `have` lacks only tables to read as the latest one."""
    return all(v in _TABLE_ONLY for v in range(have + 1, LATEST + 1))


def add_temporary_tables(engine: Engine, have: int) -> None:
    """Make the tables a schema-`have` store lacks, empty and temporary, on each connection
    of `engine` (the pool is emptied first, so every connection gets them)."""
    ddl = [
        str(CreateTable(_TABLE_ONLY[v]).compile(dialect=engine.dialect)).replace(
            "CREATE TABLE", "CREATE TEMPORARY TABLE", 1
        )
        for v in range(have + 1, LATEST + 1)
    ]

    def create(dbapi_connection: Any, _record: object) -> None:
        cursor = dbapi_connection.cursor()
        try:
            for statement in ddl:
                cursor.execute(statement)
        finally:
            cursor.close()

    event.listen(engine, "connect", create)
    engine.dispose()
