"""Flat views of records (one row per point or eval) and export to CSV, JSON or Parquet."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import orjson

from inferbench.errors import InputError
from inferbench.fsio import atomic_write_bytes, atomic_write_text
from inferbench.results.derived import provisioned_mw
from inferbench.results.evalcompare import eval_row
from inferbench.results.evalrecord import EvalRecord
from inferbench.results.store import StoredRecord
from inferbench.results.validity import validity_of

ExportFormat = Literal["csv", "json", "parquet"]


def flat_row(stored: StoredRecord) -> dict[str, Any]:
    """The columns people sort and filter by; the nested record stays in JSON exports."""
    r = stored.record
    i, p, m, d = r.identity, r.provenance, r.metrics, r.derived
    inter = d.interactivity
    energy = d.energy
    validity = validity_of(r)
    mw = provisioned_mw(i)
    return {
        "id": stored.id,
        "run_id": p.run_id,
        "tag": p.tag,
        "official": p.official,
        "model": i.model,
        "model_prefix": i.model_prefix,
        "precision": i.precision,
        "framework": i.framework,
        "hardware": i.hardware(),
        # measured on other hardware than the entry names: the entry's, and what it ran on
        "planned_hardware": p.planned_hardware,
        "accelerator": p.accelerator.describe() if p.accelerator else None,
        "image": i.image,
        "topology": i.topology(),
        "gpus": i.total_gpus,
        "disagg": i.disagg,
        "spec_decoding": i.spec_decoding,
        "isl": i.isl,
        "osl": i.osl,
        "concurrency": i.concurrency,
        "completed": m.completed,
        "failed": m.failed,
        "failure_rate": d.failure_rate,
        "complete": m.complete,
        "valid": validity.valid,
        "invalid_reasons": "; ".join(validity.reasons) or None,
        "total_tput_per_gpu": d.total_tput_per_gpu,
        "output_tput_per_gpu": d.output_tput_per_gpu,
        "output_tput_per_decode_gpu": d.output_tput_per_decode_gpu,
        "input_tput_per_prefill_gpu": d.input_tput_per_prefill_gpu,
        "interactivity_median": inter.median if inter else None,
        "interactivity_p1": inter.p1 if inter else None,
        "interactivity_source": inter.source if inter else None,
        "ttft_median_ms": m.ttft_ms.median,
        "tpot_median_ms": m.tpot_ms.median,
        "e2el_median_ms": m.e2el_ms.median,
        "ttft_p99_ms": m.ttft_ms.p99,
        "tpot_p99_ms": m.tpot_ms.p99,
        "joules_per_output_token": energy.joules_per_output_token if energy else None,
        "provisioned_mw": mw,
        "tput_per_provisioned_mw": m.total_token_throughput / mw if mw else None,
        "energy_valid": energy.valid if energy else None,
        "started_at": p.started_at.isoformat() if p.started_at else None,
    }


def export_records(stored: Sequence[StoredRecord], fmt: str, output: Path) -> int:
    """Write every record to `output` atomically; returns the number written."""
    full = (
        [{"id": s.id, **s.record.model_dump(mode="json")} for s in stored] if fmt == "json" else []
    )
    rows = [flat_row(s) for s in stored] if fmt != "json" else []
    nested = [s.record.model_dump_json() for s in stored] if fmt == "parquet" else []
    _write(fmt, output, full, rows, nested)
    return len(stored)


def export_evals(evals: Sequence[EvalRecord], fmt: str, output: Path) -> int:
    """Write every stored accuracy eval to `output` atomically; returns the number written.

    Flat rows carry the primary score (task, metric, score, stderr, samples, status); JSON
    and the Parquet `eval_json` column keep every metric and filter lm-eval reported.
    """
    full = [e.model_dump(mode="json") for e in evals] if fmt == "json" else []
    rows = [eval_row(e) for e in evals] if fmt != "json" else []
    nested = [e.model_dump_json() for e in evals] if fmt == "parquet" else []
    _write(fmt, output, full, rows, nested, nested_column="eval_json")
    return len(evals)


def _write(
    fmt: str,
    output: Path,
    full: list[dict[str, Any]],
    rows: Sequence[dict[str, Any]],
    nested: list[str],
    *,
    nested_column: str = "record_json",
) -> None:
    if fmt == "json":
        atomic_write_bytes(output, orjson.dumps(full, option=orjson.OPT_INDENT_2))
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["id"])
        writer.writeheader()
        writer.writerows(rows)
        atomic_write_text(output, buf.getvalue())
    elif fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(
            [{**row, nested_column: doc} for row, doc in zip(rows, nested, strict=True)]
        )
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        atomic_write_bytes(output, sink.getvalue().to_pybytes())
    else:
        raise InputError(f"unknown export format {fmt!r}", hint="use csv, json or parquet")
