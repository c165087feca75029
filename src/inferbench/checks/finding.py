"""A finding: one problem a rule found, with where it is and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from inferbench.errors import Location


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
        return (str(self.file or ""), self.line or 0, self.column or 0, self.rule, self.message)
