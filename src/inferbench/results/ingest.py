"""`ingest_paths`: read points from run directories and result files into the store.

Every point is validated before anything is written; the valid ones are then written
in one transaction (idempotent by natural key), and the invalid ones are reported
with the reason they were skipped.
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import repeat
from pathlib import Path
from typing import Any

from inferbench.core.cpus import usable_cores
from inferbench.core.errors import InputError, Location
from inferbench.core.lifetime import pool_worker_setup
from inferbench.core.outcome import StoredOutcome
from inferbench.results.evalrecord import EvalRecord
from inferbench.results.predicted import ADAPTIVE_JSON, PredictedPoint, read_predicted
from inferbench.results.sources import (
    UNREADABLE,
    Unit,
    discover_units,
    unit_points,
    unreadable,
)
from inferbench.results.store import (
    DEFAULT_DB_URL,
    StoreRow,
    WriteCounts,
    open_store,
    store_row,
)


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str


@dataclass(frozen=True)
class IngestReport:
    """What an ingest did: counts, skipped files with reasons, job outcomes seen."""

    db_url: str
    found: int
    inserted: int
    updated: int
    unchanged: int
    skipped: tuple[Skipped, ...] = ()
    outcomes: tuple[StoredOutcome, ...] = field(default_factory=tuple)
    run_ids: tuple[str, ...] = ()
    evals: int = 0  # accuracy evals found (eval_<task>.json)
    new_evals: int = 0
    predicted: int = 0  # points an adaptive run left predicted (adaptive.json)

    @property
    def ok(self) -> bool:
        return not self.skipped


def ingest_paths(
    paths: Sequence[Path | str],
    db_url: str = DEFAULT_DB_URL,
    *,
    identity: Mapping[str, Any] | None = None,
    dry_run: bool = False,
    strict: bool = False,
    workers: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> IngestReport:
    """Ingest every point found under `paths`; `identity` fills/overrides job fields.

    Invalid points are skipped and reported; with `strict`, one invalid point means
    nothing is written at all. `workers`: reading processes (None: one per usable core
    for large ingests, else one); the result is the same for any count. `on_progress`
    is called in this thread as job directories and files are read.
    """
    # Reading many points builds many long-lived objects; the cyclic GC would rescan
    # them over and over (about a third of the time on 100k points). Nothing here makes
    # reference cycles worth collecting mid-ingest, so pause it and restore it after.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _ingest(
            paths,
            db_url,
            identity,
            dry_run=dry_run,
            strict=strict,
            workers=workers,
            on_progress=on_progress,
        )
    finally:
        if gc_was_enabled:
            gc.enable()


# Reading and validating files is most of an ingest; above this many job directories
# or files they are read by worker processes, which hand back ready-made rows (cheap to
# pickle: a Record costs more to pickle and unpickle than to build).
PARALLEL_MIN_UNITS = 64
_UNITS_PER_TASK = 32

ProgressCallback = Callable[[int, int], None]  # job directories and files read, total


@dataclass(frozen=True)
class _Read:
    """What reading some units found: rows to write, skipped files, outcomes, runs."""

    rows: list[StoreRow]
    evals: list[EvalRecord]
    skipped: list[Skipped]
    outcomes: list[StoredOutcome]
    run_ids: set[str]
    found: int


def _read_units(units: Sequence[Unit], identity: Mapping[str, Any] | None, now: str) -> _Read:
    gc.disable()  # a no-op in the parent (already off); a worker's own pause
    rows: list[StoreRow] = []
    evals: list[EvalRecord] = []
    skipped: list[Skipped] = []
    outcomes: list[StoredOutcome] = []
    run_ids: set[str] = set()
    found = 0
    for unit in units:
        for item in unit_points(unit, identity):
            if isinstance(item, StoredOutcome):
                outcomes.append(item)
                continue
            found += 1
            if isinstance(item.record, EvalRecord):
                evals.append(item.record)
                run_ids.add(item.record.provenance.run_id)
            elif item.record is not None:
                try:
                    rows.append(store_row(item.record, now, item.samples))
                except InputError as exc:
                    loc = exc.location
                    exc.location = Location(item.path, loc.line, loc.column, loc.key)
                    skipped.append(Skipped(item.path, exc.render()))
                    continue
                except UNREADABLE as exc:  # e.g. a number too large to key the point by
                    skipped.append(Skipped(item.path, unreadable(item.path, exc).render()))
                    continue
                run_ids.add(item.record.provenance.run_id)
            elif item.error is not None:
                skipped.append(Skipped(item.path, item.error.render()))
    return _Read(rows, evals, skipped, outcomes, run_ids, found)


def _workers(units: int) -> int:
    if units < PARALLEL_MIN_UNITS:
        return 1
    return max(1, min(usable_cores(), 8, units // _UNITS_PER_TASK))


def _read_all(
    units: list[Unit],
    identity: Mapping[str, Any] | None,
    now: str,
    workers: int,
    on_progress: ProgressCallback | None,
) -> list[_Read]:
    if threading.active_count() > 1:
        # Forking a process that runs other threads can copy a lock one of them holds,
        # and a fork server or spawn would re-run an unguarded __main__: read here.
        workers = 1
    size = max(1, min(_UNITS_PER_TASK, math.ceil(len(units) / (4 * workers))))
    tasks = [units[k : k + size] for k in range(0, len(units), size)]
    parts: list[_Read] = []
    with ExitStack() as stack:
        if workers > 1:
            pool = ProcessPoolExecutor(
                workers,
                mp_context=multiprocessing.get_context("fork"),
                initializer=pool_worker_setup,
                initargs=(os.getpid(),),
            )
            stack.enter_context(pool)
            stack.push(_kill_workers_on_error(pool))
            reads = pool.map(_read_units, tasks, repeat(identity), repeat(now))
        else:
            reads = (_read_units(task, identity, now) for task in tasks)
        done = 0
        for task, read in zip(tasks, reads, strict=True):  # in order: same result as one
            parts.append(read)
            done += len(task)
            if on_progress is not None:
                on_progress(done, len(units))
    return parts


def _kill_workers_on_error(pool: ProcessPoolExecutor) -> Callable[..., bool]:
    """An exit callback: on an error or an interrupt (SIGTERM reaches this process alone),
    kill the workers, so that leaving the pool does not wait for every task to be read."""

    def on_exit(kind: type[BaseException] | None, *_: object) -> bool:
        if kind is not None:
            pool.shutdown(wait=False, cancel_futures=True)
            # the executor keeps its processes private; it kills them the same way itself
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.kill()
        return False

    return on_exit


def _ingest(
    paths: Sequence[Path | str],
    db_url: str,
    identity: Mapping[str, Any] | None,
    *,
    dry_run: bool,
    strict: bool,
    workers: int | None,
    on_progress: ProgressCallback | None,
) -> IngestReport:
    units = discover_units([Path(p) for p in paths])
    now = datetime.now(UTC).isoformat()
    parts = _read_all(units, identity, now, workers or _workers(len(units)), on_progress)
    rows = [row for part in parts for row in part.rows]
    evals = [e for part in parts for e in part.evals]
    predicted = [p for path in paths for p in _predicted_under(Path(path))]
    skipped = tuple(s for part in parts for s in part.skipped)
    outcomes = [o for part in parts for o in part.outcomes]
    if not rows and not evals and not outcomes and not skipped and not predicted:
        raise InputError(
            "no benchmark results found under " + ", ".join(map(str, paths)),
            hint="point at a run directory, a result JSON, or a folder of them",
        )
    counts = WriteCounts(0, 0, 0)
    new_evals = 0
    if not dry_run and (rows or evals or outcomes or predicted) and not (strict and skipped):
        with open_store(db_url) as store:
            counts = store.write_rows(rows, outcomes)
            new_evals = store.write_evals(evals)
            store.write_predicted(predicted)
    return IngestReport(
        db_url=db_url,
        found=sum(part.found for part in parts),
        inserted=counts.inserted,
        updated=counts.updated,
        unchanged=counts.unchanged,
        skipped=skipped,
        outcomes=tuple(outcomes),
        run_ids=tuple(sorted(set().union(*(part.run_ids for part in parts)))),
        evals=len(evals),
        new_evals=new_evals,
        predicted=len(predicted),
    )


def _predicted_under(path: Path) -> list[PredictedPoint]:
    """The predicted points of every adaptive run at or under `path`."""
    if not path.is_dir():
        return []
    runs = [path] if (path / ADAPTIVE_JSON).is_file() else [
        p.parent for p in sorted(path.glob(f"*/{ADAPTIVE_JSON}"))
    ]  # fmt: skip
    return [p for run in runs for p in read_predicted(run)]
