"""The Weka trace format that InferenceX's agentic benchmark replays (through aiperf).

One trace per JSONL line (the Hugging Face dataset's `traces.jsonl`) or one trace per
`.json` file. A trace is `{id, models, block_size, hash_id_scope, requests}`; a request
is `{t, type: "n"|"s", model, in, out, hash_ids, api_time?, think_time?, ttft?}` or a
subagent marker `{t, type: "subagent", agent_id, status, requests: [...]}` whose inner
requests may nest further markers. `in` is the prompt length; `hash_ids` name its
`block_size`-token blocks (equal ids, equal content within the `hash_id_scope`).

Mapping onto `model.Trace`:
- a request's prompt is one segment per hash id (`block_size` tokens each), cut to `in`;
  tokens of `in` beyond the hashed blocks are a segment of their own, unique to that request;
- the idle time before a request is its `think_time`, else the gap between its `t` and the
  end (`t + api_time`) of the previous request of the same stream, never negative;
- consecutive subagent markers form one fork (siblings run concurrently, each starting at
  its `t` offset from the first); the parent's next request waits for the fork unless every
  marker is `status: "async_launched"`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inferbench.bench.traces.errors import from_validation, trace_error
from inferbench.bench.traces.model import Fork, Prompt, Stream, Trace, Turn, hashed_prompt

_TAIL_KEYS = 1 << 40  # unhashed prompt tails get keys above every hash id


class _Base(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class WekaRequest(_Base):
    t: float = Field(ge=0, allow_inf_nan=False)
    type: Literal["n", "s"]
    model: str = ""
    input_length: int = Field(ge=0, alias="in")
    output_length: int = Field(ge=0, alias="out")
    hash_ids: list[Annotated[int, Field(ge=0)]] = Field(default_factory=list)
    api_time: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    think_time: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class WekaSubagent(_Base):
    t: float = Field(ge=0, allow_inf_nan=False)
    type: Literal["subagent"]
    agent_id: str
    status: str = "completed"
    requests: list[Annotated[WekaRequest | WekaSubagent, Field(discriminator="type")]]


class WekaTrace(_Base):
    id: str
    block_size: int = Field(gt=0)
    hash_id_scope: Literal["local", "global"] = "local"
    requests: list[Annotated[WekaRequest | WekaSubagent, Field(discriminator="type")]] = Field(
        min_length=1
    )


WekaSubagent.model_rebuild()


class _Builder:
    def __init__(self, trace: WekaTrace, line: int) -> None:
        self.trace = trace
        self.line = line
        self.tails = _TAIL_KEYS

    def prompt(self, req: WekaRequest) -> Prompt:
        self.tails += 1  # a key of its own for whatever the hashed blocks leave over
        return hashed_prompt(req.hash_ids, req.input_length, self.trace.block_size, self.tails)

    def stream(self, name: str, items: list[WekaRequest | WekaSubagent]) -> Stream:
        steps: list[Turn | Fork] = []
        prev_end: float | None = None
        i = 0
        while i < len(items):
            item = items[i]
            if isinstance(item, WekaRequest):
                gap = item.think_time
                if gap is None:
                    gap = 0.0 if prev_end is None else max(0.0, item.t - prev_end)
                steps.append(
                    Turn(self.prompt(item), max(item.output_length, 1), gap, line=self.line)
                )
                prev_end = item.t + (item.api_time or 0.0)
                i += 1
                continue
            group: list[WekaSubagent] = []
            while i < len(items) and isinstance(items[i], WekaSubagent):
                group.append(items[i])  # type: ignore[arg-type]
                i += 1
            first = group[0].t
            steps.append(
                Fork(
                    branches=tuple(self.stream(g.agent_id, list(g.requests)) for g in group),
                    delay_s=0.0 if prev_end is None else max(0.0, first - prev_end),
                    offsets_s=tuple(g.t - first for g in group),
                    join=not all(g.status == "async_launched" for g in group),
                )
            )
            prev_end = None  # the next parent request's think_time (or t) says when
        return Stream(name, tuple(s for s in steps if not _empty(s)))

    def build(self, source: str) -> Trace:
        root = self.stream("main", list(self.trace.requests))
        return Trace(self.trace.id, root, self.trace.hash_id_scope, source)


def _empty(step: Turn | Fork) -> bool:
    return isinstance(step, Turn) and step.input_len == 0


def parse_trace(data: Any, path: Path, line: int) -> Trace:
    if not isinstance(data, dict):
        raise trace_error(path, line, None, "a Weka trace is a JSON object")
    try:
        trace = WekaTrace.model_validate(data)
    except ValidationError as exc:
        raise from_validation(path, line, exc) from None
    return _Builder(trace, line).build(f"{path}:{line}")


def looks_like_weka(first: Any) -> bool:
    return isinstance(first, dict) and "requests" in first and "block_size" in first


def read_weka_lines(path: Path, lines: list[tuple[int, bytes]]) -> list[Trace]:
    traces = []
    for number, raw in lines:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise trace_error(path, number, None, f"not valid JSON ({exc})") from None
        traces.append(parse_trace(data, path, number))
    return traces
