"""Shared pytest configuration."""

from __future__ import annotations

import itertools
import json
import os
import string
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session", autouse=True)
def _parse_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """inferbench's parse cache (and CLI subprocesses') writes under the session's tmp dir,
    never into the user's cache."""
    old = os.environ.get("INFERBENCH_CACHE_DIR")
    os.environ["INFERBENCH_CACHE_DIR"] = str(tmp_path_factory.mktemp("inferbench-cache"))
    yield
    if old is None:
        os.environ.pop("INFERBENCH_CACHE_DIR", None)
    else:
        os.environ["INFERBENCH_CACHE_DIR"] = old


SIM_MODEL = "meta-llama/Llama-3.1-8B-Instruct"


@contextmanager
def _sim_serve(isl: int, osl: int, max_model_len: int) -> Iterator[str]:
    """`inferbench sim serve` (Llama-3.1-8B on an H100) on a free loopback port: its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferbench.cli.main", "sim", "serve", "--port", "0",
         "--model", SIM_MODEL, "--gpu", "h100", "--isl", str(isl), "--osl", str(osl),
         "--max-model-len", str(max_model_len)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "listening on" in line, line
    try:
        yield line.strip().rsplit(" ", 1)[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def sim_serve() -> Callable[[int, int, int], AbstractContextManager[str]]:
    """A simulator server to test a client against: `with sim_serve(isl, osl, mml) as url`."""
    return _sim_serve


def _write_tokenizer(folder: Path, config: dict[str, Any] | None = None) -> Path:
    """A word-level tokenizer.json in `folder` (and `config` as its tokenizer_config.json).

    Its words are three letters, so decoded text is four characters a token with the
    separating space: a server that counts words (the bench test server) or characters / 4
    (`inferbench sim serve`) counts what the tokenizer does. The chat markers of the test
    templates and DeepSeek-V4's framing tokens are special tokens, one token each.
    """
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers

    from inferbench.bench import deepseek_v4

    letters = string.ascii_lowercase
    words = ["".join(t) for t in itertools.product(letters, repeat=3)]
    vocab = {"<u>": 0} | {w: i + 1 for i, w in enumerate(words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<u>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    markers = ["<s>", "</s>", "<|user|>", "<|assistant|>", *deepseek_v4.SPECIAL_TOKENS]
    tok.add_special_tokens([AddedToken(m, special=True) for m in dict.fromkeys(markers)])
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    if config is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


@pytest.fixture(scope="session")
def write_tokenizer() -> Callable[..., Path]:
    """`write_tokenizer(folder, config=None)`: a small local tokenizer (see `_write_tokenizer`)."""
    return _write_tokenizer
