"""Accuracy evals in the store: ingested from run directories, listed, compared."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from importlib.util import find_spec
from pathlib import Path

import pytest
from results_fixtures import write_run_dir

from inferbench.cli.main import main
from inferbench.evals.result import (
    EvalResult,
    EvalScore,
    EvalStatus,
    eval_file_name,
    write_eval_result,
)
from inferbench.evals.spec import EvalSpec
from inferbench.results.evalcompare import compare_evals
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import RecordFilter, open_store
from services import needs_service


def _result(score: float, n: int = 1319, *, simulated: bool = False) -> EvalResult:
    stderr = (score * (1 - score) / (n - 1)) ** 0.5
    now = datetime(2026, 1, 5, 10, 40, tzinfo=UTC).isoformat()
    return EvalResult(
        task="gsm8k",
        lm_eval_task="gsm8k",
        status=EvalStatus.OK,
        simulated=simulated,
        scores=(
            EvalScore(metric="exact_match", filter="flexible-extract", value=score, samples=n),
            EvalScore(
                metric="exact_match", filter="strict-match", value=score, stderr=stderr, samples=n
            ),
        ),
        primary_metric="exact_match",
        primary_filter="strict-match",
        model="deepseek-ai/DeepSeek-R1-0528",
        base_url="http://gb200-n01:8000",
        spec=EvalSpec(concurrency=128, context_length=9472),
        started_at=now,
        finished_at=now,
    )


def _run_with_eval(root: Path, run_id: str, score: float, **kw: bool) -> Path:
    run = write_run_dir(root, run_id, failed_job=False)
    write_eval_result(
        run / "fp-disagg-1" / "results" / eval_file_name("gsm8k"), _result(score, **kw)
    )
    return run


def test_evals_are_ingested_with_the_jobs_identity_and_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    report = ingest_paths([_run_with_eval(tmp_path, "base", 0.95)], db)
    assert report.evals == 1 and report.new_evals == 1 and report.inserted == 2
    again = ingest_paths([tmp_path / "base"], db)  # idempotent
    assert again.new_evals == 0
    ingest_paths([_run_with_eval(tmp_path, "head", 0.90)], db)
    ingest_paths([_run_with_eval(tmp_path, "noise", 0.945)], db)
    store = open_store(db)
    (base,) = store.evals(RecordFilter(run_id="base"))
    assert base.identity.concurrency == 128 and base.identity.model_prefix
    assert base.result.primary is not None and base.result.primary.value == 0.95

    head = store.evals(RecordFilter(run_id="head"))
    (delta,) = compare_evals([base], head).deltas
    assert delta.verdict == "regression" and delta.change == pytest.approx(-0.05)
    (delta,) = compare_evals([base], store.evals(RecordFilter(run_id="noise"))).deltas
    assert delta.verdict == "noise"  # 0.5 points is inside 1.96 x the combined stderr
    (delta,) = compare_evals(
        [base], store.evals(RecordFilter(run_id="noise")), min_drop=0.001
    ).deltas
    assert delta.verdict == "regression"

    with pytest.raises(SystemExit) as exc:
        main(["results", "compare", "base", "head", "--db", db, "--fail-on-regression"])
    assert exc.value.code == 1
    out = capsys.readouterr().out
    assert "1 accuracy regressions" in out
    with pytest.raises(SystemExit) as exc:  # the JSON document carries the same verdict
        main(["results", "compare", "base", "head", "--db", db, "--format", "json"])
    assert exc.value.code == 0
    evals = json.loads(capsys.readouterr().out)["evals"]
    assert evals["regressions"] == 1 and evals["rule"] == "outside 1.96 x stderr"
    (d,) = evals["deltas"]
    assert d["task"] == "gsm8k" and d["verdict"] == "regression"
    assert d["change"] == pytest.approx(-0.05)
    with pytest.raises(SystemExit) as exc:
        main(["results", "list", "--db", db, "--run", "base"])
    assert exc.value.code == 0
    table = capsys.readouterr().out
    assert "accuracy evals" in table and "0.95" in table
    with pytest.raises(SystemExit) as exc:  # JSON holds the evals the table shows
        main(["results", "list", "--db", db, "--run", "base", "--format", "json"])
    assert exc.value.code == 0
    (listed,) = json.loads(capsys.readouterr().out)["evals"]
    assert listed["task"] == "gsm8k" and listed["score"] == 0.95 and listed["run_id"] == "base"

    from inferbench.report import build_report

    html = build_report(db, tmp_path / "report", plots=False).dashboard.read_text()
    table = html.split('<table id="evals">', 1)[1].split("</table>", 1)[0]
    assert "0.9450" in table and "gsm8k" in table  # the newest eval of the point


def test_simulated_evals_are_never_compared(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    ingest_paths([_run_with_eval(tmp_path, "a", 0.9, simulated=True)], db)
    ingest_paths([_run_with_eval(tmp_path, "b", 0.0, simulated=True)], db)
    store = open_store(db)
    (delta,) = compare_evals(
        store.evals(RecordFilter(run_id="a")), store.evals(RecordFilter(run_id="b"))
    ).deltas
    assert delta.verdict == "not compared" and delta.note == "simulated"
    from inferbench.report import build_report

    html = build_report(db, tmp_path / "report", plots=False).dashboard.read_text()
    assert "simulated (random tokens: not an accuracy)" in html


@pytest.mark.slow
@pytest.mark.integration
@needs_service(find_spec("lm_eval") is None, "lm-eval is not installed here")
def test_known_answers_from_the_run_step_through_store_to_compare(tmp_path: Path) -> None:
    """run's eval step -> lm-eval -> eval file -> ingest -> compare, with known scores."""
    import importlib.util

    path = Path(__file__).parents[1] / "evals" / "known_answers.py"
    module_spec = importlib.util.spec_from_file_location("known_answers", path)
    assert module_spec is not None and module_spec.loader is not None
    known_answers = importlib.util.module_from_spec(module_spec)
    sys.modules.setdefault("known_answers", known_answers)  # its dataclass looks itself up
    module_spec.loader.exec_module(known_answers)
    known_answer_server, write_dataset = (
        known_answers.known_answer_server,
        known_answers.write_dataset,
    )
    from inferbench.launch.evalstep import run_evals
    from inferbench.launch.plan import BenchPoint, BenchSpec, EvalPlan

    data = write_dataset(tmp_path / "gsm.jsonl")
    db = f"sqlite:///{tmp_path / 'r.db'}"
    plan = EvalPlan(concurrencies=(128,), context_length=9472, dataset=str(data))
    spec = BenchSpec(
        model="known", isl=8192, osl=1024, points=(BenchPoint(concurrency=128, num_prompts=1,
        num_warmups=0),), eval=plan,
    )  # fmt: skip
    for run_id, known in (("base", 9), ("head", 3)):
        run = write_run_dir(tmp_path, run_id, failed_job=False)
        job = run / "fp-disagg-1"
        with known_answer_server(known=known) as srv:
            (written,) = run_evals(srv.url, spec, job / "results", job / "logs")
            assert run_evals(srv.url, spec, job / "results", job / "logs") == [written]
            assert srv.requests == 10  # the rerun found the eval done and sent nothing
        ingest_paths([run], db)
    store = open_store(db)
    (base,) = store.evals(RecordFilter(run_id="base"))
    assert base.result.primary is not None and base.result.primary.value == pytest.approx(0.9)
    (delta,) = compare_evals([base], store.evals(RecordFilter(run_id="head"))).deltas
    assert delta.verdict == "regression" and delta.change == pytest.approx(-0.6)


def test_evals_are_exported_in_every_format(tmp_path: Path) -> None:
    import csv
    import json

    import pyarrow.parquet as pq

    db = f"sqlite:///{tmp_path / 'r.db'}"
    ingest_paths([_run_with_eval(tmp_path, "base", 0.95)], db)
    ingest_paths([_run_with_eval(tmp_path, "head", 0.90)], db)
    for fmt in ("csv", "json", "parquet"):
        out = tmp_path / f"evals.{fmt}"
        with pytest.raises(SystemExit) as exc:
            main(["results", "export", "--evals", "--format", fmt, "--output", str(out),
                  "--db", db, "--run", "head"])  # fmt: skip
        assert exc.value.code == 0
    with (tmp_path / "evals.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["task"] == "gsm8k" and float(row["score"]) == 0.90 and row["run_id"] == "head"
    (doc,) = json.loads((tmp_path / "evals.json").read_text())
    assert {s["filter"] for s in doc["result"]["scores"]} == {"flexible-extract", "strict-match"}
    table = pq.read_table(tmp_path / "evals.parquet").to_pylist()
    assert len(table) == 1 and json.loads(table[0]["eval_json"])["result"]["task"] == "gsm8k"
