"""Chat-text mode: the conversation as chat messages (user turns, recorded answers), sent to a
recording loopback server's /v1/chat/completions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from inferbench.bench.agentic.api import run_replay
from inferbench.bench.agentic.chat import ChatConversation, TextOfIds
from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.settings import ApiKind, Endpoint
from inferbench.bench.traces.load import load_traces
from inferbench.core.errors import InputError

from .recording_server import recording_server
from .test_replay import EXPECTED_LENGTHS, TRACE, _write

# in send order (see test_replay.TRACE): each turn's messages as (role, words)
EXPECTED_MESSAGES = [
    [("user", 100)],  # a1
    [("user", 100), ("assistant", 10), ("user", 20)],  # a2: a1, a1's answer, the new input
    [("user", 130)],  # x1: a subagent's own conversation (100 shared tokens + 30)
    [("user", 130), ("assistant", 4), ("user", 7)],  # x2
    [("user", 100), ("assistant", 10), ("user", 20), ("assistant", 5), ("user", 9)],  # a3
    [("user", 50)],  # b1
    [("user", 50), ("assistant", 8), ("user", 5)],  # b2
]


@pytest.fixture
def tokenizer(tmp_path: Path, write_tokenizer: Callable[..., Path]) -> Path:
    return write_tokenizer(tmp_path / "tok") / "tokenizer.json"


def test_text_of_ids_never_draws_a_special_token(tokenizer: Path) -> None:
    # ids past the base vocabulary, where the tokenizer's special tokens sit: each must still
    # give one word, so a prompt's text starts with the text of its own first ids
    text = TextOfIds(tokenizer)
    ids = np.arange(17_570, 17_600, dtype=np.int32)  # 26**3 + 1 words, then the markers
    words = text(ids).split()
    assert len(words) == len(ids) and "<s>" not in words
    for n in (1, 7, 8, 29):
        assert text(ids[:n]).split() == words[:n]


def test_chat_mode_sends_the_conversation_as_messages(tmp_path: Path, tokenizer: Path) -> None:
    traces = load_traces(_write(tmp_path, TRACE))
    with recording_server() as srv:
        endpoint = Endpoint(base_url=srv.url, model="m", api=ApiKind.CHAT)
        options = ReplayOptions(lanes=1, sessions=2, delay_scale=0.0)
        outcome = run_replay(endpoint, traces, options, tokenizer=tokenizer)
    sent = [s.messages for s in srv.seen]
    assert all(m is not None for m in sent)
    shape = [[(m["role"], len(m["content"].split())) for m in ms or []] for ms in sent]
    assert shape == EXPECTED_MESSAGES
    assert [sum(n for _, n in turn) for turn in shape] == EXPECTED_LENGTHS
    a1, a2, x1, x2, a3, b1, b2 = (ms or [] for ms in sent)
    # earlier messages are sent again verbatim, so a server's prefix cache can serve them
    assert a2[:1] == a1 and a3[:3] == a2 and x2[:1] == x1 and b2[:1] == b1
    assert x1[0]["content"].split()[:100] == a1[0]["content"].split()  # the shared prefix
    assert b1[0]["content"] != a1[0]["content"][: len(b1[0]["content"])]
    # the server's word counts agree with the trace: no request failed its prompt check
    result = outcome.result
    assert outcome.passed and result.sa.completed == 7 and result.inferbench.failed == 0
    assert result.inferbench.endpoint.api is ApiKind.CHAT
    assert result.sa.tokenizer_id == str(tokenizer)
    assert result.sa.total_input_tokens == sum(EXPECTED_LENGTHS)
    # the server's prefix counter saw what the client expected to repeat
    block = result.inferbench.agentic
    assert block is not None and block.server is not None
    assert block.server.prefix_cache_hits == block.reused_prompt_tokens


def test_a_prompt_that_leaves_the_history_starts_after_its_last_repeated_answer(
    tokenizer: Path,
) -> None:
    chat = ChatConversation(TextOfIds(tokenizer))
    a, b, c = (np.arange(k, k + n, dtype=np.int32) for k, n in ((1000, 6), (2000, 3), (3000, 4)))
    assert [m["role"] for m in chat.messages(a, output=3)] == ["user"]
    roles = [m["role"] for m in chat.messages(np.concatenate([a, b, c]), output=2)]
    assert roles == ["user", "assistant", "user"]
    # the answer is repeated, the new user message is not: kept up to the answer
    other = np.arange(5000, 5003, dtype=np.int32)
    msgs = chat.messages(np.concatenate([a, b, other]), output=2)
    assert [(m["role"], len(m["content"].split())) for m in msgs] == [
        ("user", 6), ("assistant", 3), ("user", 3),
    ]  # fmt: skip
    # not even the first message is repeated: one user message, roles still alternate
    msgs = chat.messages(np.concatenate([other, a]), output=2)
    assert [(m["role"], len(m["content"].split())) for m in msgs] == [("user", 9)]


def test_chat_mode_needs_a_tokenizer(tmp_path: Path) -> None:
    traces = load_traces(_write(tmp_path, TRACE[:1]))
    endpoint = Endpoint(base_url="http://127.0.0.1:9", model="m", api=ApiKind.CHAT)
    with pytest.raises(InputError, match="needs a tokenizer"):
        run_replay(endpoint, traces, ReplayOptions(lanes=1, sessions=1))


def test_cli_chat_mode_without_tokenizer_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inferbench.cli.main import main

    path = _write(tmp_path, TRACE[:1])
    with pytest.raises(SystemExit) as info:
        main(["replay", "--base-url", "http://127.0.0.1:9", "--model", "m", "--trace", str(path),
              "--concurrency", "1", "--sessions", "1", "--endpoint", "chat"])  # fmt: skip
    assert info.value.code == 2
    assert "--tokenizer" in capsys.readouterr().err
