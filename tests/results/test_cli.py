from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from cli_helper import run_cli
from results_fixtures import sa_bench, sa_bench_requests, write_json, write_run_dir

from harness.synthetic import SyntheticConfig
from harness.synthetic import write_run_dir as synthetic_run


def test_ingest_list_show_export(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    run = write_run_dir(tmp_path / "runs")
    res = run_cli("results", "ingest", str(run), "--db", db)
    assert res.code == 0, res
    assert "2 points found: 2 new" in res.out and "runs: run-1" in res.out
    again = run_cli("results", "ingest", str(run), "--db", db)
    assert "0 new, 0 updated, 2 unchanged" in again.out
    listed = run_cli("results", "list", "--db", db, "--format", "json", "--run", "run-1")
    listing = json.loads(listed.out)
    rows = listing["points"]
    assert len(rows) == 2 and {r["concurrency"] for r in rows} == {64, 128}
    assert listing["evals"] == []
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


def test_list_fits_narrow_terminals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert run_cli("results", "ingest", str(write_run_dir(tmp_path / "runs")), "--db", db).code == 0
    for width in (80, 50):
        monkeypatch.setenv("COLUMNS", str(width))
        listed = run_cli("results", "list", "--db", db)
        assert listed.code == 0
        lines = listed.out.splitlines()
        assert all(len(line) <= width for line in lines), listed.out
        rows = [line.split() for line in lines[3:]]  # under the title, header and rule
        assert [r[:3] for r in rows] == [["1", "dsr1", "gb200"], ["2", "dsr1", "gb200"]]
        assert "…" not in listed.out


_IDENT = (
    "model-prefix=dsr1,precision=fp8,framework=vllm,hardware=h200,isl=1024,osl=1024,conc=8,tp=8"
)


def test_identity_argument_and_yaml(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    path = write_json(tmp_path / "plain" / "bench.json", sa_bench(8))
    res = run_cli("results", "ingest", str(path), "--db", db, "--identity", _IDENT)
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
    res = run_cli("results", "ingest", str(anonymous), "--db", db, "--identity", _IDENT)
    assert res.code == 0, res
    res = run_cli("results", "show", "99", "--db", db)
    assert res.code == 2 and "no stored result with id 99" in res.err
    for beyond in ("0", str(2**63)):  # no row has it; the driver could not even bind the latter
        res = run_cli("results", "show", beyond, "--db", db)
        assert res.code == 2 and "Usage:" in res.err
    res = run_cli("results", "export", "--format", "xml", "--output", "x", "--db", db)
    assert res.code == 2


def _slow_head(tmp_path: Path) -> str:
    """A store with runs `base` and `head`: conc64 with 300 requests each side, head 50%
    slower; conc128 summaries only (no samples). Returns its URL."""
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    base = write_run_dir(tmp_path / "runs", "base", failed_job=False, osl=64)
    head = write_run_dir(tmp_path / "runs", "head", failed_job=False, osl=64)
    results = "fp-disagg-1/results/conc64.json"
    write_json(base / results, sa_bench_requests(300, seed=1, conc=64))
    write_json(head / results, sa_bench_requests(300, seed=2, slow=1.5, conc=64))
    for run in (base, head):  # the summary-only point, at the job's 64 output tokens a request
        write_json(run / "fp-disagg-1/results/conc128.json", sa_bench(128, total_output_tokens=256))
    assert run_cli("results", "ingest", str(base), str(head), "--db", db).code == 0
    return db


def test_compare_markdown_and_fail_on_regression(tmp_path: Path) -> None:
    db = _slow_head(tmp_path)
    md = run_cli("results", "compare", "base", "head", "--db", db, "--format", "markdown")
    assert md.code == 0 and "| 🔴 |" in md.out and "95% bootstrap interval" in md.out
    gate = run_cli("results", "compare", "base", "head", "--db", db, "--fail-on-regression")
    assert gate.code == 1, gate
    assert "1 regressions, 0 improvements, 0 within noise, 1 not judged" in gate.out
    assert re.search(r"TTFT p\d0 ms \+\d", gate.out)  # the compact row says what regressed
    verbose = run_cli("results", "compare", "base", "head", "--db", db, "--verbose")
    assert "TTFT p50 ms" in verbose.out and "[+" in verbose.out  # every interval, shown
    # too few samples to judge is not a regression (and says so)
    strict = run_cli(
        "results",
        "compare",
        "base",
        "head",
        "--db",
        db,
        "--fail-on-regression",
        "--min-samples",
        "1000",
    )
    # the summary is prose, wrapped between words at the terminal's width
    assert strict.code == 0 and "2 not judged (fewer than 1000 samples)" in " ".join(
        strict.out.split()
    )
    bad = run_cli("results", "compare", "base", "head", "--db", db, "--confidence", "1.5")
    assert bad.code == 2 and "--confidence" in bad.err
    # the report's compare view carries the same intervals
    res = run_cli(
        "report",
        "--db",
        db,
        "--output-dir",
        str(tmp_path / "rep"),
        "--base",
        "base",
        "--head",
        "head",
    )
    assert res.code == 0, res
    html = (tmp_path / "rep" / "index.html").read_text()
    data = json.loads(html.split('id="ib-data">', 1)[1].split("</script>", 1)[0])
    row = next(r for r in data["compare"]["rows"] if "conc 64" in r["label"])
    ttft = row["cells"][[m["name"] for m in data["compare"]["metrics"]].index("ttft_median")]
    assert ttft[3] == "regression" and 0 < ttft[4] < ttft[2] < ttft[5]


def test_compare_json_has_every_change_with_its_interval(tmp_path: Path) -> None:
    db = _slow_head(tmp_path)
    args = ("results", "compare", "base", "head", "--db", db, "--format", "json")
    res = run_cli(*args, "--fail-on-regression")
    assert res.code == 1, res  # the gate still gates; stdout is the document alone
    doc = json.loads(res.out)
    assert doc["schema"] == "inferbench.compare/1" and doc["threshold"] == 0.05
    assert doc["counts"] == {"regression": 1, "improvement": 0, "noise": 0, "unjudged": 1}
    (judged,) = [p for p in doc["points"] if p["verdict"] == "regression"]
    assert "conc 64" in judged["point"] and judged["repeats"] == [1, 1]
    ttft = next(d for d in judged["deltas"] if d["metric"] == "ttft_median")
    low, high = ttft["interval"]
    assert ttft["verdict"] == "regression" and 0.05 < low < ttft["change"] < high
    assert ttft["samples"] == [300, 300] and ttft["higher_is_better"] is False
    assert ttft["margin"] == pytest.approx(0.05 - low) and judged["concurrency"] == 64
    tput = next(d for d in judged["deltas"] if d["metric"] == "total_tput_per_gpu")
    assert tput["margin"] == pytest.approx(0.05 + tput["interval"][1])  # harm is a drop
    # the markdown table reads the same change
    md = run_cli("results", "compare", "base", "head", "--db", db, "--format", "markdown")
    assert f"{ttft['change']:+.1%} [{low:+.1%}, {high:+.1%}]" in md.out
    # a point without samples has changes but no intervals
    (summary,) = [p for p in doc["points"] if p["verdict"] == "unjudged"]
    assert all(d["interval"] is None and d["margin"] is None for d in summary["deltas"])
    assert doc["evals"] is None
    bad = run_cli("results", "compare", "base", "head", "--db", db, "--format", "yaml")
    assert bad.code == 2 and "table, markdown or json" in bad.err


def test_report_command(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    run_cli("results", "ingest", str(write_run_dir(tmp_path / "runs")), "--db", db)
    res = run_cli("report", "--db", db, "--output-dir", str(tmp_path / "report"))
    assert res.code == 0, res
    assert (tmp_path / "report" / "index.html").is_file()
    assert list((tmp_path / "report").glob("pareto_*.png"))


def test_reading_commands_refuse_a_missing_database_and_create_none(tmp_path: Path) -> None:
    """A typo in --db must not read as an empty store (nor leave a new file behind)."""
    missing = tmp_path / "no" / "such" / "r.sqlite"
    db = f"sqlite:///{missing}"
    for args in (
        ("results", "list"),
        ("results", "show", "1"),
        ("results", "export", "--format", "csv", "--output", str(tmp_path / "x.csv")),
        ("results", "compare", "a", "b"),
        ("report", "--output-dir", str(tmp_path / "rep")),
    ):
        res = run_cli(*args, "--db", db)
        assert res.code == 2 and f"no results database at {missing}" in res.err, (args, res)
        assert "fix:" in res.err
    assert not (tmp_path / "no").exists()


def test_a_nan_threshold_is_refused_before_the_store_is_read(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    for args in (("results", "compare", "a", "b"), ("report", "--output-dir", str(tmp_path / "o"))):
        for bad in ("nan", "inf", "-0.1"):
            res = run_cli(*args, "--db", db, "--threshold", bad)
            assert res.code == 2 and "--threshold must be a number >= 0" in res.err, res


def test_a_served_model_name_with_markup_is_stored_and_printed_literally(tmp_path: Path) -> None:
    """The served model name is free text: Rich markup in it is valid, and shown as written."""
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    result = {**sa_bench(8), "model_id": "[/][bold]x"}
    path = write_json(tmp_path / "dsr1_1k1k_fp8_vllm_tp8_conc8_h200-a_0.json", result)
    res = run_cli("results", "ingest", str(path), "--db", db)
    assert res.code == 0, res
    shown = run_cli("results", "show", "1", "--db", db)
    assert json.loads(shown.out)["identity"]["model"] == "[/][bold]x"
    assert run_cli("results", "list", "--db", db).code == 0


SERIES = [
    SyntheticConfig(),
    SyntheticConfig(framework="vllm", tp=4),
    SyntheticConfig(model_prefix="llama70b", isl=8192, tp=4),
]
FEW_DRAWS = ("--resamples", "200")  # the layout is under test, not the intervals


def test_compare_is_one_line_per_point_at_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two nightly runs of 15 points (vllm 20% slower in the second): a line per point,
    nothing past 80 columns, every metric with its interval under --verbose."""
    runs = tmp_path / "runs"
    first = synthetic_run(runs, "nightly-1", SERIES, seed=1, requests=True)
    second = synthetic_run(runs, "nightly-2", SERIES, seed=2, speedups={"vllm": 0.8}, requests=True)
    monkeypatch.chdir(tmp_path)
    path = "r.sqlite"  # a bare path: a SQLite store
    assert run_cli("results", "ingest", str(first), str(second), "--db", path).code == 0
    monkeypatch.setenv("COLUMNS", "80")
    res = run_cli("results", "compare", "nightly-1", "latest", "--db", path, *FEW_DRAWS)
    assert res.code == 0, res
    lines = res.out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert lines[0].strip().startswith("nightly-2 (latest) vs nightly-1")
    points = [line for line in lines if " conc " in line and not line.startswith("at ")]
    assert len(points) == 15  # one line each, the whole label on it
    assert all(re.match(r"^(dsr1|llama70b) \d+/1024 \S+ \S+ \S+ TP\d conc \d+ ", p) for p in points)
    start = next(k for k, line in enumerate(lines) if line.startswith("regressions (5)"))
    slow = lines[start + 1 : start + 6]
    assert all("h200 vllm fp8" in line and "TPOT p50 ms +" in line for line in slow)
    assert "not shown at 80 columns: --verbose" in res.err
    assert len(lines) < 60  # 684 lines before, a block per point and metric
    verbose = run_cli(
        "results", "compare", "latest~1", "latest", "--db", path, "--verbose", *FEW_DRAWS
    )
    assert verbose.code == 0, verbose
    assert (
        verbose.out.splitlines()[0].strip().startswith("nightly-2 (latest) vs nightly-1 (latest~1)")
    )
    assert verbose.out.count("[") > 15 * 6 and len(verbose.out.splitlines()) > 120
    # the same comparison, whatever the spelling of its runs and its store
    full = run_cli(
        "results", "compare", "nightly-1", "nightly-2", "--db", f"sqlite:///{path}", *FEW_DRAWS
    )
    assert [line.split()[-1] for line in full.out.splitlines() if " conc " in line] == [
        line.split()[-1] for line in points
    ]


def test_latest_names_the_newest_run_and_says_when_there_is_none(tmp_path: Path) -> None:
    db = _slow_head(tmp_path)  # base ingested before head
    res = run_cli("results", "compare", "base", "latest", "--db", db, "--format", "markdown")
    assert res.code == 0 and "`head (latest)` vs `base`" in res.out
    too_far = run_cli("results", "compare", "latest~2", "latest", "--db", db)
    assert too_far.code == 2 and "'latest~2': the store holds 2 run(s)" in too_far.err
