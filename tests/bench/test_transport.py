"""The fast transport's read paths agree, and its receive stamps are when bytes arrived."""

from __future__ import annotations

import asyncio
import random
import time

import numpy as np
import orjson
import pytest

from harness.testserver import ServerConfig, serve_in_thread
from inferbench.bench.http import _CHUNKED, FastTransport, TransportError, _Conn
from inferbench.bench.records import FailureKind
from inferbench.bench.sse import StreamState


def _event(obj: object) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def _frame(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _stream_events() -> list[bytes]:
    role = _event({"choices": [{"delta": {"role": "assistant", "content": ""}}]})
    events = [role, b": keep-alive\n\n"]
    for k in range(1, 6):
        events.append(
            _event(
                {
                    "choices": [{"delta": {"content": "x" * k}, "finish_reason": None}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": k * (k + 1) // 2},
                }
            )
        )
    events.append(b"event: message\ndata: " + orjson.dumps({"choices": []}) + b"\n\n")
    events.append(_event({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 15}}))
    events.append(b"data: [DONE]\n\n")
    return events


def _feed(conn: _Conn, reads: list[bytes]) -> StreamState:
    state = StreamState()
    conn.status, conn.mode, conn.state = 200, _CHUNKED, state
    conn.fut = asyncio.new_event_loop().create_future()
    for t, data in enumerate(reads):
        conn.feed(data, float(t))
    assert conn.fut.done() and conn.fut.exception() is None
    return state


@pytest.mark.parametrize("split", ["whole", "per_event", "two_events_per_chunk", "random"])
def test_read_paths_agree(split: str) -> None:
    """However the bytes are framed and cut into reads, the stream says the same."""
    events = _stream_events()
    if split == "two_events_per_chunk":
        frames = [_frame(b"".join(events[i : i + 2])) for i in range(0, len(events), 2)]
    else:
        frames = [_frame(e) for e in events]
    body = b"".join(frames) + b"0\r\n\r\n"
    if split == "whole":
        reads = [body]
    elif split == "random":
        rng = random.Random(7)
        cuts = sorted(rng.sample(range(1, len(body)), 25))
        reads = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    else:
        reads = [*frames, b"0\r\n\r\n"]
    state = _feed(_Conn(), reads)
    assert state.chunk_tokens == [1, 2, 3, 4, 5]
    assert state.output_tokens == 15 and state.prompt_tokens == 3
    assert state.done and state.per_chunk_usage
    if split == "per_event":  # each content chunk stamped with its own read
        assert state.chunk_times == [2.0, 3.0, 4.0, 5.0, 6.0]


def test_fast_path_rejects_what_it_cannot_parse() -> None:
    """A read that looks like one event but is an error event still fails the stream."""
    conn = _Conn()
    state = StreamState()
    conn.status, conn.mode, conn.state = 200, _CHUNKED, state
    conn.fut = asyncio.new_event_loop().create_future()
    conn.feed(_frame(b'data: {"choices": [\n\n'), 0.0)
    assert conn.fut.done() and conn.fut.exception() is not None
    assert not conn.keep_alive


async def _one_stream(port: int, stamps: bool) -> tuple[StreamState, float]:
    transport = FastTransport(f"http://127.0.0.1:{port}/v1/completions", {}, 5.0, stamps)
    state = StreamState()
    body = orjson.dumps({"model": "m", "prompt": [1, 2, 3], "max_tokens": 20, "stream": True})
    sent = time.monotonic()
    status, _ = await transport.stream(body, "rid-0-0", state)
    await transport.close()
    assert status == 200
    return state, sent


@pytest.mark.integration
@pytest.mark.parametrize("kernel", [True, False])
def test_receive_stamps_match_the_server_send_stamps(kernel: bool) -> None:
    with serve_in_thread(ServerConfig(ttft_s=0.02, itl_s=0.005)) as srv:
        state, sent = asyncio.run(_one_stream(srv.port, kernel))
        server_sent = srv.stats.stamps["rid-0-0"]
    assert len(state.chunk_times) == len(server_sent) == 20
    errors = [r - s for r, s in zip(state.chunk_times, server_sent, strict=True)]
    # an idle client reads within a fraction of a millisecond; kernel stamps may even
    # precede the server's own stamp, taken after its write returned. On a loaded machine
    # either thread can lose its core for tens of ms at any chunk: the median holds the
    # claim, the bounds on every chunk only catch a wrong clock or a lost chunk.
    assert -0.002 < float(np.median(errors)) < 0.005, errors
    assert all(-0.1 < e < 0.25 for e in errors), errors
    assert state.chunk_times[0] - sent >= 0.019  # TTFT is never shorter than the server's


@pytest.mark.integration
def test_dns_and_tls_failures_are_connect_failures() -> None:
    async def attempt(url: str) -> TransportError:
        transport = FastTransport(url, {}, 5.0)
        with pytest.raises(TransportError) as exc:
            await transport.stream(b"{}", "r", StreamState())
        await transport.close()
        return exc.value

    dns = asyncio.run(attempt("http://no-such-host.invalid:8000/v1/completions"))
    assert dns.kind is FailureKind.CONNECT and "gaierror" in str(dns)
    with serve_in_thread(ServerConfig()) as srv:  # plain HTTP answering a TLS handshake
        tls = asyncio.run(attempt(f"https://127.0.0.1:{srv.port}/v1/completions"))
    assert tls.kind is FailureKind.CONNECT and "TLS" in str(tls)


def test_worker_pipe_stays_blocking_after_the_stop_watch() -> None:
    """uvloop makes a watched fd non-blocking; the worker's record pipe must not be, or a
    batch bigger than the pipe buffer fails half-written (seen at 8,192 streams a worker)."""
    import multiprocessing as mp
    import os

    from inferbench.bench.runner import _event_loop_runner, _PipeOutbox

    parent, child = mp.Pipe()
    outbox = _PipeOutbox(child)
    parent.send(("start", 0.0))

    async def go() -> bool:
        await outbox.ready()
        return os.get_blocking(child.fileno())

    assert _event_loop_runner()(go())
    assert parent.recv() == ("ready",)
    big = b"x" * (4 << 20)  # far above a pipe buffer, while nobody reads yet
    import threading

    sender = threading.Thread(target=child.send, args=(("records", big),))
    sender.start()
    assert parent.recv() == ("records", big)
    sender.join()
