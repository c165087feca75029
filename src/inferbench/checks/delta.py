"""A change's own findings: what `check` finds now, sorted into new, fixed and pre-existing
against a base (a git revision, `--base`) or a recorded set (`--baseline FILE`).

Findings are matched by identity (`checks.identity`): first exactly, then without list
positions; a finding of the base that matches nothing now is fixed, one of now that matches
nothing of the base is new. Against a git base the base tree is checked as it was at that
revision (written to a temporary folder from git's objects; the repository is only read) with
the same rules and srt-slurm sources, so both sides are judged by the same inferbench.
"""

from __future__ import annotations

import os
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from inferbench.checks.baseline import Baseline, RecordedFinding
from inferbench.checks.finding import Finding, Severity
from inferbench.checks.identity import FindingIdentity, identity_of
from inferbench.checks.report import CheckOptions, CheckReport, FailOn
from inferbench.core.errors import InputError


@dataclass(frozen=True)
class Delta:
    """The findings of now against a base: `against` names the base ("master", a file)."""

    against: str
    new: tuple[Finding, ...]
    preexisting: tuple[Finding, ...]
    fixed: tuple[RecordedFinding, ...]
    # files under the tree changed since a git base; None against a recorded baseline
    changed: frozenset[Path] | None = None
    sources: tuple[Path, ...] = ()  # the srt-slurm sources (files of theirs are named by them)

    def counts(self, findings: Iterable[Finding | RecordedFinding], level: Severity) -> int:
        return sum(1 for f in findings if f.severity is level)

    def exit_code(self, report: CheckReport, *, strict: bool, fail_on: FailOn) -> int:
        """0 or 1: by the new findings (errors, and warnings with `strict`) by default, by
        every finding with `fail_on` ANY."""
        if fail_on is FailOn.ANY:
            return report.exit_code(strict=strict)
        levels = (Severity.ERROR, Severity.WARNING) if strict else (Severity.ERROR,)
        return int(any(f.severity in levels for f in self.new))

    def is_changed(self, finding: Finding) -> bool:
        """Whether the finding is on a file this change touched (every file, when unknown)."""
        if self.changed is None:
            return True
        return finding.file is not None and finding.file.resolve() in self.changed


def compare(
    report: CheckReport,
    base: Sequence[RecordedFinding],
    against: str,
    sources: Sequence[Path] = (),
    changed: frozenset[Path] | None = None,
) -> Delta:
    """Sort `report`'s findings into new and pre-existing, and `base`'s into fixed."""
    head = [(identity_of(f, report.root, sources), f) for f in report.findings]
    unmatched = list(base)
    matched: set[int] = set()  # indexes into head
    for key in (_exact, _loose):
        buckets: dict[FindingIdentity, list[RecordedFinding]] = defaultdict(list)
        for record in unmatched:
            buckets[key(record.identity)].append(record)
        for i, (ident, _) in enumerate(head):
            bucket = buckets.get(key(ident))
            if i not in matched and bucket:
                bucket.pop(0)
                matched.add(i)
        unmatched = [r for bucket in buckets.values() for r in bucket]
    return Delta(
        against=against,
        new=tuple(f for i, (_, f) in enumerate(head) if i not in matched),
        preexisting=tuple(f for i, (_, f) in enumerate(head) if i in matched),
        fixed=tuple(sorted(unmatched, key=lambda r: (r.file, r.line or 0, r.rule, r.values))),
        changed=changed,
        sources=tuple(sources),
    )


def _exact(ident: FindingIdentity) -> FindingIdentity:
    return ident


def _loose(ident: FindingIdentity) -> FindingIdentity:
    return ident.loose()


def base_findings(root: Path, options: CheckOptions) -> tuple[RecordedFinding, ...]:
    """The findings of the tree under `root` at git revision `options.base`, checked with the
    same rules and sources."""
    assert options.base is not None
    from inferbench.checks.engine import check_tree
    from inferbench.config.gitbase import export_tree

    with tempfile.TemporaryDirectory(prefix="inferbench-base-") as scratch:
        tree = Path(scratch) / "tree"
        tree.mkdir()
        export_tree(root, options.base, tree)
        try:
            report = check_tree(tree, options, as_base=True)
        except InputError as exc:
            # named as the tree names its files, not by the temporary folder
            where = exc.render().replace(f"{tree.resolve()}{os.sep}", "")
            raise InputError(
                f"at base {options.base}: {where}",
                hint="the base revision's tree must load to compare against it; "
                "without --base the tree is checked as it is",
            ) from None
        return Baseline.of(report, options).findings


def check_change(
    root: Path, options: CheckOptions, *, baseline: Path | None = None
) -> tuple[CheckReport, Delta]:
    """Check the tree now and sort its findings against `options.base` (git) or the recorded
    `baseline` file; exactly one of them is given."""
    from inferbench.checks.baseline import read_baseline
    from inferbench.checks.engine import check_tree

    if baseline is not None:
        recorded = read_baseline(baseline)
        recorded.check_options(options, baseline)
        report = check_tree(root, options)
        return report, compare(
            report, recorded.findings, f"baseline {baseline}", options.srt_slurm_paths
        )
    if options.base is None:
        raise ValueError("check_change needs a git base or a baseline file")
    report = check_tree(root, options)
    base = base_findings(root, options)
    delta = compare(report, base, options.base, options.srt_slurm_paths, report.changed)
    return report, delta
