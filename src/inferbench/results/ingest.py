"""`ingest_paths`: read points from run directories and result files into the store.

Every point is validated before anything is written; the valid ones are then written
in one transaction (idempotent by natural key), and the invalid ones are reported
with the reason they were skipped.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inferbench.errors import InputError
from inferbench.results.sources import JobOutcome, Point, discover
from inferbench.results.store import DEFAULT_DB_URL, WriteCounts, open_store


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
    outcomes: tuple[JobOutcome, ...] = field(default_factory=tuple)
    run_ids: tuple[str, ...] = ()

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
) -> IngestReport:
    """Ingest every point found under `paths`; `identity` fills/overrides job fields.

    Invalid points are skipped and reported; with `strict`, one invalid point means
    nothing is written at all.
    """
    # Reading many points builds many long-lived objects; the cyclic GC would rescan
    # them over and over (about a third of the time on 100k points). Nothing here makes
    # reference cycles worth collecting mid-ingest, so pause it and restore it after.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _ingest(paths, db_url, identity, dry_run=dry_run, strict=strict)
    finally:
        if gc_was_enabled:
            gc.enable()


def _ingest(
    paths: Sequence[Path | str],
    db_url: str,
    identity: Mapping[str, Any] | None,
    *,
    dry_run: bool,
    strict: bool,
) -> IngestReport:
    points: list[Point] = []
    outcomes: list[JobOutcome] = []
    for item in discover([Path(p) for p in paths], identity):
        (outcomes if isinstance(item, JobOutcome) else points).append(item)  # type: ignore[arg-type]
    good = [p.record for p in points if p.record is not None]
    skipped = tuple(Skipped(p.path, p.error.render()) for p in points if p.error is not None)
    if not good and not outcomes and not skipped:
        raise InputError(
            "no benchmark results found under " + ", ".join(map(str, paths)),
            hint="point at a run directory, a result JSON, or a folder of them",
        )
    counts = WriteCounts(0, 0, 0)
    if not dry_run and (good or outcomes) and not (strict and skipped):
        with open_store(db_url) as store:
            counts = store.write(good, outcomes)
    return IngestReport(
        db_url=db_url,
        found=len(points),
        inserted=counts.inserted,
        updated=counts.updated,
        unchanged=counts.unchanged,
        skipped=skipped,
        outcomes=tuple(outcomes),
        run_ids=tuple(sorted({r.provenance.run_id for r in good})),
    )
