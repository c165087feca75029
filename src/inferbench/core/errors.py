"""The error hierarchy every stage raises for a user's mistake.

    InferbenchError              a problem the user can fix; the CLI prints one line, exits 2
     +-- InputError              unreadable or invalid input (file, line, column, key path, hint)
     +-- ConfigError             an InputError raised while loading benchmark-tree files
     +-- ExternalToolError       an external program (srtctl, sbatch, ...) is missing or refused

Anything else that escapes is a bug in inferbench and shows a traceback only with --debug.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Location:
    """Where in an input a problem is: file, 1-based line and column, dotted key path."""

    file: Path | None = None
    line: int | None = None
    column: int | None = None
    key: str | None = None

    def __str__(self) -> str:
        parts: list[str] = []
        if self.file is not None:
            where = str(self.file)
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            parts.append(where)
        if self.key:
            parts.append(self.key)
        return ": ".join(parts)


class InferbenchError(Exception):
    """A problem the user can fix. `exit_code` is what the CLI exits with."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location or Location()
        self.hint = hint

    def render(self) -> str:
        where = str(self.location)
        text = f"{where}: {self.message}" if where else self.message
        if self.hint:
            text += f" (fix: {self.hint})"
        return text

    def __str__(self) -> str:
        return self.render()


class InputError(InferbenchError):
    """Unreadable or invalid input."""


class ConfigError(InputError):
    """Invalid benchmark-tree file (master config, recipe, cluster, changelog, ...)."""


class ExternalToolError(InferbenchError):
    """A required external program is missing, or refused what we gave it."""


def validation_summary(exc: Exception) -> str:
    """The first problem of a pydantic ValidationError, one line: `key: what is wrong`."""
    errors = getattr(exc, "errors", None)
    first = errors()[0] if callable(errors) and errors() else None
    if not isinstance(first, dict):
        return str(exc).splitlines()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    message = str(first.get("msg", "invalid"))
    return f"{where}: {message}" if where else message
