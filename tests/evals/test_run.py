"""`inferbench run` on the simulator: throughput points on its virtual clock, the job's eval
against its server (marked simulated), a power note, all stored by one ingest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inferbench.cli.main import main
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import open_store

from .conftest import needs_lm_eval
from .known_answers import write_dataset

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@needs_lm_eval
@pytest.mark.slow
@pytest.mark.integration
def test_run_evals_marked_jobs_and_stores_scores(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree)
    data = write_dataset(tmp_path / "gsm.jsonl")
    runs = tmp_path / "runs"
    with pytest.raises(SystemExit) as exc:
        main(
            ["run", "--root", str(tree), "--config-keys", "llama3.1-8b-bf16-h200-vllm",
             "--seq-lens", "8k1k", "--min-concurrency", "32", "--max-concurrency", "32",
             "--engine", "sim",
             "--max-prompts", "2", "--eval-dataset", str(data), "--eval-limit", "1",
             "--runs-dir", str(runs)]
        )  # fmt: skip
    assert exc.value.code in (0, None)
    (job,) = [p for p in runs.glob("*/*") if (p / "job.json").is_file()]
    assert (job / "results" / "conc32.json").is_file()
    assert (job / "results" / "eval_gsm8k_conc32.json").is_file()
    note = (job / "results" / "power_conc32.unavailable").read_text()
    assert "simulated" in note  # the virtual clock ran no hardware: energy says why not
    db = f"sqlite:///{tmp_path / 'r.db'}"
    report = ingest_paths([runs], db)
    assert report.inserted == 1 and report.evals == 1
    store = open_store(db)
    (ev,) = store.evals()
    assert ev.result.simulated and ev.identity.concurrency == 32
    (rec,) = [s.record for s in store.query()]
    assert rec.derived.energy is not None and not rec.derived.energy.valid
    assert "simulated" in rec.derived.energy.reasons[0]


@pytest.mark.slow
@pytest.mark.integration
def test_the_run_summary_shows_each_evals_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run-eval job whose dataset is missing ran its points; its eval is `unavailable` in
    the summary, never hidden behind `completed 1/1`, and not marked simulated."""
    from inferbench.evals.result import EvalStatus, read_eval_result

    monkeypatch.setenv("COLUMNS", "250")
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree)
    runs = tmp_path / "runs"
    with pytest.raises(SystemExit):
        main(
            ["run", "--root", str(tree), "--config-keys", "llama3.1-8b-bf16-h200-vllm",
             "--seq-lens", "8k1k", "--min-concurrency", "32", "--max-concurrency", "32",
             "--engine", "sim",
             "--max-prompts", "2", "--eval-dataset", str(tmp_path / "missing.jsonl"),
             "--runs-dir", str(runs)]
        )  # fmt: skip
    (job,) = [p for p in runs.glob("*/*") if (p / "job.json").is_file()]
    result = read_eval_result(job / "results" / "eval_gsm8k_conc32.json")
    assert result.status is EvalStatus.UNAVAILABLE and not result.simulated
    assert "gsm8k@c32 unavailable" in capsys.readouterr().out
