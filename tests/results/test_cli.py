from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
from cli_helper import run_cli
from results_fixtures import sa_bench, write_json, write_run_dir


def test_ingest_list_show_export(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    run = write_run_dir(tmp_path / "runs")
    res = run_cli("results", "ingest", str(run), "--db", db)
    assert res.code == 0, res
    assert "2 points found: 2 new" in res.out and "runs: run-1" in res.out
    again = run_cli("results", "ingest", str(run), "--db", db)
    assert "0 new, 0 updated, 2 unchanged" in again.out
    listed = run_cli("results", "list", "--db", db, "--format", "json", "--run", "run-1")
    rows = json.loads(listed.out)
    assert len(rows) == 2 and {r["concurrency"] for r in rows} == {64, 128}
    shown = run_cli("results", "show", str(rows[0]["id"]), "--db", db)
    assert json.loads(shown.out)["identity"]["model_prefix"] == "dsr1"
    table = run_cli("results", "list", "--db", db)
    assert table.code == 0 and "2 points of run run-1" in table.out
    assert "dsr1" in table.out and "official" not in table.out  # no row is official
    for fmt in ("csv", "json", "parquet"):
        out = tmp_path / f"export.{fmt}"
        res = run_cli("results", "export", "--format", fmt, "--output", str(out), "--db", db)
        assert res.code == 0 and "wrote 2 points" in res.out
    with (tmp_path / "export.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 2
    assert len(json.loads((tmp_path / "export.json").read_text())) == 2
    assert pq.read_table(tmp_path / "export.parquet").num_rows == 2


def test_identity_argument_and_yaml(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    path = write_json(tmp_path / "plain" / "bench.json", sa_bench(8))
    ident = (
        "model-prefix=dsr1,precision=fp8,framework=vllm,hardware=h200,isl=1024,osl=1024,conc=8,tp=8"
    )
    res = run_cli("results", "ingest", str(path), "--db", db, "--identity", ident)
    assert res.code == 0, res
    yaml = tmp_path / "ident.yaml"
    yaml.write_text(
        "model-prefix: dsr1\nprecision: fp4\nframework: trt\nhardware: b200\n"
        "isl: 1024\nosl: 1024\nconc: 8\ntp: 4\nrun-id: y1\n"
    )
    res = run_cli("results", "ingest", str(path), "--db", db, "--identity", str(yaml))
    assert res.code == 0 and "runs: y1" in res.out


def test_bad_inputs_exit_2_with_one_line(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    bad = tmp_path / "bad" / "truncated.json"
    bad.parent.mkdir()
    bad.write_text('{"duration": 1')
    res = run_cli("results", "ingest", str(bad), "--db", db)
    assert res.code == 2 and "not valid JSON" in res.err
    anonymous = write_json(tmp_path / "anon" / "bench.json", sa_bench())
    res = run_cli("results", "ingest", str(anonymous), "--db", db)
    assert res.code == 2 and "no identity for" in res.err and "--identity" in res.err
    res = run_cli("results", "ingest", str(anonymous), "--db", db, "--identity", "oops")
    assert res.code == 2 and "key=value" in res.err
    res = run_cli("results", "list", "--db", "postgresql://x:pw@127.0.0.1:1/db")
    assert res.code == 2 and "cannot use database" in res.err and "pw" not in res.err
    res = run_cli("results", "show", "99", "--db", db)
    assert res.code == 2 and "no stored result with id 99" in res.err
    res = run_cli("results", "export", "--format", "xml", "--output", "x", "--db", db)
    assert res.code == 2


def test_compare_markdown_and_fail_on_regression(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    base = write_run_dir(tmp_path / "runs", "base", failed_job=False)
    head = write_run_dir(tmp_path / "runs", "head", failed_job=False)
    write_json(
        head / "fp-disagg-1" / "results" / "conc64.json", sa_bench(64, total_token_throughput=300.0)
    )
    assert run_cli("results", "ingest", str(base), str(head), "--db", db).code == 0
    md = run_cli("results", "compare", "base", "head", "--db", db, "--format", "markdown")
    assert md.code == 0 and "| 🔴 |" in md.out and "-50.0%" in md.out
    gate = run_cli("results", "compare", "base", "head", "--db", db, "--fail-on-regression")
    assert gate.code == 1 and "1 regressions, 0 improvements, 1 within noise" in gate.out


def test_report_command(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    run_cli("results", "ingest", str(write_run_dir(tmp_path / "runs")), "--db", db)
    res = run_cli("report", "--db", db, "--output", str(tmp_path / "report"))
    assert res.code == 0, res
    assert (tmp_path / "report" / "index.html").is_file()
    assert list((tmp_path / "report").glob("pareto_*.png"))
