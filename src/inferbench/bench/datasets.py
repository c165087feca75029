"""Build prompts from a workload spec, deterministically, one request index at a time.

Every request index has its own random stream (seed, index), so any worker can
build any share of the workload and get exactly the prompts a single process
would have built.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from inferbench.bench.chat_template import wrapper
from inferbench.bench.workload import (
    FileWorkload,
    PromptTemplate,
    RandomWorkload,
    SharedPrefixWorkload,
    TraceWorkload,
    Workload,
    draw_lengths,
)
from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import MAX_DATA_BYTES, iter_lines, read_file

_PREFIX_STREAM = 1 << 40  # separates the shared-prefix random streams from per-request ones


@dataclass(frozen=True, slots=True)
class Prompt:
    """One request's prompt (token ids or text) and its intended lengths."""

    index: int
    prompt: list[int] | str
    input_len: int  # 0 when unknown (a text file without a tokenizer)
    output_len: int


@lru_cache(maxsize=4)
def load_tokenizer(path: Path) -> Any:
    """A local Hugging Face `tokenizers` file; never downloads anything."""
    from tokenizers import Tokenizer

    file = path / "tokenizer.json" if path.is_dir() else path
    if not file.is_file():
        raise InputError(
            f"tokenizer file not found: {file}",
            location=Location(key="--tokenizer"),
            hint="pass a local tokenizer.json (or the folder holding it)",
        )
    try:
        return Tokenizer.from_file(str(file))
    except Exception as exc:
        raise InputError(
            f"cannot load tokenizer {file}: {str(exc)[:200]}", location=Location(file=file)
        ) from None


@lru_cache(maxsize=8)
def template_overhead(kind: PromptTemplate, tokenizer: Path) -> int:
    """The tokens a chat template adds around a user message, measured as sa-bench does:
    a one-token message ("a") framed, less that token."""
    tok = load_tokenizer(tokenizer)
    framed = wrapper(kind, tokenizer)("a")
    return len(_encode(tok, framed)) - len(_encode(tok, "a"))


def _encode(tok: Any, text: str) -> list[int]:
    return list(tok.encode(text, add_special_tokens=False).ids)


def build_prompts(workload: Workload, indices: list[int], seed: int) -> list[Prompt]:
    """The prompts for `indices` (positions in the workload), in that order."""
    if isinstance(workload, RandomWorkload):
        return [_random_prompt(workload, i, seed) for i in indices]
    if isinstance(workload, SharedPrefixWorkload):
        return [_shared_prefix_prompt(workload, i, seed) for i in indices]
    if isinstance(workload, TraceWorkload):
        raise InputError(
            "trace workloads are replayed session by session, not drawn as prompts",
            hint="use `inferbench replay` (inferbench.bench.agentic.api.run_replay)",
        )
    rows = _file_rows(workload, max(indices, default=0) + 1)
    return [_file_prompt(workload, rows, i) for i in indices]


def _token_ids(rng: np.random.Generator, n: int, low: int, high: int) -> np.ndarray:
    """Consecutive ids from a random offset (like sa-bench), kept inside [low, high)."""
    offset = int(rng.integers(0, high - low))
    return (low + (offset + np.arange(n)) % (high - low)).astype(np.int64)


def _lengths(
    spec: RandomWorkload | SharedPrefixWorkload, rng: np.random.Generator
) -> tuple[int, int]:
    # sa-bench's --use-chat-template: the template's tokens are part of the input length, so
    # the random part is drawn around the nominal length less them (the range ratio included)
    nominal = spec.isl - _overhead(spec)
    isl = int(draw_lengths(nominal, spec.range_ratio, spec.range_mode, rng, 1)[0])
    osl = int(draw_lengths(spec.osl, spec.range_ratio, spec.range_mode, rng, 1)[0])
    return isl, osl


def _overhead(spec: RandomWorkload | SharedPrefixWorkload) -> int:
    if spec.chat_template is None or spec.tokenizer is None:
        return 0
    return template_overhead(spec.chat_template, spec.tokenizer)


def _framed(
    spec: RandomWorkload | SharedPrefixWorkload, tok: Any, text: str, length: int
) -> tuple[str, int]:
    """The text as a chat turn when the workload has a template, and its length in tokens."""
    if spec.chat_template is None or spec.tokenizer is None:
        return text, length
    framed = wrapper(spec.chat_template, spec.tokenizer)(text)
    return framed, len(_encode(tok, framed))


def _random_prompt(spec: RandomWorkload, index: int, seed: int) -> Prompt:
    rng = np.random.default_rng([seed, index])
    isl, osl = _lengths(spec, rng)
    ids = _token_ids(rng, isl, spec.id_low, spec.id_high)
    if spec.tokenizer is None:
        return Prompt(index, ids.tolist(), isl, osl)
    tok = load_tokenizer(spec.tokenizer)
    text, actual = _framed(spec, tok, *text_of_length(tok, ids, isl, rng))
    return Prompt(index, text, actual, osl)


