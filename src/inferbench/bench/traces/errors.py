"""One way to say where a trace is wrong: file, line and field, exit 2."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from inferbench.errors import InputError, Location


def trace_error(
    path: Path, line: int | None, key: str | None, message: str, hint: str | None = None
) -> InputError:
    return InputError(message, location=Location(file=path, line=line, key=key), hint=hint)


def from_validation(path: Path, line: int, exc: ValidationError, prefix: str = "") -> InputError:
    """The first pydantic error as file:line: field: message."""
    err = exc.errors()[0]
    key = ".".join(str(p) for p in err["loc"] if p not in ("function-after", "tagged-union"))
    return trace_error(path, line, prefix + key if key else prefix or None, err["msg"])
