"""IB207's and IB208's precision and recall on the real tree, each job at its srt-slurm ref,
against the decode-capacity defects read one by one (`decode_capacity_defects.yaml`); the
figures are in docs/conformance.md (`python tests/upstream/decode_capacity.py` prints them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.checks.engine import CheckOptions, CheckReport, check_tree
from inferbench.checks.render import display_path
from inferbench.checks.rules.recipe import QUEUE_TOLERANCE

from .decode_capacity import (
    CapacityRow,
    capacity_rows,
    deployed_uses,
    length_rows,
    read_defects,
    score,
)

pytestmark = pytest.mark.upstream
DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
# threshold -> (IB208 findings, true defects among them); 17 defects in all
SCORES = {1.2: (79, 17), 1.4: (30, 12), 1.5: (13, 12), 1.75: (12, 12)}


@pytest.fixture(scope="module")
def uses(inferencex_tree: Path, srt_slurm_refs_bundle: Path):  # type: ignore[no-untyped-def]
    return deployed_uses(inferencex_tree, [srt_slurm_refs_bundle])


@pytest.fixture(scope="module")
def rows(uses, inferencex_tree: Path) -> list[CapacityRow]:  # type: ignore[no-untyped-def]
    return [r for r in capacity_rows(uses, inferencex_tree) if not r.agentic]


@pytest.fixture(scope="module")
def report(inferencex_tree: Path, srt_slurm_refs_bundle: Path) -> CheckReport:
    return check_tree(inferencex_tree, CheckOptions(srt_slurm=(srt_slurm_refs_bundle,)))


def test_every_defect_read_is_a_deployed_recipe_over_its_decode_slots(
    rows: list[CapacityRow],
) -> None:
    over = {r.recipe for r in rows if r.ratio > 1}
    assert set(read_defects()) <= over  # no stale or misspelt entry


@pytest.mark.parametrize("threshold", sorted(SCORES))
def test_precision_and_recall_per_threshold(rows: list[CapacityRow], threshold: float) -> None:
    result = score(rows, set(read_defects()), threshold)
    assert (result.fired, result.true, result.defects) == (*SCORES[threshold], 17)


def test_ib208_finds_what_the_evidence_counts(
    report: CheckReport, rows: list[CapacityRow], inferencex_tree: Path
) -> None:
    """The rule's own findings are the evidence's rows above its threshold: precision 1.00,
    recall 12/17; the 5 defects below it are IB602/IB307 errors on the same files."""
    found = {display_path(f.file, inferencex_tree) for f in report.findings if f.rule == "IB208"}
    assert found == {r.recipe for r in rows if r.ratio > QUEUE_TOLERANCE}
    defects = set(read_defects())
    assert len(found & defects) == len(found) == 12
    slips = {
        display_path(f.file, inferencex_tree)
        for f in report.findings
        if f.rule in ("IB602", "IB307")
    }
    assert defects - found <= slips and len(defects - found) == 5


def test_ib207_holds_on_every_deployed_role(uses, inferencex_tree: Path) -> None:  # type: ignore[no-untyped-def]
    """Every deployed role's max-model-len holds the lengths its recipe runs (523 roles, all
    against the recipe's own benchmark isl/osl): no defect, and IB207 finds none."""
    lengths = length_rows(uses, inferencex_tree)
    assert len(lengths) == 523 and all(r.own_lengths for r in lengths)
    assert all(r.model_len >= r.need for r in lengths)


def test_the_figures_are_documented() -> None:
    text = DOC.read_text()
    for threshold, (fired, true) in SCORES.items():
        assert f"| {threshold}x | {fired} | {true} |" in text