def _shared_prefix_prompt(spec: SharedPrefixWorkload, index: int, seed: int) -> Prompt:
    group = index % spec.groups
    prefix_rng = np.random.default_rng([seed, _PREFIX_STREAM + group])
    prefix = _token_ids(prefix_rng, spec.prefix_len, spec.id_low, spec.id_high)
    rng = np.random.default_rng([seed, index])
    isl, osl = _lengths(spec, rng)
    suffix = _token_ids(rng, isl, spec.id_low, spec.id_high)
    if spec.tokenizer is None:
        return Prompt(index, prefix.tolist() + suffix.tolist(), spec.prefix_len + isl, osl)
    tok = load_tokenizer(spec.tokenizer)
    prefix_text, n_prefix = text_of_length(tok, prefix, spec.prefix_len, prefix_rng)
    suffix_text, n_suffix = text_of_length(tok, suffix, isl, rng)
    text, actual = _framed(spec, tok, prefix_text + " " + suffix_text, n_prefix + n_suffix)
    return Prompt(index, text, actual, osl)


def text_of_length(
    tok: Any, ids: np.ndarray, target: int, rng: np.random.Generator
) -> tuple[str, int]:
    """Decode ids to text and re-encode until the text is `target` tokens (best effort).

    Ids are taken modulo the base vocabulary, without the added (special) tokens, as
    sa-bench takes them modulo `tokenizer.vocab_size`: a special token decodes to nothing,
    so one drawn would shorten the text and its tail would be redrawn, and a prompt would
    no longer start with the text of its own first ids (a shared prefix, sent twice, must
    be the same text both times)."""
    vocab = max(2, int(tok.get_vocab_size(with_added_tokens=False)))
    current = [int(i) % vocab for i in ids]
    best_text, best_len = "", -1
    for _ in range(12):
        text = tok.decode(current)
        encoded = tok.encode(text, add_special_tokens=False).ids
        if abs(len(encoded) - target) < abs(best_len - target):
            best_text, best_len = text, len(encoded)
        if len(encoded) == target:
            break
        if len(encoded) > target:
            current = encoded[:target]
        else:
            extra = rng.integers(0, vocab, size=target - len(encoded))
            current = list(encoded) + [int(i) for i in extra]
    return best_text, best_len


def _file_rows(spec: FileWorkload, needed: int) -> list[tuple[list[int] | str, int | None]]:
    """The dataset's rows; of a JSONL file, only its first `needed` (prompt k uses row
    k mod rows, so the rows past the last index asked for are never used), read a line at
    a time: a bad line is refused without reading the rest of a large file."""
    if spec.format == "sharegpt":
        raw = read_file(spec.path, MAX_DATA_BYTES, what="dataset", option="--dataset")
        rows = _sharegpt_rows(spec, raw)
    else:
        rows = _jsonl_rows(spec, needed)
    if not rows:
        raise InputError("dataset has no usable prompts", location=Location(file=spec.path))
    return rows


def _jsonl_rows(spec: FileWorkload, needed: int) -> list[tuple[list[int] | str, int | None]]:
    rows: list[tuple[list[int] | str, int | None]] = []
    lines = iter_lines(spec.path, MAX_DATA_BYTES, what="dataset", option="--dataset")
    for lineno, text in lines:
        if len(rows) >= needed:
            break
        for line in text.splitlines():
            if not line.strip():
                continue
            rows.append(_jsonl_row(spec, line, Location(file=spec.path, line=lineno)))
    return rows


def _jsonl_row(
    spec: FileWorkload, line: bytes, where: Location
) -> tuple[list[int] | str, int | None]:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc}", location=where) from None
    prompt = obj.get("prompt") if isinstance(obj, dict) else None
    if not isinstance(prompt, str | list) or not prompt:
        raise InputError("each line needs a non-empty `prompt`", location=where)
    out = obj.get("output_len")
    if out is not None and (not isinstance(out, int) or out <= 0):
        raise InputError("`output_len` must be a positive integer", location=where)
    return prompt, out


def _sharegpt_rows(spec: FileWorkload, raw: bytes) -> list[tuple[list[int] | str, int | None]]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc}", location=Location(file=spec.path)) from None
    if not isinstance(data, list):
        raise InputError("a ShareGPT file is a JSON list", location=Location(file=spec.path))
    tok = load_tokenizer(spec.tokenizer) if spec.tokenizer else None
    rows: list[tuple[list[int] | str, int | None]] = []
    for item in data:
        turns = item.get("conversations") if isinstance(item, dict) else None
        if not isinstance(turns, list) or len(turns) < 2:
            continue
        human, reply = turns[0].get("value"), turns[1].get("value")
        if not isinstance(human, str) or not isinstance(reply, str) or not human:
            continue
        out = len(tok.encode(reply, add_special_tokens=False).ids) if tok else None
        rows.append((human, out))
    return rows


def _file_prompt(
    spec: FileWorkload, rows: list[tuple[list[int] | str, int | None]], index: int
) -> Prompt:
    prompt, row_out = rows[index % len(rows)]
    out = spec.osl or row_out
    if not out:
        raise InputError(
            "dataset rows carry no output length",
            location=Location(file=spec.path),
            hint="pass --osl, or a --tokenizer to measure the ShareGPT replies",
        )
    if isinstance(prompt, list):
        return Prompt(index, prompt, len(prompt), out)
    tok = load_tokenizer(spec.tokenizer) if spec.tokenizer else None
    n_in = len(tok.encode(prompt, add_special_tokens=False).ids) if tok else 0
    return Prompt(index, prompt, n_in, out)
