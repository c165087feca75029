"""BurstGPT's request logs (Azure OpenAI GPT usage, `BurstGPT_*.csv`).

One request per CSV row: `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log
Type` (seconds since the log began; `Conversation log` or `API log`). The log carries no
prompt content: every request is a one-turn trace with a prompt of its own (no reuse), of
`Request tokens` in and `Response tokens` out. Rows whose response is 0 tokens are failed
requests in the log and are skipped, as BurstGPT's authors do. Timestamps order the
requests; the replay is closed-loop, so they are not replayed as arrival times.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inferbench.bench.traces.errors import from_validation, trace_error
from inferbench.bench.traces.model import Prompt, Segment, Stream, Trace, Turn

COLUMNS = ("Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens", "Log Type")
_KEYS = 1 << 41  # prompt keys of their own, apart from every hashed block


class BurstRow(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)

    timestamp: float = Field(alias="Timestamp", ge=0, allow_inf_nan=False)
    model: str = Field(alias="Model")
    request_tokens: int = Field(alias="Request tokens", ge=0)
    response_tokens: int = Field(alias="Response tokens", ge=0)
    log_type: str = Field(default="", alias="Log Type")


def looks_like_burstgpt(header: str) -> bool:
    return [c.strip() for c in header.split(",")][:4] == list(COLUMNS[:4])


def read_burstgpt(path: Path, text: str) -> list[Trace]:
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in COLUMNS[:4] if c not in (reader.fieldnames or [])]
    if missing:
        raise trace_error(
            path, 1, None, f"not a BurstGPT log: no column {missing[0]!r}",
            hint="BurstGPT's header is " + ",".join(COLUMNS),
        )  # fmt: skip
    rows: list[tuple[int, BurstRow]] = []
    for number, raw in enumerate(reader, start=2):
        try:
            row = BurstRow.model_validate({k: v for k, v in raw.items() if k in COLUMNS})
        except ValidationError as exc:
            raise from_validation(path, number, exc) from None
        if row.response_tokens > 0 and row.request_tokens > 0:
            rows.append((number, row))
    rows.sort(key=lambda item: (item[1].timestamp, item[0]))
    return [
        Trace(
            f"{path.stem}:{number}",
            Stream(
                "main",
                (
                    Turn(
                        Prompt.of((Segment(_KEYS + number, row.request_tokens),)),
                        row.response_tokens,
                        0.0,
                        line=number,
                    ),
                ),
            ),
            "local",
            f"{path}:{number}",
        )
        for number, row in rows
    ]
