"""What to send: workload specs (serialisable, frozen) and the length conventions.

A workload is data: it is written verbatim into every result file, and each
client worker rebuilds its own share of the prompts from it (deterministic
under the seed), so nothing is tokenised or built once the clock runs.
"""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal, Self

import numpy as np
from pydantic import Field, model_validator

from inferbench.core.model import FrozenModel


class RangeMode(StrEnum):
    """Which peer's `--random-range-ratio r` convention draws the lengths."""

    INFERENCEX = "inferencex"  # U[floor(L*r), L]   (sa-bench as InferenceX calls it)
    VLLM = "vllm"  # U[floor(L*(1-r)), ceil(L*(1+r))]
    SGLANG = "sglang"  # U[max(1, int(L*r)), L]


class PromptTemplate(StrEnum):
    """How random prompt text is framed as a chat turn before it is sent to /v1/completions
    (sa-bench's `--use-chat-template`); the template's tokens count in the input length."""

    TOKENIZER = "tokenizer"  # the Jinja `chat_template` next to the tokenizer.json
    DEEPSEEK_V4 = "deepseek_v4"  # DeepSeek-V4's encoder (sa-bench's --dsv4)


def length_bounds(length: int, ratio: float, mode: RangeMode) -> tuple[int, int]:
    """Inclusive integer bounds of the length distribution for nominal `length`."""
    if mode is RangeMode.INFERENCEX:
        low, high = math.floor(length * ratio), length
    elif mode is RangeMode.VLLM:
        low, high = math.floor(length * (1 - ratio)), math.ceil(length * (1 + ratio))
    else:
        low, high = int(length * ratio), length
    return max(1, low), max(1, high)


def draw_lengths(
    length: int, ratio: float, mode: RangeMode, rng: np.random.Generator, n: int
) -> np.ndarray:
    low, high = length_bounds(length, ratio, mode)
    return rng.integers(low, high + 1, size=n)


class _TokenIds(FrozenModel):
    """Prompts drawn as random token ids: the lengths, their spread and the id range."""

    isl: int = Field(gt=0)
    osl: int = Field(gt=0)
    range_ratio: float = Field(default=1.0, ge=0.0, le=1.0)
    range_mode: RangeMode = RangeMode.INFERENCEX
    tokenizer: Path | None = None
    chat_template: PromptTemplate | None = None
    # token ids are drawn from [id_low, id_high): ordinary tokens in common vocabularies
    id_low: int = Field(default=1000, ge=0)
    id_high: int = Field(default=30000, gt=1)

    @model_validator(mode="after")
    def _ids(self) -> Self:
        if self.id_high <= self.id_low:
            raise ValueError("id_high must be above id_low")
        if self.chat_template is not None and self.tokenizer is None:
            raise ValueError("a chat template frames text: it needs a tokenizer")
        return self


class RandomWorkload(_TokenIds):
    """Random prompts with exact lengths.

    Without a tokenizer the prompt is a list of token ids (the completions API
    takes one), so the server sees exactly the intended length. With a local
    Hugging Face `tokenizer.json` the ids are decoded to text and re-encoded
    until the text has the intended length. With a `chat_template` the text is
    then framed as a user turn; as in sa-bench, `isl` includes the template's
    tokens (the random part is that much shorter).
    """

    kind: Literal["random"] = "random"


class SharedPrefixWorkload(_TokenIds):
    """`groups` system prompts of `prefix_len` tokens; each request adds its own suffix
    (`isl` is the suffix length after the shared prefix)."""

    kind: Literal["shared_prefix"] = "shared_prefix"
    groups: int = Field(gt=0)
    prefix_len: int = Field(gt=0)


class FileWorkload(FrozenModel):
    """Prompts from a file: JSONL (`prompt`, optional `output_len`) or a ShareGPT JSON list."""

    kind: Literal["file"] = "file"
    path: Path
    format: Literal["jsonl", "sharegpt"] = "jsonl"
    osl: int | None = Field(default=None, gt=0, description="overrides per-row output lengths")
    tokenizer: Path | None = None


class TraceWorkload(FrozenModel):
    """Agentic sessions replayed from traces (`inferbench.bench.agentic`), not drawn prompts."""

    kind: Literal["trace"] = "trace"
    source: str
    format: str  # weka, jsonl, synth
    traces: int = Field(ge=1)
    max_model_len: int | None = None
    context_rule: str = "trim"
    # the trace set's mean requested lengths per request (the same at every concurrency)
    mean_input: int | None = None
    mean_output: int | None = None


Workload = Annotated[
    RandomWorkload | SharedPrefixWorkload | FileWorkload | TraceWorkload,
    Field(discriminator="kind"),
]
