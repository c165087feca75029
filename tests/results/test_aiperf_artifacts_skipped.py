"""A replay's aiperf artifact files (`--aiperf-artifacts`) beside its result are not points."""

from __future__ import annotations

from pathlib import Path

from inferbench.results.sources import discover_units


def test_files_under_aiperf_artifacts_are_not_result_files(tmp_path: Path) -> None:
    (tmp_path / "aiperf_artifacts").mkdir()
    for name in ("result.json", "aiperf_artifacts/profile_export_aiperf.json",
                 "aiperf_artifacts/server_metrics_export.json"):  # fmt: skip
        (tmp_path / name).write_text("{}")
    units = discover_units([tmp_path])
    assert [u.path for u in units] == [tmp_path / "result.json"]
