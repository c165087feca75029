"""The results store: SQLite by default, PostgreSQL by URL (SQLAlchemy 2.0 Core).

`open_store(url)` connects, checks the database answers, and migrates it to the
latest schema. Writes go through `Store.write`, one transaction for the whole batch:
a failure leaves nothing half-written. An unreachable, locked or newer database is a
`StoreError` (one line, exit 2), never a traceback.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import (
    Connection,
    Engine,
    Select,
    bindparam,
    create_engine,
    func,
    select,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    IntegrityError,
    NoSuchModuleError,
    SQLAlchemyError,
)

from inferbench.core.errors import InferbenchError, InputError, Location
from inferbench.core.limits import MAX_TOKENS
from inferbench.core.outcome import StoredOutcome
from inferbench.results.evalrecord import EvalRecord, eval_record_from_json
from inferbench.results.migrations import (
    LATEST,
    current_version,
    eval_results,
    job_outcomes,
    lock_for_migration,
    migrate,
    predicted_points,
    records,
)
from inferbench.results.predicted import PredictedPoint
from inferbench.results.readonly import (
    add_temporary_tables,
    is_read_only_error,
    readable_as_latest,
)
from inferbench.results.record import Record, content_hash, record_from_json
from inferbench.results.samples import PointSamples

# One file name for the default store, so `make demo` and `inferbench results` meet.
DEFAULT_DB_FILE = "results.sqlite"
DEFAULT_DB_URL = f"sqlite:///runs/{DEFAULT_DB_FILE}"
_CHUNK = 500
PAGE_ROWS = 1000  # records read and parsed at a time when streaming a selection
MAX_ROW_ID = 2**63 - 1  # ids are 64-bit integers in SQLite and PostgreSQL
_WRITE_ATTEMPTS = 3


_Select = TypeVar("_Select", bound="Select[Any]")


class StoreError(InferbenchError):
    """The results database cannot be used (unreachable, locked, newer schema, bad URL)."""


@dataclass(frozen=True)
class StoredRecord:
    id: int
    record: Record


@dataclass(frozen=True)
class WriteCounts:
    inserted: int
    updated: int
    unchanged: int


@dataclass(frozen=True)
class RecordFilter:
    """Equality filters on the indexed columns; None means any."""

    run_id: str | None = None
    tag: str | None = None
    model_prefix: str | None = None
    precision: str | None = None
    framework: str | None = None
    hardware: str | None = None
    isl: int | None = None
    osl: int | None = None
    official: bool | None = None

    def __post_init__(self) -> None:
        # a length past any stored one selects nothing; past 64 bits the database refuses it
        for name in ("isl", "osl"):
            value = getattr(self, name)
            if value is not None and not 1 <= value <= MAX_TOKENS:
                raise InputError(
                    f"{value}: no point has that {name}",
                    location=Location(key=f"--{name}"),
                    hint=f"give a length from 1 to {MAX_TOKENS}",
                )


def _filtered(stmt: _Select, flt: RecordFilter | None) -> _Select:
    """`stmt` restricted to the records `flt` selects (equality on indexed columns)."""
    for name, value in flt.__dict__.items() if flt else ():
        if value is not None:
            stmt = stmt.where(records.c[name] == value)
    return stmt


def _redact(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable URL>"


_URL_HINT = "use sqlite:///path/results.sqlite or postgresql+psycopg://user@host/db"


def _engine(url: str, busy_timeout_s: float, create: bool) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(f"not a database URL: {url!r}", hint=_URL_HINT) from None
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    connect_args: dict[str, object] = {}
    if parsed.drivername.startswith("sqlite"):
        connect_args["timeout"] = busy_timeout_s
        if not parsed.database or parsed.database == ":memory:" or "mode=memory" in url:
            # an in-memory store is a new, empty one per connection: what is ingested
            # into it is gone when the command exits (and reads find nothing)
            raise StoreError(
                f"{_redact(url)} is an in-memory database: nothing stored there outlives"
                " the command",
                hint="name a file, e.g. --db sqlite:///runs/results.sqlite (three slashes"
                " and a path)",
            )
        _sqlite_file(Path(parsed.database), url, create)
    elif parsed.drivername.startswith("postgresql"):
        connect_args["connect_timeout"] = max(1, int(busy_timeout_s))
    try:
        return create_engine(parsed, connect_args=connect_args)
    except (NoSuchModuleError, ImportError):
        raise StoreError(
            f"cannot use database {_redact(url)}: no driver for {parsed.drivername!r}",
            hint=_URL_HINT,
        ) from None


def _sqlite_file(path: Path, url: str, create: bool) -> None:
    """A store that is only read must exist (a typo in --db would read as an empty store);
    one written to gets its folder."""
    if not create:
        if not path.is_file():
            raise StoreError(
                f"no results database at {path}",
                hint="check --db, or store results first with `inferbench results ingest`",
            )
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot use database {_redact(url)}: cannot create its folder: {exc.strerror}"
        ) from None


class Store:
    """A migrated results database."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url

    def close(self) -> None:
        """Release pooled connections."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _begin(self) -> Iterator[Connection]:
        try:
            with self.engine.begin() as conn:
                yield conn
        except DBAPIError as exc:
            raise _store_error(exc, self.url) from None

    def _migrate(self, have: int, reading: bool) -> None:
        """Migrate under the schema lock: a second process opening the same new store waits,
        then finds it migrated. A read-only SQLite store opened for `reading` is read as it
        is where it lacks only tables (`inferbench.results.readonly`)."""
        try:
            with self.engine.connect() as conn:
                lock_for_migration(conn)
                migrate(conn)
                conn.commit()
        except DBAPIError as exc:
            detail = str(exc.orig or exc)
            if not (reading and self.engine.dialect.name == "sqlite"):
                raise _store_error(exc, self.url) from None
            if not is_read_only_error(detail):
                raise _store_error(exc, self.url) from None
            if not readable_as_latest(have):
                raise StoreError(
                    f"database {_redact(self.url)} has schema v{have}, older than this"
                    f" inferbench (v{LATEST}), and is read-only: it cannot be upgraded to be read",
                    hint="make it writable once (the next command upgrades it), or copy it to"
                    " a writable folder and read the copy",
                ) from None
            add_temporary_tables(self.engine, have)

    def write(self, batch: Sequence[Record], outcomes: Sequence[StoredOutcome] = ()) -> WriteCounts:
        """Upsert records by natural key and outcomes by (run, job), all in one transaction.

        A concurrent writer inserting the same point first makes our insert collide on
        the natural key; the whole transaction is then retried and sees its row.
        """
        now = datetime.now(UTC).isoformat()
        return self.write_rows([store_row(rec, now) for rec in batch], outcomes)

    def write_rows(
        self, batch: Sequence[StoreRow], outcomes: Sequence[StoredOutcome] = ()
    ) -> WriteCounts:
        """`write` for records already turned into rows (by worker processes, say)."""
        # The same point reached by two paths in one batch: the last one wins.
        rows = list({r.natural_key: r for r in batch}.values())
        for attempt in range(_WRITE_ATTEMPTS):
            try:
                with self.engine.begin() as conn:
                    return _write_rows(conn, rows, outcomes)
            except IntegrityError as exc:
                if attempt == _WRITE_ATTEMPTS - 1:
                    raise _store_error(exc, self.url) from None
            except DBAPIError as exc:
                raise _store_error(exc, self.url) from None
        raise AssertionError("unreachable")

    def query(self, flt: RecordFilter | None = None) -> list[StoredRecord]:
        """Every matching record, in ingest order (a selection someone asked for whole)."""
        return list(self.iter_records(flt))

    def iter_records(
        self, flt: RecordFilter | None = None, *, limit: int | None = None
    ) -> Iterator[StoredRecord]:
        """Matching records in ingest order, at most `limit`, read a page at a time.

        The filter and the limit are in the query, and only the rows returned are parsed:
        listing 200 of a million records reads 200. Pages are keyed on the id (never
        OFFSET, which rereads what it skips) and each is its own short read, so no
        transaction stays open while the caller renders or writes.
        """
        after = 0
        left = limit
        while left is None or left > 0:
            size = PAGE_ROWS if left is None else min(PAGE_ROWS, left)
            stmt = _filtered(select(records.c.id, records.c.record_json), flt)
            stmt = stmt.where(records.c.id > after).order_by(records.c.id).limit(size)
            with self._begin() as conn:
                rows = conn.execute(stmt).all()
            for row_id, payload in rows:
                yield StoredRecord(row_id, record_from_json(payload))
            if len(rows) < size:
                return
            after = rows[-1][0]
            if left is not None:
                left -= len(rows)

    def count_matching(self, flt: RecordFilter | None = None) -> int:
        """How many records match (counted in the database)."""
        stmt = _filtered(select(func.count()).select_from(records), flt)
        with self._begin() as conn:
            return int(conn.execute(stmt).scalar_one())

    def run_ids_matching(self, flt: RecordFilter | None = None, *, most: int) -> list[str]:
        """Up to `most` distinct run ids among the matching records (sorted)."""
        stmt = _filtered(select(records.c.run_id).distinct(), flt)
        with self._begin() as conn:
            found = conn.execute(stmt.order_by(records.c.run_id).limit(most)).scalars()
            return [str(r) for r in found]

    def latest_per_point(self, flt: RecordFilter | None = None) -> list[StoredRecord]:
        """The most recently ingested record of each point key (what a dashboard shows).

        Chosen in SQL so only those records are read and validated, however many runs
        the store holds.
        """
        newest = _filtered(select(func.max(records.c.id)), flt).group_by(records.c.point_key)
        stmt = (
            select(records.c.id, records.c.record_json)
            .where(records.c.id.in_(newest.scalar_subquery()))
            .order_by(records.c.id)
        )
        with self._begin() as conn:
            rows = conn.execute(stmt).all()
        return [StoredRecord(row_id, record_from_json(payload)) for row_id, payload in rows]

    def history(self, per_point: int) -> list[tuple[str, StoredRecord]]:
        """Each point key's `per_point` most recently ingested records with their point
        key (a history view's data), chosen in SQL so a long history is never read whole."""
        rank = (
            func.row_number()
            .over(partition_by=records.c.point_key, order_by=records.c.id.desc())
            .label("rank")
        )
        ranked = select(records.c.id.label("rid"), rank).subquery()
        stmt = (
            select(records.c.point_key, records.c.id, records.c.record_json)
            .join(ranked, ranked.c.rid == records.c.id)
            .where(ranked.c.rank <= per_point)
            .order_by(records.c.id)
        )
        with self._begin() as conn:
            rows = conn.execute(stmt).all()
        return [(key, StoredRecord(row_id, record_from_json(data))) for key, row_id, data in rows]

    def samples(self, natural_keys: Sequence[str]) -> dict[str, PointSamples]:
        """The per-request samples stored with these points, by natural key (points
        ingested without them are absent)."""
        found: dict[str, PointSamples] = {}
        keys = list(dict.fromkeys(natural_keys))
        with self._begin() as conn:
            for start in range(0, len(keys), _CHUNK):
                stmt = select(records.c.natural_key, records.c.samples).where(
                    records.c.natural_key.in_(keys[start : start + _CHUNK]),
                    records.c.samples.is_not(None),
                )
                for key, blob in conn.execute(stmt).all():
                    parsed = PointSamples.from_bytes(bytes(blob))
                    if parsed is not None:
                        found[key] = parsed
        return found

    def run_ids(self) -> list[str]:
        """Run ids, the most recently ingested last."""
        stmt = select(records.c.run_id).group_by(records.c.run_id).order_by(func.max(records.c.id))
        with self._begin() as conn:
            return [str(r) for r in conn.execute(stmt).scalars().all()]

    def get(self, record_id: int) -> StoredRecord | None:
        if not 1 <= record_id <= MAX_ROW_ID:
            return None  # no row has it (and the driver could not bind it)
        stmt = select(records.c.id, records.c.record_json).where(records.c.id == record_id)
        with self._begin() as conn:
            row = conn.execute(stmt).first()
        return StoredRecord(row[0], record_from_json(row[1])) if row else None

    def outcomes(self) -> list[StoredOutcome]:
        with self._begin() as conn:
            rows = conn.execute(select(job_outcomes)).mappings().all()
        return [StoredOutcome.model_validate(dict(r)) for r in rows]

    def write_evals(self, batch: Sequence[EvalRecord]) -> int:
        """Upsert evals by natural key (a re-ingest replaces); returns how many were new."""
        now = datetime.now(UTC).isoformat()
        rows = {e.natural_key(): eval_row(e, now) for e in batch}
        if not rows:
            return 0
        with self._begin() as conn:
            keys = list(rows)
            have: set[str] = set()
            for start in range(0, len(keys), _CHUNK):
                part = keys[start : start + _CHUNK]
                stmt = select(eval_results.c.natural_key).where(
                    eval_results.c.natural_key.in_(part)
                )
                have.update(conn.execute(stmt).scalars().all())
            fresh = [r for k, r in rows.items() if k not in have]
            known = [{**r, "b_key": k} for k, r in rows.items() if k in have]
            if fresh:
                conn.execute(eval_results.insert(), fresh)
            if known:
                columns = [c for c in known[0] if c not in ("natural_key", "b_key")]
                replace = (
                    update(eval_results)
                    .where(eval_results.c.natural_key == bindparam("b_key"))
                    .values({c: bindparam(c) for c in columns})
                )
                conn.execute(replace, known)
        return len(fresh)

    def evals(self, flt: RecordFilter | None = None) -> list[EvalRecord]:
        """Stored evals in ingest order, filtered like `query`."""
        stmt = select(eval_results.c.eval_json).order_by(eval_results.c.id)
        for name, value in flt.__dict__.items() if flt else ():
            if value is not None and name in eval_results.c:
                stmt = stmt.where(eval_results.c[name] == value)
        with self._begin() as conn:
            payloads = conn.execute(stmt).scalars().all()
        return [eval_record_from_json(p) for p in payloads]

    def write_predicted(self, batch: Sequence[PredictedPoint]) -> int:
        """Store an adaptive run's predicted points (a re-ingest replaces them); returns
        how many were written. They never enter `records`."""
        now = datetime.now(UTC).isoformat()
        rows = {
            p.natural_key(): {
                "natural_key": p.natural_key(),
                "run_id": p.run_id,
                "point_key": p.point,
                "model_prefix": p.model_prefix,
                "isl": p.isl,
                "osl": p.osl,
                "hardware": p.hardware,
                "status": p.status,
                "ingested_at": now,
                "point_json": p.model_dump_json(),
            }
            for p in batch
        }
        if not rows:
            return 0
        with self._begin() as conn:
            keys = list(rows)
            for start in range(0, len(keys), _CHUNK):
                part = keys[start : start + _CHUNK]
                conn.execute(
                    predicted_points.delete().where(predicted_points.c.natural_key.in_(part))
                )
            conn.execute(predicted_points.insert(), list(rows.values()))
        return len(rows)

    def predicted(self, run_id: str | None = None) -> list[PredictedPoint]:
        """Predicted points (all runs, or one), in ingest order."""
        stmt = select(predicted_points.c.point_json).order_by(predicted_points.c.id)
        if run_id is not None:
            stmt = stmt.where(predicted_points.c.run_id == run_id)
        with self._begin() as conn:
            payloads = conn.execute(stmt).scalars().all()
        return [PredictedPoint.model_validate_json(p) for p in payloads]

    def count(self) -> int:
        with self._begin() as conn:
            return int(conn.execute(select(func.count()).select_from(records)).scalar_one())


@dataclass(frozen=True, slots=True)
class StoreRow:
    """One record as the `records` table stores it: indexed columns + the JSON."""

    natural_key: str
    point_key: str
    content_hash: str
    run_id: str
    model_prefix: str
    precision: str
    framework: str
    hardware: str
    isl: int
    osl: int
    concurrency: int
    official: bool
    ingested_at: str
    record_json: str
    tag: str | None
    samples: bytes | None = None  # PointSamples.to_bytes(), for the comparison's noise model

    def params(self, columns: Sequence[str] | None = None) -> dict[str, object]:
        return {name: getattr(self, name) for name in columns or _ROW_COLUMNS}


_ROW_COLUMNS = tuple(StoreRow.__dataclass_fields__)


_INT_COLUMN_MAX = 2**31 - 1  # INTEGER in PostgreSQL; a value beyond would fail the batch


def store_row(r: Record, now: str, samples: PointSamples | None = None) -> StoreRow:
    """The row of a record (and its per-request samples); InputError when a value cannot be
    stored (so the one file is skipped, not the whole transaction lost)."""
    payload = r.model_dump_json()
    blob = samples.to_bytes() if samples is not None and samples.size else None
    i = r.identity
    for name, value in (("isl", i.isl), ("osl", i.osl), ("concurrency", i.concurrency)):
        if not 0 <= value <= _INT_COLUMN_MAX:
            raise InputError(
                f"{name} {value} is out of range (0..{_INT_COLUMN_MAX})",
                location=Location(key=name),
                hint="fix the file's name or its fields",
            )
    return StoreRow(
        natural_key=r.natural_key(),
        point_key=r.point_key(),
        # samples arriving for a stored point (a re-ingest after an upgrade) change the row
        content_hash=content_hash(payload if blob is None else payload + _digest(blob)),
        run_id=r.provenance.run_id,
        model_prefix=i.model_prefix,
        precision=i.precision,
        framework=i.framework,
        hardware=i.hardware(),
        isl=i.isl,
        osl=i.osl,
        concurrency=i.concurrency,
        official=r.provenance.official,
        ingested_at=now,
        record_json=payload,
        tag=r.provenance.tag,
        samples=blob,
    )


def _digest(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


def eval_row(e: EvalRecord, now: str) -> dict[str, object]:
    i, primary = e.identity, e.result.primary
    return {
        "natural_key": e.natural_key(),
        "point_key": e.point_key(),
        "run_id": e.provenance.run_id,
        "tag": e.provenance.tag,
        "model_prefix": i.model_prefix,
        "precision": i.precision,
        "framework": i.framework,
        "hardware": i.hardware(),
        "isl": i.isl,
        "osl": i.osl,
        "concurrency": i.concurrency,
        "task": e.task,
        "status": e.result.status.value,
        "simulated": e.result.simulated,
        "score": primary.value if primary else None,
        "stderr": primary.stderr if primary else None,
        "samples": primary.samples if primary else None,
        "ingested_at": now,
        "eval_json": e.model_dump_json(),
    }


def _write_rows(
    conn: Connection, rows: list[StoreRow], outcomes: Sequence[StoredOutcome]
) -> WriteCounts:
    inserted = updated = unchanged = 0
    # a batch without samples leaves the column out (and works on a store before v5)
    with_samples = any(r.samples is not None for r in rows)
    columns = [c for c in _ROW_COLUMNS if with_samples or c != "samples"]
    for start in range(0, len(rows), _CHUNK * 10):
        chunk = rows[start : start + _CHUNK * 10]
        existing = _existing(conn, [r.natural_key for r in chunk])
        fresh = [r for r in chunk if r.natural_key not in existing]
        changed = [
            r
            for r in chunk
            if r.natural_key in existing and existing[r.natural_key] != r.content_hash
        ]
        if fresh:
            _insert_rows(conn, fresh, columns)
        if changed:
            replace = (
                update(records)
                .where(records.c.natural_key == bindparam("b_key"))
                .values({c: bindparam(c) for c in columns if c != "natural_key"})
            )
            conn.execute(replace, [{**r.params(columns), "b_key": r.natural_key} for r in changed])
        inserted += len(fresh)
        updated += len(changed)
        unchanged += len(chunk) - len(fresh) - len(changed)
    _write_outcomes(conn, outcomes)
    return WriteCounts(inserted, updated, unchanged)


def _insert_rows(conn: Connection, rows: list[StoreRow], columns: list[str]) -> None:
    """Insert `rows` with one statement compiled for this database and handed to its
    driver's executemany as plain tuples: an ingest of 100,000 points spent more time in
    SQLAlchemy's per-row parameter processing than in SQLite. The columns are plain
    strings, integers, booleans and bytes, which both drivers bind as they are."""
    compiled = records.insert().compile(dialect=conn.dialect, column_keys=columns)
    if compiled.positional:
        order = compiled.positiontup or []
        conn.exec_driver_sql(str(compiled), [tuple(getattr(r, c) for c in order) for r in rows])
    else:
        conn.exec_driver_sql(str(compiled), [r.params(columns) for r in rows])


def _existing(conn: Connection, keys: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for start in range(0, len(keys), _CHUNK):
        part = keys[start : start + _CHUNK]
        stmt = select(records.c.natural_key, records.c.content_hash).where(
            records.c.natural_key.in_(part)
        )
        found.update({k: h for k, h in conn.execute(stmt).all()})
    return found


def _write_outcomes(conn: Connection, outcomes: Sequence[StoredOutcome]) -> None:
    """Upsert job outcomes by (run, job fingerprint) in bulk."""
    if not outcomes:
        return
    latest = {(o.run_id, o.job_fingerprint): o.model_dump(mode="json") for o in outcomes}
    runs = sorted({run for run, _ in latest})
    have: set[tuple[str, str]] = set()
    for start in range(0, len(runs), _CHUNK):
        stmt = select(job_outcomes.c.run_id, job_outcomes.c.job_fingerprint).where(
            job_outcomes.c.run_id.in_(runs[start : start + _CHUNK])
        )
        have.update((r, j) for r, j in conn.execute(stmt).all())
    fresh = [v for k, v in latest.items() if k not in have]
    known = [{**v, "b_run": k[0], "b_job": k[1]} for k, v in latest.items() if k in have]
    if fresh:
        conn.execute(job_outcomes.insert(), fresh)
    if known:
        upd = (
            update(job_outcomes)
            .where(job_outcomes.c.run_id == bindparam("b_run"))
            .where(job_outcomes.c.job_fingerprint == bindparam("b_job"))
            .values({c: bindparam(c) for c in ("label", "status", "attempt", "reason")})
        )
        conn.execute(upd, known)


def _store_error(exc: DBAPIError, url: str) -> StoreError:
    detail = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
    if "locked" in detail.lower():
        return StoreError(
            f"database {_redact(url)} is locked by another writer: {detail}",
            hint="wait for the other ingest to finish, or use PostgreSQL for concurrent writers",
        )
    if url.startswith("sqlite") and any(d in detail.lower() for d in _DAMAGED):
        # the file is there and opened: blaming the server, URL or password misleads
        return StoreError(
            f"database {_redact(url)} is no SQLite results store, or a damaged one: {detail}",
            hint="point --db at a results store; a damaged one: move it away and run"
            " `inferbench results ingest` again on the run directories",
        )
    if url.startswith("sqlite"):  # a file: no server, URL or password to blame
        return StoreError(
            f"cannot use database {_redact(url)}: {detail}", hint=_sqlite_hint(detail)
        )
    return StoreError(
        f"cannot use database {_redact(url)}: {detail}",
        hint="check that the server is running and the URL, user and password are right",
    )


def _sqlite_hint(detail: str) -> str:
    text = detail.lower()
    if is_read_only_error(text):
        return (
            "the database file, its folder or its disk is read-only: it can be read, not"
            " written; make them writable, or write to another --db"
        )
    if "full" in text:  # "database or disk is full"
        return "free some space on that disk, or write to another --db"
    if "unable to open" in text:
        return "check that the file's folder exists and can be written (SQLite adds a journal)"
    if "i/o" in text:
        return "the disk failed a read or write: check it (dmesg), or use another --db"
    return "check the database file and its permissions, or use another --db"


# What SQLite says of a file that is not a database, or a damaged one.
_DAMAGED = ("file is not a database", "malformed", "disk image", "not a database")


def open_store(
    url: str = DEFAULT_DB_URL, *, busy_timeout_s: float = 5.0, create: bool = True
) -> Store:
    """Connect, verify the schema is not newer than ours, and migrate to the latest.

    `create=False` (reading): a SQLite file that does not exist is a StoreError, not a new
    empty store."""
    engine = _engine(url, busy_timeout_s, create)
    store = Store(engine, url)
    try:
        with store._begin() as conn:
            have = current_version(conn)
        if have > LATEST:
            raise StoreError(
                f"database {_redact(url)} has schema v{have}, newer than this "
                f"inferbench (v{LATEST})",
                hint="upgrade inferbench",
            )
        if have < LATEST:
            store._migrate(have, reading=not create)
    except (SQLAlchemyError, UnicodeError, ValueError) as exc:  # a host name idna refuses, ...
        raise StoreError(f"cannot use database {_redact(url)}: {exc}") from None
    return store
