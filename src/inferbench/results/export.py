"""Flat views of records (one row per point or eval) and export to CSV, JSON or Parquet."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, Literal

import orjson

from inferbench.core.errors import InputError
from inferbench.core.fsio import atomic_write_bytes, atomic_write_text, write_output_chunks
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


def export_records(stored: Iterable[StoredRecord], fmt: str, output: Path) -> int:
    """Write every record to `output`, streamed a page at a time (a million-record store
    never sits whole in memory) and atomically (a temporary file renamed at the end);
    returns the number written."""
    if fmt not in ("csv", "json", "parquet"):
        raise InputError(f"unknown export format {fmt!r}", hint="use csv, json or parquet")
    written = 0

    def counted() -> Iterator[StoredRecord]:
        nonlocal written
        for s in stored:
            written += 1
            yield s

    pages = _pages(counted())
    chunks = {"json": _json_chunks, "csv": _csv_chunks, "parquet": _parquet_chunks}[fmt](pages)
    write_output_chunks(output, chunks)
    return written


_PAGE = 1000  # records turned into output at a time


def _pages(stored: Iterable[StoredRecord]) -> Iterator[list[StoredRecord]]:
    it = iter(stored)
    while page := list(islice(it, _PAGE)):
        yield page


def _json_chunks(pages: Iterable[list[StoredRecord]]) -> Iterator[bytes]:
    docs = ([{"id": s.id, **s.record.model_dump(mode="json")} for s in page] for page in pages)
    return json_array_chunks(docs)


def json_array_chunks(pages: Iterable[list[dict[str, Any]]], level: int = 0) -> Iterator[bytes]:
    """A JSON array of the pages' documents, laid out as `orjson` indents a whole one
    (OPT_INDENT_2) nested `level` deep, a page at a time."""
    pad = b"\n" + b"  " * (level + 1)
    sep = b"[" + pad
    for page in pages:
        docs = [orjson.dumps(doc, option=orjson.OPT_INDENT_2) for doc in page]
        if not docs:
            continue
        # JSON strings hold no raw newline: every one is layout, indented one level more
        yield sep + (b"," + pad).join(d.replace(b"\n", pad) for d in docs)
        sep = b"," + pad
    yield b"[]" if sep.startswith(b"[") else b"\n" + b"  " * level + b"]"


def list_json_chunks(
    points: Iterable[StoredRecord], evals: list[dict[str, Any]]
) -> Iterator[bytes]:
    """`results list --format json`: {"points": [flat rows], "evals": [...]}, streamed."""
    yield b'{\n  "points": '
    yield from json_array_chunks([flat_row(s) for s in page] for page in _pages(points))
    yield b',\n  "evals": ' + orjson.dumps(evals, option=orjson.OPT_INDENT_2).replace(
        b"\n", b"\n  "
    )
    yield b"\n}\n"


def _csv_chunks(pages: Iterable[list[StoredRecord]]) -> Iterator[bytes]:
    fields: list[str] | None = None
    for page in pages:
        rows = [flat_row(s) for s in page]
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=fields or list(rows[0]))
        if fields is None:
            writer.writeheader()
            fields = list(rows[0])
        writer.writerows(rows)
        yield buf.getvalue().encode("utf-8")
    if fields is None:
        yield b"id\r\n"


def _parquet_chunks(pages: Iterable[list[StoredRecord]]) -> Iterator[bytes]:
    """One row group per page, with a declared schema (a page whose column is all empty
    would otherwise infer a type the next page's values do not fit)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, _arrow_types()[kind]()) for name, kind in PARQUET_COLUMNS])
    sink = _DrainedSink()
    with pq.ParquetWriter(pa.PythonFile(sink, mode="w"), schema) as writer:
        for page in pages:
            rows = [{**flat_row(s), "record_json": s.record.model_dump_json()} for s in page]
            writer.write_table(pa.Table.from_pylist(rows, schema=schema))
            yield sink.drain()
    yield sink.drain()


class _DrainedSink:
    """A write-only file for pyarrow whose bytes are taken out as they are written."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._pos = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        self._parts.append(bytes(data))
        self._pos += len(data)
        return len(data)

    def tell(self) -> int:
        return self._pos

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def drain(self) -> bytes:
        out = b"".join(self._parts)
        self._parts.clear()
        return out


# The Parquet columns of an exported point: flat_row's, then the whole record as JSON
# (tests/results/test_store_paging.py checks the two agree).
PARQUET_COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "int"),
    ("run_id", "str"),
    ("tag", "str"),
    ("official", "bool"),
    ("model", "str"),
    ("model_prefix", "str"),
    ("precision", "str"),
    ("framework", "str"),
    ("hardware", "str"),
    ("planned_hardware", "str"),
    ("accelerator", "str"),
    ("image", "str"),
    ("topology", "str"),
    ("gpus", "int"),
    ("disagg", "bool"),
    ("spec_decoding", "str"),
    ("isl", "int"),
    ("osl", "int"),
    ("concurrency", "int"),
    ("completed", "int"),
    ("failed", "int"),
    ("failure_rate", "float"),
    ("complete", "bool"),
    ("valid", "bool"),
    ("invalid_reasons", "str"),
    ("total_tput_per_gpu", "float"),
    ("output_tput_per_gpu", "float"),
    ("output_tput_per_decode_gpu", "float"),
    ("input_tput_per_prefill_gpu", "float"),
    ("interactivity_median", "float"),
    ("interactivity_p1", "float"),
    ("interactivity_source", "str"),
    ("ttft_median_ms", "float"),
    ("tpot_median_ms", "float"),
    ("e2el_median_ms", "float"),
    ("ttft_p99_ms", "float"),
    ("tpot_p99_ms", "float"),
    ("joules_per_output_token", "float"),
    ("provisioned_mw", "float"),
    ("tput_per_provisioned_mw", "float"),
    ("energy_valid", "bool"),
    ("started_at", "str"),
    ("record_json", "str"),
)


def _arrow_types() -> dict[str, Callable[[], Any]]:
    import pyarrow as pa

    return {"int": pa.int64, "str": pa.string, "bool": pa.bool_, "float": pa.float64}


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
