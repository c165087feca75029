"""Shared bench fixtures: a tiny local tokenizer and a loopback test server."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import testserver
from harness.testserver import ServerConfig, TestServer, serve_in_thread


@pytest.fixture(scope="session")
def word_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A word-level tokenizer.json: one token per whitespace word, as the test server counts."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0} | {f"w{i}": i + 1 for i in range(5000)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    tok.save(str(path))
    return path


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[TestServer]:
    """A test server in a thread; parametrise with `@pytest.mark.server_config(...)`."""
    marker = request.node.get_closest_marker("server_config")
    config = ServerConfig(**marker.kwargs) if marker else ServerConfig()
    with serve_in_thread(config) as srv:
        yield srv


class ServerProcess:
    """`benchmarks/harness/testserver.py` in its own process (no shared GIL)."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, testserver.__file__, *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("port "), line
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}"

    def summary(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/summary", timeout=10) as resp:
            data: dict[str, Any] = json.loads(resp.read())
        return data

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture
def server_process() -> Iterator[Callable[..., ServerProcess]]:
    started: list[ServerProcess] = []

    def start(*args: str) -> ServerProcess:
        started.append(ServerProcess(*args))
        return started[-1]

    yield start
    for srv in started:
        srv.stop()
