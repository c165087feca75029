"""One bad result file never blocks the valid ones: it is named, skipped, and the ingest
exits 2 at the end with every valid point stored (PostgreSQL too, via the `db_url` fixture
of the shared suite where it is set)."""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_helper import run_cli

from harness.synthetic import SyntheticConfig, write_run_dir
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import open_store

BAD = {
    "conc99999999999999999999.json": None,  # a copy of a valid file, under an absurd name
    "conc3000000000.json": None,  # beyond an INTEGER column: would fail the whole batch
    "conc16.json": "{bad",
    "conc32.json": "[]",
    "conc64.json": '{"max_concurrency": "lots"}',
    "eval_gsm8k.json": '{"kind": "inferbench-eval"',
}


def _run_with_bad_files(root: Path) -> Path:
    run = write_run_dir(root, "run-a", [SyntheticConfig()], (4, 8))
    (results,) = list(run.glob("*/results"))
    for name, content in BAD.items():
        if content is None:
            shutil.copy(results / "conc4.json", results / name)
        else:
            (results / name).write_text(content)
    return run


def test_bad_files_are_skipped_and_named_the_valid_ones_stored(tmp_path: Path) -> None:
    run = _run_with_bad_files(tmp_path / "runs")
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    report = ingest_paths([run], url)
    assert report.inserted == 2
    assert sorted(s.path.name for s in report.skipped) == sorted(BAD)
    for skipped in report.skipped:
        assert skipped.path.name in skipped.reason and "(fix: " in skipped.reason, skipped
    with open_store(url) as store:
        assert store.count() == 2


def test_the_cli_reports_each_and_exits_2_at_the_end(tmp_path: Path) -> None:
    run = _run_with_bad_files(tmp_path / "runs")
    out = run_cli("results", "ingest", str(run), "--db", f"sqlite:///{tmp_path / 's.sqlite'}")
    assert out.code == 2, out
    assert "2 new" in out.out and f"{len(BAD)} skipped" in out.out
    assert "Traceback" not in out.out + out.err
