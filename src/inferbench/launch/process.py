"""One server process: spawn in its own process group, wait for health, stop the group.

Health is detected two ways at once so the wait ends as soon as the server is ready and
fails as soon as it dies: the log is scanned for the server's ready line (the simulator
prints its URL; port 0 is learned from it) and the health URL is polled every `poll_s`.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

from inferbench.core.lifetime import child_setup
from inferbench.core.redact import Redactor
from inferbench.core.status import JobStatus
from inferbench.launch.outcome import LaunchFailure
from inferbench.launch.plan import ProcessSpec

TAIL_BYTES = 4000


def log_tail(path: Path, limit: int = TAIL_BYTES) -> str:
    """The end of a log, for outcome.json and the run's table: a configured API key in it
    (a server logging its requests' headers) is redacted."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return Redactor.from_env(os.environ)(text)


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _probe(url: str, timeout: float) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return 200 <= resp.status < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


class ServerProcess:
    """A started server. Use as a context manager so it is always stopped."""

    def __init__(self, spec: ProcessSpec, cwd: Path, log_path: Path) -> None:
        self.spec = spec
        self.cwd = cwd
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.base_url: str | None = None
        self.started_at = 0.0
        self.ready_at = 0.0
        self.log_offset = 0

    def start(self) -> None:
        if self.spec.port and not port_is_free(self.spec.host, self.spec.port):
            raise LaunchFailure(
                JobStatus.PORT_IN_USE, f"port {self.spec.host}:{self.spec.port} is already in use"
            )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **self.spec.env}
        with self.log_path.open("ab") as log:
            # the log is kept across attempts: scan only what this process writes
            log.write(f"--- inferbench: starting {self.spec.name} ---\n".encode())
            log.flush()
            self.log_offset = log.tell()
            self.started_at = time.monotonic()
            try:
                self.proc = self._spawn(env, log)
            except OSError as exc:
                raise LaunchFailure(
                    JobStatus.START_FAILED, f"cannot start {self.spec.argv[0]!r}: {exc.strerror}"
                ) from None

    def _spawn(self, env: dict[str, str], log: IO[bytes]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            list(self.spec.argv),
            cwd=self.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # SIGTERM, not SIGKILL: a server stops its own workers on SIGTERM
            preexec_fn=child_setup(signal.SIGTERM),
        )

    def _ready_url(self, pattern: re.Pattern[str] | None, seen: list[int]) -> str | None:
        if self.spec.health_url is not None:
            return self.spec.health_url.removesuffix(self.spec.health_path)
        if pattern is None:
            return None
        with contextlib.suppress(OSError), self.log_path.open("rb") as handle:
            handle.seek(seen[0])
            chunk = handle.read()
            cut = chunk.rfind(b"\n") + 1
            match = pattern.search(chunk[:cut].decode("utf-8", "replace"))
            seen[0] += cut
            if match:
                return match.group(1).rstrip("/")
        return None

    def wait_healthy(self, timeout_s: float, poll_s: float = 0.02) -> str:
        """Block until the health probe answers 2xx; fail fast if the process exits."""
        assert self.proc is not None, "start() first"
        pattern = re.compile(self.spec.ready_pattern) if self.spec.ready_pattern else None
        deadline = time.monotonic() + timeout_s
        seen = [self.log_offset]
        base: str | None = None
        while True:
            code = self.proc.poll()
            if code is not None:
                raise LaunchFailure(
                    JobStatus.SERVER_CRASHED,
                    f"{self.spec.name} exited with status {code} before it became healthy",
                    log_tail(self.log_path),
                )
            base = base or self._ready_url(pattern, seen)
            if base and _probe(base + self.spec.health_path, timeout=max(poll_s, 0.5)):
                self.base_url = base
                self.ready_at = time.monotonic()
                return base
            if time.monotonic() >= deadline:
                raise LaunchFailure(
                    JobStatus.UNHEALTHY,
                    f"{self.spec.name} not healthy after {timeout_s:g} s",
                    log_tail(self.log_path),
                )
            time.sleep(poll_s)

    def exited(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM the whole process group, then SIGKILL what is left after `grace_s`."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=grace_s)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # stragglers of the group, too
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
