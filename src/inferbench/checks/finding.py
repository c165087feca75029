"""A finding: one problem a rule found, with where it is and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from inferbench.core.errors import Location


class Severity(StrEnum):
    """How bad a finding is. Only errors fail a run; `--strict` fails on warnings too;
    infos (what was not checked, keys srtctl tolerates) never do."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Finding:
    """One problem: rule id and slug, severity, a one-line message, its location and a fix hint."""

    rule: str
    slug: str
    severity: Severity
    message: str
    file: Path | None = None
    line: int | None = None
    column: int | None = None
    key: str | None = None
    hint: str | None = None

    @property
    def location(self) -> Location:
        return Location(self.file, self.line, self.column, self.key)

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (_sortable(self.file), self.line or 0, self.column or 0, self.rule, self.message)


def _sortable(file: Path | None) -> str:
    """A file of an srt-slurm ref unpacked into the cache sorts by its ref and path (after
    every other file), not by where the cache happens to be."""
    if file is None:
        return ""
    from inferbench.config.srt_slurm_refs import unpacked_label

    unpacked = unpacked_label(file) if "trees" in file.parts else None
    if unpacked is None:
        return str(file)
    root, label = unpacked
    return f"\x7f{label}/{file.relative_to(root).as_posix()}"
