from __future__ import annotations

from pathlib import Path

import pytest
from results_fixtures import write_run_dir

from inferbench.cli.demo import store_and_report
from inferbench.results.store import DEFAULT_DB_URL, open_store


def test_demo_stores_where_the_results_commands_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `make demo` then `inferbench results list` (default --db) must see the demo's points.
    monkeypatch.chdir(tmp_path)
    run = write_run_dir(tmp_path / "runs")
    stored = store_and_report(run, Path("runs"))
    assert stored.inserted == 2
    assert len(open_store(DEFAULT_DB_URL).query()) == 2
