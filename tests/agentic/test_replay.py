"""A trace of known structure, replayed against a recording loopback server."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import orjson
import pytest

from inferbench.bench.agentic.api import run_replay
from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.settings import Endpoint
from inferbench.bench.traces.load import load_traces
from inferbench.cli.main import main

from .recording_server import recording_server

# session a: 3 root turns, a fork of two subagents after turn 2 (one shares 100 tokens)
TRACE = [
    {"session": "a", "input": 100, "output": 10},
    {"session": "a", "input": 20, "output": 5, "delay": 0.2},
    {"session": "a", "subagent": "x", "input": 30, "output": 4, "shared_prefix": 100},
    {"session": "a", "subagent": "x", "input": 7, "output": 3, "delay": 0.1},
    {"session": "a", "input": 9, "output": 6, "delay": 0.15},
    {"session": "b", "input": 50, "output": 8},
    {"session": "b", "input": 5, "output": 2, "delay": 0.1},
]
# prompt lengths in send order for one lane: a1, a2, x1, x2, a3, b1, b2
EXPECTED_LENGTHS = [100, 130, 130, 141, 144, 50, 63]
# client reuse: a2 repeats a1 (100), x1 repeats a1's first 100, x2 repeats x1 (130),
# a3 repeats a2 (130), b2 repeats b1 (50)
EXPECTED_REUSE = 100 + 100 + 130 + 130 + 50


def _write(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "trace.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_replay_sends_exactly_the_conversation(tmp_path: Path) -> None:
    traces = load_traces(_write(tmp_path, TRACE))
    with recording_server() as srv:
        options = ReplayOptions(lanes=1, sessions=2, delay_scale=1.0)
        outcome = run_replay(Endpoint(base_url=srv.url, model="m"), traces, options)
    seen = srv.seen
    assert [len(s.prompt) for s in seen] == EXPECTED_LENGTHS
    assert [s.max_tokens for s in seen] == [10, 5, 4, 3, 6, 8, 2]
    a1, a2, x1, x2, a3, b1, b2 = (s.prompt for s in seen)
    assert a2[:100] == a1 and a3[:130] == a2  # the whole conversation so far, then new input
    assert x1[:100] == a1[:100] and x1[100:] != a2[100:130]  # a fresh subagent conversation
    assert x2[:130] == x1
    assert b1[:50] != a1[:50]  # another session shares nothing
    # recorded idle gaps: after the previous response of the same conversation ended
    assert 0.2 <= a2_gap(seen, 1, 0) < 0.35
    assert 0.1 <= a2_gap(seen, 3, 2) < 0.25
    assert 0.15 <= a2_gap(seen, 4, 3) < 0.3  # the parent waits for the fork to end
    block = outcome.result.inferbench.agentic
    assert block is not None
    assert block.reused_prompt_tokens == EXPECTED_REUSE
    assert block.prompt_tokens == sum(EXPECTED_LENGTHS)
    assert abs(block.client_reuse_share - EXPECTED_REUSE / sum(EXPECTED_LENGTHS)) < 1e-12
    assert block.sessions.completed == 2 and block.sessions.failed == 0
    assert block.subagent_requests == 2
    assert [t.turn for t in block.per_turn] == [1, 2, 3]
    # the server agrees: its prefix counters over the window match the client's count
    assert block.server is not None and block.server.engine == "vllm"
    assert block.server.prefix_cache_hits == EXPECTED_REUSE
    assert outcome.result.sa.completed == 7
    assert outcome.passed


def a2_gap(seen: list, later: int, earlier: int) -> float:
    return seen[later].arrived - seen[earlier].ended


def test_cache_bust_changes_tokens_between_runs(tmp_path: Path) -> None:
    traces = load_traces(_write(tmp_path, TRACE[:2]))
    prompts = []
    for bust in (True, True, False, False):
        with recording_server() as srv:
            options = ReplayOptions(lanes=1, sessions=1, delay_scale=0, cache_bust=bust)
            run_replay(Endpoint(base_url=srv.url, model="m"), traces, options)
        prompts.append(srv.seen[0].prompt)
    assert prompts[0] != prompts[1]
    assert prompts[2] == prompts[3]


def test_failed_session_counts_once_and_the_lane_goes_on(tmp_path: Path) -> None:
    traces = load_traces(_write(tmp_path, TRACE))
    with recording_server(fail={2}) as srv:  # session a's second turn fails
        options = ReplayOptions(lanes=1, sessions=2, delay_scale=0)
        outcome = run_replay(Endpoint(base_url=srv.url, model="m"), traces, options)
    # a1, a2 (failed: session a ends), then session b replays in full
    assert [len(s.prompt) for s in srv.seen] == [100, 130, 50, 63]
    block = outcome.result.inferbench.agentic
    assert block is not None
    assert (block.sessions.started, block.sessions.completed, block.sessions.failed) == (2, 1, 1)
    failure = block.sessions.failures[0]
    assert (failure.trace, failure.stream, failure.turn) == ("a", "main", 2)
    assert "http_status" in failure.error
    assert outcome.result.inferbench.failed == 1


def test_duration_and_warmup(tmp_path: Path) -> None:
    traces = load_traces(_write(tmp_path, TRACE[5:]))
    with recording_server() as srv:
        options = ReplayOptions(lanes=3, duration_s=0.5, warmup_sessions=1, delay_scale=1)
        outcome = run_replay(Endpoint(base_url=srv.url, model="m"), traces, options)
    block = outcome.result.inferbench.agentic
    assert block is not None
    assert block.warmup_requests == 6  # one session of 2 turns per lane, without delays
    assert 0.5 <= block.window_s < 1.5
    assert block.sessions.started >= 3
    assert outcome.result.inferbench.load.concurrency == 3


def test_a_dead_server_stops_the_replay_early(tmp_path: Path) -> None:
    import socket

    traces = load_traces(_write(tmp_path, TRACE))
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    options = ReplayOptions(lanes=4, duration_s=3600, delay_scale=0, scrape_metrics=False)
    outcome = run_replay(Endpoint(base_url=f"http://127.0.0.1:{port}", model="m"), traces, options)
    block = outcome.result.inferbench
    assert not outcome.passed and not block.complete
    assert "stopped early" in (block.incomplete_reason or "")
    assert block.agentic is not None and block.agentic.requests < 200


def test_sessions_draw_traces_from_one_shared_queue(tmp_path: Path) -> None:
    """4 lanes, 4 traces of 1 to 4 turns: each trace is replayed equally often (a lane that
    drew a short trace draws again sooner), not each lane stuck on one trace."""
    rows = [
        {"session": name, "input": 10, "output": 2}
        for name, turns in (("s1", 1), ("s2", 2), ("s3", 3), ("s4", 4))
        for _ in range(turns)
    ]
    traces = load_traces(_write(tmp_path, rows))
    with recording_server() as srv:
        options = ReplayOptions(lanes=4, sessions=16, delay_scale=0.0, scrape_metrics=False)
        outcome = run_replay(Endpoint(base_url=srv.url, model="m"), traces, options)
    block = outcome.result.inferbench.agentic
    assert block is not None
    per_trace = Counter(s.trace for s in outcome.run.sessions)
    assert sorted(per_trace.values()) == [4, 4, 4, 4], per_trace


def test_the_window_start_scrape_precedes_every_measured_request(tmp_path: Path) -> None:
    """A scrape that takes 0.3 s: no lane sends before it is read, so the server's counters
    cover every prompt token of the window (the first requests were once missed)."""
    traces = load_traces(_write(tmp_path, TRACE))
    with recording_server(metrics_delay_s=0.3) as srv:
        options = ReplayOptions(lanes=2, sessions=2, delay_scale=0.0)
        outcome = run_replay(Endpoint(base_url=srv.url, model="m"), traces, options)
    block = outcome.result.inferbench.agentic
    assert block is not None and block.server is not None
    assert block.server.prefix_cache_queries == block.prompt_tokens


def test_every_request_carries_its_conversations_session_ids(tmp_path: Path) -> None:
    """Routers keep a session on one worker by its id: the same over a conversation's turns,
    a subagent its own with its parent's, and no id shared by two sessions."""
    traces = load_traces(_write(tmp_path, TRACE))
    with recording_server() as srv:
        options = ReplayOptions(lanes=1, sessions=2, delay_scale=0.0)
        run_replay(Endpoint(base_url=srv.url, model="m"), traces, options)
    a1, a2, x1, x2, a3, b1, b2 = (s.headers for s in srv.seen)
    root = a1["x-dynamo-session-id"]
    assert {h["x-dynamo-session-id"] for h in (a1, a2, a3)} == {root}
    assert {h["x-correlation-id"] for h in (a1, a2, a3)} == {root}
    assert x1["x-dynamo-session-id"] == x2["x-dynamo-session-id"] != root
    assert x1["x-dynamo-parent-session-id"] == root and "x-dynamo-parent-session-id" not in a2
    assert (
        b1["x-dynamo-session-id"]
        == b2["x-dynamo-session-id"]
        not in (root, x1["x-dynamo-session-id"])
    )


