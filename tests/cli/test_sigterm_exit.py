"""After SIGTERM the CLI exits without walking its heap: the interpreter's last garbage
collection was most of a `run`'s exit on a loaded machine (3.2 s of 3.8 s), and whoever sent
SIGTERM (a CI timeout, Slurm) SIGKILLs after a grace."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

# A heap like a long command's (objects kept alive in reference cycles), then the exit.
PROGRAM = """
import sys, time
from inferbench.core.lifetime import exit_promptly
heap = []
for i in range(600_000):
    a = {"i": i}
    a["self"] = [a]
    heap.append(a)
if sys.argv[1] == "prompt":
    exit_promptly()
print("exiting", flush=True)
"""


def _exit_time(mode: str) -> float:
    proc = subprocess.Popen(
        [sys.executable, "-c", PROGRAM, mode], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "exiting\n"
    start = time.monotonic()
    assert proc.wait(timeout=120) == 0
    return time.monotonic() - start


@pytest.mark.slow
def test_exit_promptly_skips_the_final_collection() -> None:
    plain, prompt = _exit_time("plain"), _exit_time("prompt")
    print(f"exit: {plain:.2f} s plain, {prompt:.2f} s prompt")
    assert prompt < plain / 2, (prompt, plain)
