"""`inferbench traces synth`: seeded agentic sessions from documented distributions.

The output is inferbench's own JSONL trace format (`jsonl.py`), so it can be read,
edited and replayed like a hand-written trace. For every session (one numpy generator
seeded with `[seed, session]`, so session k is the same whatever the count):

- root turns: 1 + Poisson(turns - 1), at most `max_turns`;
- the first turn's input (system prompt, tool definitions, task): lognormal with median
  `first_input` and shape `sigma`; every later turn's input (a tool result, a user message):
  lognormal with median `input` and shape `sigma`; outputs: lognormal with median `output`
  and shape `sigma`; all rounded, at least 1 token;
- the idle time before a turn (tool execution, the user thinking): exponential with mean
  `delay` seconds (the first turn: none);
- context growth: every turn sends the whole conversation so far, so the context grows by
  input + output per turn; the session ends before a turn would take it past `max_context`;
- subagents: after each root turn but the last, with probability `subagent_p`, a fork of
  1..`subagent_max` (uniform) subagents; each has 1 + Poisson(`subagent_turns` - 1) turns of
  the same input/output distributions, starts with the parent's first `shared_prefix` tokens
  (the shared system prompt) and begins Exp(`delay` / 4) seconds after the spawn.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import orjson
from pydantic import Field, model_validator

from inferbench.core.limits import MAX_SEED, MAX_SESSIONS, MAX_TOKENS, MAX_TURNS
from inferbench.core.model import FrozenModel

_MAX_TURNS_PER_SESSION = 10_000


class SynthSpec(FrozenModel):
    """What `traces synth` generates; every count is bounded (core.limits) so that a typo
    like sessions=1e8 is refused at once instead of filling memory."""

    sessions: int = Field(default=16, ge=1, le=MAX_SESSIONS)
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    turns: float = Field(default=12.0, ge=1, le=_MAX_TURNS_PER_SESSION)
    max_turns: int = Field(default=64, ge=1, le=_MAX_TURNS_PER_SESSION)
    first_input: int = Field(default=6000, ge=1, le=MAX_TOKENS)
    input: int = Field(default=600, ge=1, le=MAX_TOKENS)
    output: int = Field(default=250, ge=1, le=MAX_TOKENS)
    sigma: float = Field(default=0.6, ge=0, le=10)
    delay: float = Field(default=3.0, ge=0, le=86_400)
    max_context: int = Field(default=131072, ge=2, le=MAX_TOKENS)
    subagent_p: float = Field(default=0.15, ge=0, le=1)
    subagent_max: int = Field(default=3, ge=1, le=_MAX_TURNS_PER_SESSION)
    subagent_turns: float = Field(default=4.0, ge=1, le=_MAX_TURNS_PER_SESSION)
    shared_prefix: int = Field(default=4000, ge=0, le=MAX_TOKENS)

    @model_validator(mode="after")
    def _bounded_total(self) -> SynthSpec:
        if self.sessions * self.turns > MAX_TURNS:
            raise ValueError(
                f"sessions x turns = {self.sessions * self.turns:,.0f} is above the "
                f"{MAX_TURNS:,} turns a synthetic trace set may have: fewer sessions or turns"
            )
        return self


def _lognormal(rng: np.random.Generator, median: int, sigma: float) -> int:
    return max(1, round(float(median * np.exp(sigma * rng.standard_normal()))))


class _Session:
    def __init__(self, spec: SynthSpec, index: int) -> None:
        self.spec = spec
        self.name = f"synth-{spec.seed}-{index:05d}"
        self.rng = np.random.default_rng([spec.seed, index])

    def _row(self, **fields: Any) -> dict[str, Any]:
        return {"session": self.name, **fields}

    def _delay(self, mean: float) -> float:
        return round(float(self.rng.exponential(mean)), 3) if mean > 0 else 0.0

    def _subagent(self, name: str, parent_context: int) -> Iterator[dict[str, Any]]:
        spec, rng = self.spec, self.rng
        shared = min(spec.shared_prefix, parent_context)
        context = shared
        turns = 1 + int(rng.poisson(spec.subagent_turns - 1))
        for k in range(turns):
            inp = _lognormal(rng, spec.input, spec.sigma)
            out = _lognormal(rng, spec.output, spec.sigma)
            if context + inp + out > spec.max_context:
                break
            row = self._row(subagent=name, input=inp, output=out)
            if k == 0:
                row["delay"] = self._delay(spec.delay / 4)
                if shared:
                    row["shared_prefix"] = shared
            else:
                row["delay"] = self._delay(spec.delay)
            context += inp + out
            yield row

    def rows(self) -> Iterator[dict[str, Any]]:
        spec, rng = self.spec, self.rng
        turns = min(spec.max_turns, 1 + int(rng.poisson(spec.turns - 1)))
        context = 0
        forks = 0
        for k in range(turns):
            median = spec.first_input if k == 0 else spec.input
            inp = _lognormal(rng, median, spec.sigma)
            out = _lognormal(rng, spec.output, spec.sigma)
            if context + inp + out > spec.max_context:
                break
            delay = 0.0 if k == 0 else self._delay(spec.delay)
            yield self._row(input=inp, output=out, delay=delay)
            context += inp + out
            if k < turns - 1 and rng.random() < spec.subagent_p:
                forks += 1
                for j in range(int(rng.integers(1, spec.subagent_max + 1))):
                    yield from self._subagent(f"sub{forks}-{j}", context)


def synth_rows(spec: SynthSpec) -> Iterator[dict[str, Any]]:
    for index in range(spec.sessions):
        yield from _Session(spec, index).rows()


def synth_jsonl(spec: SynthSpec) -> bytes:
    return b"".join(orjson.dumps(row) + b"\n" for row in synth_rows(spec))