def test_replay_prints_lines_in_a_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Under pytest stdout is not a terminal: progress is timestamped lines on stderr, the
    last one with the request count the library reported."""
    trace = _write(tmp_path, TRACE)
    with recording_server() as srv, pytest.raises(SystemExit) as exit_:
        main(["replay", "--base-url", srv.url, "--model", "m", "--trace", str(trace),
              "--concurrency", "1", "--sessions", "2"])  # fmt: skip
    err = capsys.readouterr().err
    assert exit_.value.code == 0, err
    line = re.compile(r"^\d\d:\d\d:\d\d \+\d+s (.*)$")
    said = [m.group(1) for m in map(line.match, err.splitlines()) if m]
    assert said == [
        "replay: 1 lanes, 2 sessions",
        f"replay: 1 lanes, 2 sessions: {len(EXPECTED_LENGTHS)} requests, 0 failed: done",
    ]


def test_duration_bounds_the_replay_on_a_stalled_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every turn stalls after one chunk (request timeout: the default 600 s). The window
    still ends at its duration and the grace after it, each turn in flight a failed turn."""
    import time

    import inferbench.bench.agentic.replay as replay_module
    from harness.testserver import ServerConfig, serve_in_thread

    monkeypatch.setattr(replay_module, "DURATION_GRACE_S", 1.0)  # 30 s in real runs
    traces = load_traces(_write(tmp_path, TRACE[5:]))
    with serve_in_thread(ServerConfig(fault="stall", itl_s=0.01)) as srv:
        options = ReplayOptions(lanes=2, duration_s=0.5)
        started = time.monotonic()
        outcome = run_replay(Endpoint(base_url=f"http://127.0.0.1:{srv.port}", model="m"),
                             traces, options)  # fmt: skip
        took = time.monotonic() - started
    assert took < 10, took  # not 600 s
    block = outcome.result.inferbench
    assert outcome.result.sa.completed == 0 and block.failed == 2  # one turn per lane
    assert {k: v for k, v in block.failures.items() if v} == {"interrupted": 2}
