"""One way to say where a trace is wrong: file, line and field, exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from inferbench.core.errors import InputError, Location


def trace_error(
    path: Path, line: int | None, key: str | None, message: str, hint: str | None = None
) -> InputError:
    return InputError(message, location=Location(file=path, line=line, key=key), hint=hint)


def from_validation(path: Path, line: int, exc: ValidationError, prefix: str = "") -> InputError:
    """The first pydantic error as file:line: field: message."""
    err = exc.errors()[0]
    key = ".".join(str(p) for p in err["loc"] if p not in ("function-after", "tagged-union"))
    return trace_error(path, line, prefix + key if key else prefix or None, err["msg"])


M = TypeVar("M", bound=BaseModel)


def json_record(path: Path, line: int, raw: bytes, model: type[M], what: str) -> M:
    """One JSON-lines record as `model`, or the error naming file, line and field."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise trace_error(path, line, None, f"not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise trace_error(path, line, None, f"{what} is a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise from_validation(path, line, exc) from None
