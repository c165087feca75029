"""`--srt-slurm` repeated on the real trees: each source gives only the refs it holds. The
checkout beside the tree is a copy without git, so its ref is unknown: beside the refs
bundle it stands in for no ref, and `check` finds what it finds with the bundle alone
(with the checkout standing in for the refs the bundle lacks it found 13 false errors)."""

from __future__ import annotations

from pathlib import Path

from inferbench.checks.engine import check_tree
from inferbench.checks.report import CheckOptions


def _errors(tree: Path, *given: Path) -> set[tuple[str, str | None, str | None, str]]:
    report = check_tree(tree, CheckOptions(srt_slurm=tuple(given)))
    return {
        (f.rule, str(f.file) if f.file else None, f.key, f.message)
        for f in report.findings
        if f.severity.value == "error"
    }


def test_a_checkout_beside_the_bundle_judges_no_ref_it_is_not(
    inferencex_tree: Path, srt_slurm_refs_bundle: Path, srt_slurm_tree: Path
) -> None:
    alone = _errors(inferencex_tree, srt_slurm_refs_bundle)
    both = _errors(inferencex_tree, srt_slurm_refs_bundle, srt_slurm_tree)
    assert both == alone
    # named as the ref it is (main), it judges main's jobs only: still no false error
    named = _errors(inferencex_tree, Path(f"{srt_slurm_tree}@main"), srt_slurm_refs_bundle)
    assert named == alone
