"""The process-group guard a tree's script runs under: its status is the script's, and a
SIGTERM (or its parent's death) ends everything the script started."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

GUARD = [sys.executable, "-m", "inferbench.launch.groupguard", str(os.getpid())]


def test_the_status_is_the_commands() -> None:
    assert subprocess.run([*GUARD, "sh", "-c", "exit 3"], timeout=30).returncode == 3
    killed = subprocess.run([*GUARD, "sh", "-c", "kill -USR1 $$"], timeout=30)
    assert killed.returncode == 128 + signal.SIGUSR1
    assert subprocess.run([*GUARD[:-1], "x"], capture_output=True, timeout=30).returncode == 2


def test_sigterm_ends_what_the_script_left_in_the_background(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    script = f"sleep 300 & echo $! > {pidfile}; wait"
    proc = subprocess.Popen([*GUARD, "bash", "-c", script], start_new_session=True)
    deadline = time.monotonic() + 30
    while not (pidfile.is_file() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    background = int(pidfile.read_text())
    os.kill(proc.pid, signal.SIGTERM)  # the guard alone, as a parent-death signal would
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    stat = Path(f"/proc/{background}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
