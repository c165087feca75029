"""Sample GPU power beside a running point, in a separate process, into one CSV.

`detect_source` picks what this node has: a DCGM exporter URL when one is configured
(`INFERBENCH_DCGM_URL`), else nvidia-smi, else amd-smi on PATH; with none, the point
still runs and energy is marked unavailable with the reason. `PowerSampler` starts
`python -m inferbench.power.sampler SOURCE OUT INTERVAL` (stdlib + this package only, so
it runs on a compute node as well), and stops it with SIGTERM when the point ends; the
child flushes each sample as it arrives, so a killed sampler loses at most one line.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

from inferbench.core.lifetime import child_setup
from inferbench.power.parse import CSV_HEADER, ParseError, PowerCsvReader, parse_dcgm_metrics

NVIDIA_QUERY = "timestamp,index,power.draw,clocks.sm"
DEFAULT_INTERVAL_S = 0.1


@dataclass(frozen=True)
class PowerSource:
    kind: str  # nvidia-smi | amd-smi | dcgm
    target: str  # the executable, or the exporter's /metrics URL

    def spec(self) -> str:
        return f"{self.kind}={self.target}"


def detect_source(env: dict[str, str] | None = None) -> tuple[PowerSource | None, str]:
    """(the source to sample, or None, and why none when there is none)."""
    env = dict(os.environ if env is None else env)
    url = env.get("INFERBENCH_DCGM_URL")
    if url:
        return PowerSource("dcgm", url), ""
    path = env.get("PATH")
    for kind in ("nvidia-smi", "amd-smi"):
        found = shutil.which(kind, path=path)
        if found:
            return PowerSource(kind, found), ""
    return (
        None,
        "no power source: nvidia-smi and amd-smi are not on PATH and INFERBENCH_DCGM_URL is unset",
    )


class PowerSampler:
    """One sampling process for the length of a point."""

    def __init__(self, source: PowerSource, out: Path, interval_s: float = DEFAULT_INTERVAL_S):
        self.source, self.out, self.interval_s = source, out, interval_s
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = out.with_suffix(".log")

    def start(self) -> None:
        self.out.parent.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "inferbench.power.sampler", self.source.spec()]
        argv += [str(self.out), f"{self.interval_s:g}"]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, preexec_fn=child_setup(signal.SIGTERM)
            )

    def stop(self, grace_s: float = 5.0) -> int | None:
        """Stop the sampler; its exit status (None if it had to be killed)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None
        return self.proc.returncode


# --- the sampling process -------------------------------------------------------------

_stop = False


def _on_term(_signum: int, _frame: object) -> None:
    global _stop
    _stop = True


def _stream(argv: list[str], reader: PowerCsvReader, out: Path) -> int:
    """Run a tool that repeats on its own, converting each line it prints as it comes."""
    env = {**os.environ, "TZ": "UTC", "PYTHONUNBUFFERED": "1"}  # stamps in UTC, no buffering
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, text=True, env=env, preexec_fn=child_setup(signal.SIGKILL)
    )
    assert proc.stdout is not None
    with out.open("w") as f:
        f.write(CSV_HEADER + "\n")
        for line in proc.stdout:
            if _stop:
                break
            try:
                sample = reader.feed(line)
            except ParseError as exc:
                print(f"power: {exc}", file=sys.stderr, flush=True)
                continue
            if sample is not None:
                f.write(sample.csv_line() + "\n")
                f.flush()
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
    return 0


def _poll_dcgm(url: str, out: Path, interval_s: float) -> int:
    with out.open("w") as f:
        f.write(CSV_HEADER + "\n")
        next_at = time.monotonic()
        while not _stop:
            t = time.time()
            try:
                with urllib.request.urlopen(url, timeout=5) as resp:
                    text = resp.read().decode()
                for sample in parse_dcgm_metrics(text, t):
                    f.write(sample.csv_line() + "\n")
                f.flush()
            except (OSError, ParseError) as exc:
                print(f"power: dcgm: {exc}", file=sys.stderr, flush=True)
            next_at += interval_s
            time.sleep(max(0.0, next_at - time.monotonic()))
    return 0


def main(argv: list[str]) -> int:
    kind, _, target = argv[0].partition("=")
    out, interval = Path(argv[1]), float(argv[2])
    signal.signal(signal.SIGTERM, _on_term)
    if kind == "nvidia-smi":
        argv = [target, f"--query-gpu={NVIDIA_QUERY}", "--format=csv,nounits"]
        return _stream([*argv, f"-lms={max(1, round(interval * 1000))}"], PowerCsvReader(UTC), out)
    if kind == "amd-smi":
        # amd-smi's watch interval is whole seconds
        argv = [target, "metric", "-p", "-c", "-t", "-u", "-w", str(max(1, round(interval)))]
        return _stream([*argv, "--csv"], PowerCsvReader(UTC), out)
    return _poll_dcgm(target, out, interval)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
