"""Progress in a log (stdout not a terminal): timestamped lines, at least every 10 s."""

from __future__ import annotations

import io
import re
import time
from datetime import datetime
from pathlib import Path

import pytest

from harness.testserver import ServerConfig, serve_in_thread
from inferbench.cli.progress import HEARTBEAT_S, LineProgress

from .clirun import run_cli

LINE = re.compile(r"^\d\d:\d\d:\d\d \+\d+s \S")


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_heartbeat_repeats_the_state_after_the_interval() -> None:
    clock, out = FakeClock(), io.StringIO()
    lines = LineProgress(out, clock=clock, wall=lambda: datetime(2025, 1, 2, 3, 4, 5))
    lines.state("job 1/2 k: running")
    lines.tick()
    assert out.getvalue() == ""  # nothing before the interval
    clock.now += HEARTBEAT_S - 0.5
    lines.tick()
    assert out.getvalue() == ""
    clock.now += 0.5
    lines.tick()
    assert _lines(out) == ["03:04:05 +10s job 1/2 k: running"]
    clock.now += 4
    lines.say("k conc 4: ok")  # a line resets the heartbeat
    clock.now += HEARTBEAT_S - 1
    lines.tick()
    assert len(_lines(out)) == 2
    clock.now += 1
    lines.state("job 2/2 m: running")
    lines.tick()
    assert _lines(out)[1:] == ["03:04:05 +14s k conc 4: ok", "03:04:05 +24s job 2/2 m: running"]


def test_the_thread_beats_while_entered() -> None:
    out = io.StringIO()
    with LineProgress(out, interval_s=0.05) as lines:
        lines.state("waiting")
        time.sleep(0.4)
    beats = _lines(out)
    assert len(beats) >= 3 and all(LINE.match(b) and b.endswith("waiting") for b in beats)
    count = len(beats)
    time.sleep(0.15)
    assert len(_lines(out)) == count  # stopped on exit


def test_a_closed_stream_does_not_stop_the_command() -> None:
    out = io.StringIO()
    out.close()
    LineProgress(out).say("nothing to see")


def test_bench_prints_point_lines_in_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve_in_thread(ServerConfig()) as srv:
        ran = run_cli(
            ["bench", "--base-url", f"http://127.0.0.1:{srv.port}", "--model", "m",
             "--isl", "16", "--osl", "4", "--concurrency", "2,4", "--num-prompts", "8",
             "--output", str(tmp_path / "out.json")],
            capsys,
        )  # fmt: skip
    assert ran.code == 0, ran.text
    lines = [line for line in ran.err.splitlines() if LINE.match(line)]
    assert any("conc2: started" in line for line in lines), ran.err
    assert any(line.endswith("conc4: 8/8 done") for line in lines), ran.err


def test_sim_estimate_prints_a_line_per_point(capsys: pytest.CaptureFixture[str]) -> None:
    ran = run_cli(
        ["sim", "estimate", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100",
         "--isl", "128", "--osl", "16", "--concurrency", "2,4", "--num-prompts", "8"],
        capsys,
    )  # fmt: skip
    assert ran.code == 0, ran.text
    lines = [line for line in ran.err.splitlines() if LINE.match(line)]
    assert [line.split(" ", 2)[2] for line in lines] == [
        "simulating concurrency 2 (1/2)",
        "simulating concurrency 2 (1/2): done",
        "simulating concurrency 4 (2/2)",
        "simulating concurrency 4 (2/2): done",
    ]
    assert not any(LINE.match(line) for line in ran.out.splitlines())  # stdout: the table
