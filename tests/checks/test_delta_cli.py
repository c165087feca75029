"""`inferbench check --base/--baseline/--write-baseline/--all/--fail-on` as a CI job runs it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from inferbench.cli.main import main

from .treeutil import RECIPE, edit, git


@pytest.fixture()
def debt(repo: Path) -> Path:
    """The example tree under git with one defect already at the base (IB307 on the recipe)."""
    bench = repo / "bench"
    edit(bench, RECIPE, 'concurrencies: "2048"', 'concurrencies: "1024"')
    git(repo, "commit", "-qam", "a defect the tree already has")
    return bench


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str


def _check(tree: Path, capsys: pytest.CaptureFixture[str], *args: str) -> Ran:
    """`inferbench check TREE --select IB3,IB5 ARGS` in-process, as the script runs it."""
    capsys.readouterr()
    try:
        main(["check", str(tree), "--select", "IB3,IB5", *args])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return Ran(code, captured.out, captured.err)


def test_old_debt_passes_and_is_only_counted(
    debt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _check(debt, capsys, "--base", "main")
    assert (ran.code, ran.out) == (
        0,
        "0 new errors, 0 fixed against main; 1 pre-existing not shown: --all\n",
    )
    shown = _check(debt, capsys, "--base", "main", "--all")
    assert "Pre-existing:\n" in shown.out and "IB307" in shown.out
    assert _check(debt, capsys, "--base", "main", "--fail-on", "any").code == 1


def test_a_new_defect_fails_and_is_annotated_alone(
    debt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    master = debt / "configs" / "nvidia-master.yaml"
    master.write_text(master.read_text().replace("conc-list: [2048]", "conc-list: [4096]", 1))
    ran = _check(debt, capsys, "--base", "main", "--format", "github")
    assert ran.code == 1
    lines = ran.out.splitlines()
    # the edited master entry makes IB307 new (entry 4096; the one against 2048 is fixed) on
    # the recipe the change did not touch, and IB503 (no changelog entry) on the master: the
    # changed file is annotated first, and nothing pre-existing is annotated
    assert [line.split(",")[0] for line in lines[:-1]] == [
        "::warning file=configs/nvidia-master.yaml",
        f"::error file={RECIPE}",
    ]
    assert lines[-1].startswith(
        "::notice title=inferbench check::1 new error, 1 new warning, 1 fixed against main;"
    )
    rows = json.loads(_check(debt, capsys, "--base", "main", "--format", "json", "--all").out)
    assert sorted((r["status"], r["rule"]) for r in rows) == [
        ("fixed", "IB307"),
        ("new", "IB307"),
        ("new", "IB503"),
    ]
    assert all(len(r["fingerprint"]) == 16 for r in rows)


def test_a_recorded_baseline_stands_in_for_git(
    debt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.json"
    ran = _check(debt, capsys, "--write-baseline", str(baseline))
    assert ran.code == 0 and "IB307" in ran.out  # the report, and recording succeeded
    assert ran.err == f"Recorded 1 finding in {baseline}.\n"
    assert _check(debt, capsys, "--baseline", str(baseline)).code == 0
    edit(debt, RECIPE, 'concurrencies: "1024"', 'concurrencies: "512"')
    ran = _check(debt, capsys, "--baseline", str(baseline))
    assert ran.code == 1
    assert ran.out.endswith(f"1 new error, 1 fixed against baseline {baseline}; 0 pre-existing "
                            "not shown: --all\n")  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--base", "main", "--baseline", "b.json"), "--base and --baseline both name"),
        (("--base", "main", "--write-baseline", "b.json"), "--write-baseline records the tree"),
        (("--baseline", "missing.json"), "missing.json: --baseline: file not found"),
        (("--base", "main", "--fail-on", "some"), "'some' is not one of"),
    ],
)
def test_usage_errors_exit_2_with_a_reason(
    debt: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    ran = _check(debt, capsys, *args)
    assert ran.code == 2
    assert message in ran.err
    assert "Traceback" not in ran.out + ran.err


def test_statistics_count_every_finding_and_exit_as_the_change_does(
    debt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _check(debt, capsys, "--base", "main", "--statistics")
    assert ran.code == 0  # nothing new
    assert "IB307" in ran.out  # the pre-existing finding is counted
