"""What `inferbench check` is asked (`CheckOptions`) and what it answers (`CheckReport`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from inferbench.checks.finding import Finding, Severity


class FailOn(StrEnum):
    """Which findings decide the exit code when there is a base (`--fail-on`)."""

    NEW = "new"  # the change's own: a tree's old debt does not fail its pull requests
    ANY = "any"  # every finding, as without a base


@dataclass(frozen=True)
class CheckOptions:
    base: str | None = None
    # srt-slurm checkouts, git clones or bundles (`--srt-slurm`, repeatable): each recipe is
    # judged at the ref its launcher clones when one of them holds it
    srt_slurm: Path | tuple[Path, ...] | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    srtctl: bool = False  # judge recipes with the installed srtctl's own loader

    @property
    def srt_slurm_paths(self) -> tuple[Path, ...]:
        if self.srt_slurm is None:
            return ()
        if isinstance(self.srt_slurm, tuple):
            return self.srt_slurm
        return (self.srt_slurm,)


@dataclass(frozen=True)
class CheckReport:
    root: Path
    findings: tuple[Finding, ...]
    rules: tuple[str, ...]  # ids of the rules that ran
    # with --base: the files under the tree changed since the base (edited, new, deleted)
    changed: frozenset[Path] | None = None

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.WARNING)

    def exit_code(self, *, strict: bool = False) -> int:
        """0 clean, 1 when an error was found (or a warning, with `strict`)."""
        if self.errors or (strict and self.warnings):
            return 1
        return 0
