"""Mooncake's request traces (Kimi's serving traces, FAST'25: `conversation_trace.jsonl`,
`toolagent_trace.jsonl`, `synthetic_trace.jsonl`).

One request per JSONL line: `{"timestamp": ms, "input_length": n, "output_length": m,
"hash_ids": [...]}`. `hash_ids` name the prompt's 512-token blocks, shared across the
whole trace (equal ids, equal content: the prefix reuse a cache can exploit).

Mapping onto `model.Trace`: every request is a one-turn trace of global scope, its prompt one
segment per hash id (512 tokens, the last cut to `input_length`) plus a segment unique to it
for tokens beyond the hashed blocks. The replay is closed-loop (lanes at a concurrency), so
the arrival `timestamp`s order the requests but are not replayed as arrival times.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from inferbench.bench.traces.errors import json_record
from inferbench.bench.traces.model import Stream, Trace, Turn, hashed_prompt
from inferbench.core.model import LenientModel

BLOCK_TOKENS = 512  # Mooncake's block size (its README: "hash_ids ... of 512 tokens")
_TAIL_KEYS = 1 << 40  # unhashed prompt tails get keys above every hash id


class MooncakeRequest(LenientModel):
    timestamp: float = Field(ge=0, allow_inf_nan=False)  # ms since the trace began
    input_length: int = Field(ge=1)
    output_length: int = Field(ge=0)
    hash_ids: list[Annotated[int, Field(ge=0)]] = Field(default_factory=list)


def looks_like_mooncake(first: Any) -> bool:
    return (
        isinstance(first, dict)
        and "input_length" in first
        and "output_length" in first
        and "requests" not in first
    )


def read_mooncake_lines(path: Path, lines: list[tuple[int, bytes]]) -> list[Trace]:
    requests = [
        (number, json_record(path, number, raw, MooncakeRequest, "a Mooncake request"))
        for number, raw in lines
    ]
    requests.sort(key=lambda item: (item[1].timestamp, item[0]))  # arrival order
    return [_trace(path, number, req, _TAIL_KEYS + k) for k, (number, req) in enumerate(requests)]


def _trace(path: Path, number: int, req: MooncakeRequest, tail_key: int) -> Trace:
    prompt = hashed_prompt(req.hash_ids, req.input_length, BLOCK_TOKENS, tail_key)
    turn = Turn(prompt, max(req.output_length, 1), 0.0, line=number)
    return Trace(f"{path.stem}:{number}", Stream("main", (turn,)), "global", f"{path}:{number}")
