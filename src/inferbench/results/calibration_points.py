"""Stored results as the simulator's calibration points: `sim calibrate --db` reads the
store here and hands the points to `inferbench.sim.calibrate` as values."""

from __future__ import annotations

from typing import Any

from inferbench.core.errors import InputError
from inferbench.results.record import Record
from inferbench.results.store import RecordFilter, open_store
from inferbench.sim.calibrate import Measured, MeasuredPoint


def point_from_record(rec: Record, name: str) -> MeasuredPoint:
    """One stored point as a sweep job (InferenceX names) with the engine flags it ran with
    (`sim-flags`) and what was measured."""
    ident = rec.identity
    # measured on other hardware than the entry's: the runner names the entry's, not that
    runner = None if rec.provenance.planned_hardware else ident.runner
    job: dict[str, Any] = {
        "model": ident.model,
        "precision": ident.precision,
        "runner": runner or ident.hardware_decode,
        "framework": ident.framework,
        "conc": ident.concurrency,
        "isl": ident.isl,
        "osl": ident.osl,
        "spec-decoding": ident.spec_decoding,
    }
    pools = {p.role: p for p in ident.pools}
    if ident.disagg and "prefill" in pools and "decode" in pools:
        for role in ("prefill", "decode"):
            p = pools[role]
            job[role] = {"num-worker": p.workers, "tp": p.tp, "ep": p.ep,
                         "dp-attn": p.dp_attn, "pp": p.pp}  # fmt: skip
    else:
        p = ident.pools[0]
        job.update({"tp": p.tp, "ep": p.ep, "dp-attn": p.dp_attn, "pp": p.pp})
    flags = dict(rec.provenance.engine_flags or {})
    for key in ("kv-cache-dtype", "max-model-len"):  # job fields, not sim-flags
        if key in flags:
            job[key] = flags.pop(key)
    if flags:
        job["sim-flags"] = flags
    inter = rec.derived.interactivity
    return MeasuredPoint(
        name=name,
        job=job,
        measured=Measured(
            tok_s_gpu=rec.derived.total_tput_per_gpu,
            interactivity=inter.median if inter and inter.median else None,
            ttft_ms=rec.metrics.ttft_ms.median or None,
        ),
    )


def points_from_store(url: str, **filters: Any) -> list[MeasuredPoint]:
    """Measured points from the results store (latest record per point)."""
    with open_store(url) as store:
        stored = store.latest_per_point(RecordFilter(**filters))
    out = [
        point_from_record(
            item.record,
            f"{item.record.series_label()} conc {item.record.identity.concurrency} #{item.id}",
        )
        for item in stored
    ]
    if not out:
        raise InputError("the results store holds no points that match", hint="widen the filters")
    return out
