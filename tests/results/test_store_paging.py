"""Reads proportional to the answer: limits and filters in the query, records parsed only
when returned, exports streamed a page at a time (and still atomic)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from cli_helper import run_cli
from results_fixtures import write_run_dir

import inferbench.results.export as export_mod
import inferbench.results.store as store_mod
from inferbench.results.export import PARQUET_COLUMNS, export_records, flat_row
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import RecordFilter, StoredRecord, open_store


def _three_runs(db_url: str, tmp_path: Path) -> None:
    for run in ("run-1", "run-2", "run-3"):
        ingest_paths([write_run_dir(tmp_path / "runs", run)], db_url)


def test_pages_and_limits_return_what_query_does(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _three_runs(db_url, tmp_path)
    monkeypatch.setattr(store_mod, "PAGE_ROWS", 2)  # every read crosses page boundaries
    with open_store(db_url) as store:
        everything = store.query()
        assert [s.id for s in everything] == sorted(s.id for s in everything)
        assert len(everything) == 6
        assert list(store.iter_records(limit=3)) == everything[:3]
        assert list(store.iter_records(limit=0)) == []
        run2 = RecordFilter(run_id="run-2")
        assert [s.record.provenance.run_id for s in store.iter_records(run2)] == ["run-2"] * 2
        assert store.count_matching(run2) == 2 and store.count_matching() == 6
        assert store.count_matching(RecordFilter(run_id="none")) == 0
        assert store.run_ids_matching(most=2) == ["run-1", "run-2"]
        assert store.run_ids_matching(run2, most=2) == ["run-2"]


def test_only_returned_rows_are_parsed(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _three_runs(db_url, tmp_path)
    parsed: list[str] = []
    real = store_mod.record_from_json
    monkeypatch.setattr(store_mod, "record_from_json", lambda p: parsed.append(p) or real(p))
    with open_store(db_url) as store:
        assert len(list(store.iter_records(limit=2))) == 2
        assert len(parsed) == 2
        assert list(store.iter_records(RecordFilter(run_id="none"))) == []
        assert len(parsed) == 2  # a filter matching nothing parses nothing


def test_list_limit_counts_in_the_database(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    _three_runs(db, tmp_path)
    table = run_cli("results", "list", "--db", db, "--limit", "1")
    assert table.code == 0, table
    assert "6 points (the first 1; --limit 0 lists all)" in table.out
    whole = json.loads(run_cli("results", "list", "--db", db, "--format", "json").out)
    assert len(whole["points"]) == 6 and whole["evals"] == []


def _old_json_export(stored: list[StoredRecord]) -> bytes:
    """What the export wrote when it built the whole document in memory."""
    full = [{"id": s.id, **s.record.model_dump(mode="json")} for s in stored]
    return orjson.dumps(full, option=orjson.OPT_INDENT_2)


@pytest.mark.parametrize("page", [1, 4, 1000])
def test_streamed_export_matches_the_whole_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: int
) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    _three_runs(db, tmp_path)
    monkeypatch.setattr(export_mod, "_PAGE", page)
    with open_store(db) as store:
        stored = store.query()
        assert export_records(iter(stored), "json", tmp_path / "e.json") == 6
        assert (tmp_path / "e.json").read_bytes() == _old_json_export(stored)
        export_records(iter(stored), "csv", tmp_path / "e.csv")
        export_records(iter(stored), "parquet", tmp_path / "e.parquet")
    with (tmp_path / "e.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["id"]) for r in rows] == [s.id for s in stored]
    assert list(rows[0]) == list(flat_row(stored[0]))
    table = pq.read_table(tmp_path / "e.parquet")
    assert table.column_names == [name for name, _ in PARQUET_COLUMNS]
    assert table.column("id").to_pylist() == [s.id for s in stored]
    assert list(flat_row(stored[0])) + ["record_json"] == table.column_names


def test_empty_exports_keep_their_shape(tmp_path: Path) -> None:
    export_records([], "json", tmp_path / "e.json")
    assert (tmp_path / "e.json").read_bytes() == b"[]"
    export_records([], "csv", tmp_path / "e.csv")
    assert (tmp_path / "e.csv").read_text() == "id\n"
    export_records([], "parquet", tmp_path / "e.parquet")
    assert pq.read_table(tmp_path / "e.parquet").num_rows == 0


def test_an_export_that_fails_midway_leaves_the_old_file(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    _three_runs(db, tmp_path)
    out = tmp_path / "e.json"
    out.write_text("old")
    with open_store(db) as store:
        stored = store.query()

    def broken() -> object:
        yield stored[0]
        raise RuntimeError("the database went away")

    with pytest.raises(RuntimeError):
        export_records(broken(), "json", out)  # type: ignore[arg-type]
    assert out.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".e.json")] == []
