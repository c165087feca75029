"""The duty-cycle throttler the regression gate slows a real server with (harness.throttle):
a busy process group is stopped for the asked share of the wall time, and always ends
running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.throttle import slowdown_fraction, throttled

pytestmark = pytest.mark.integration


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.fixture
def busy() -> Iterator[subprocess.Popen[bytes]]:
    # a parent and a child in one new session: the throttle must stop the whole group
    code = "import os, time\nos.fork()\nwhile True: pass"
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    yield proc
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def test_the_group_is_stopped_for_the_fraction_and_left_running(
    busy: subprocess.Popen[bytes],
) -> None:
    seen_stopped = False
    with throttled(busy.pid, 0.3, period_s=0.05) as stats:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            seen_stopped = seen_stopped or _state(busy.pid) == "T"
            time.sleep(0.003)
    assert seen_stopped
    assert 0.2 <= stats.fraction <= 0.4, stats
    assert stats.cycles >= 10, stats
    assert _state(busy.pid) != "T"


def test_an_exception_in_the_block_leaves_the_group_running(busy: subprocess.Popen[bytes]) -> None:
    with pytest.raises(RuntimeError), throttled(busy.pid, 0.9, period_s=0.05):
        time.sleep(0.2)
        raise RuntimeError("the measurement failed")
    time.sleep(0.05)
    assert _state(busy.pid) != "T"


def test_the_fraction_of_a_slowdown_factor() -> None:
    assert slowdown_fraction(1.0) == 0.0
    assert slowdown_fraction(1.1) == pytest.approx(0.0909, abs=1e-4)
    with pytest.raises(ValueError, match="at least 1"):
        slowdown_fraction(0.9)
    with pytest.raises(ValueError, match=r"\[0, 1\)"), throttled(1, 1.0):
        pass
