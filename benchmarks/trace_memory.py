"""Peak memory of `traces show` and `replay` on one very long session (issue 40).

    nice .venv/bin/python benchmarks/trace_memory.py [--turns 200000] [--repeats 3]
        [--duration 5] [--cap-mb 4096] [--baseline-src DIR]

Writes, in a temporary folder, a trace of one session of `--turns` turns in inferbench's
JSONL format (12 new input tokens and 12 output tokens a turn: its conversation's context
grows by 24 tokens a turn, to 4.8M at 200,000 turns), then runs each command in its own
process, the CLI's entry point: `inferbench traces show FILE`, and `inferbench replay`
of that trace for `--duration` seconds against `inferbench sim serve` on 127.0.0.1 (port
0). It reports each command's peak RSS (`os.wait4`'s ru_maxrss of that process alone),
its CPU and wall time, medians of `--repeats`; a command is killed past `--cap-mb` of RSS
or 600 s and reported as such. With `--baseline-src DIR` (another checkout's `src`), each
repeat runs that tree's commands and this one's in turn, under the same load. This script
imports nothing of inferbench: its own memory never counts in a child's peak.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
CLI = [sys.executable, "-m", "inferbench.cli.main"]


@dataclass(frozen=True)
class Sample:
    rss_mb: float
    cpu_s: float
    wall_s: float
    load: float
    killed: str = ""  # why the command was stopped, if it was


def write_trace(path: Path, turns: int) -> None:
    line = b'{"session": "one-long-session", "input": 12, "output": 12}\n'
    with path.open("wb") as out:
        for _ in range(turns // 10_000):
            out.write(line * 10_000)
        out.write(line * (turns % 10_000))


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for row in status:
                if row.startswith("VmRSS:"):
                    return int(row.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def measure(argv: list[str], env: dict[str, str], cap_mb: float, timeout_s: float) -> Sample:
    """Run `argv`, watching its RSS; its own rusage once it ends."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    killed: list[str] = []

    def watch() -> None:
        while proc.returncode is None:
            if _rss_mb(proc.pid) > cap_mb:
                killed.append(f"killed above {cap_mb:.0f} MB")
            elif time.perf_counter() - start > timeout_s:
                killed.append(f"killed after {timeout_s:.0f} s")
            if killed:
                os.kill(proc.pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0 and not killed:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {stderr[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return Sample(usage.ru_maxrss / 1024, cpu, wall, load, killed[0] if killed else "")


class SimServer:
    """`inferbench sim serve` on 127.0.0.1, a free port."""

    def __init__(self, env: dict[str, str]) -> None:
        argv = [*CLI, "sim", "serve", "--model", MODEL, "--gpu", "h100", "--port", "0"]
        self.proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip().rsplit(" ", 1)[-1]
        if not self.url.startswith("http://127.0.0.1:"):
            raise SystemExit(f"sim serve did not start: {self.url!r}")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)


def line(what: str, samples: list[Sample]) -> str:
    def med(field: str) -> float:
        return statistics.median(getattr(s, field) for s in samples)

    loads = "/".join(f"{s.load:.1f}" for s in samples)
    killed = "; ".join(sorted({s.killed for s in samples if s.killed}))
    return (
        f"{what:<34} peak RSS {med('rss_mb'):7.0f} MB  cpu {med('cpu_s'):7.2f} s  wall"
        f" {med('wall_s'):7.2f} s  (median of {len(samples)}; load {loads})"
        + (f"  [{killed}]" if killed else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--duration", type=float, default=5.0, help="replay window, seconds")
    parser.add_argument("--cap-mb", type=float, default=4096, help="kill a command above this")
    parser.add_argument("--baseline-src", type=Path, default=None)
    args = parser.parse_args()
    trees: dict[str, dict[str, str]] = {"this tree": dict(os.environ)}
    if args.baseline_src:
        base = {**os.environ, "PYTHONPATH": str(args.baseline_src.resolve())}
        trees = {"baseline": base, "this tree": dict(os.environ)}
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {os.uname().release}")
    samples: dict[tuple[str, str], list[Sample]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        trace = tmp / "long.jsonl"
        write_trace(trace, args.turns)
        size = trace.stat().st_size / 1e6
        print(f"trace: one session of {args.turns:,} turns, {size:.1f} MB")
        for _ in range(args.repeats):
            for name, env in trees.items():
                show = [*CLI, "traces", "show", str(trace)]
                samples.setdefault(("traces show", name), []).append(
                    measure(show, env, args.cap_mb, 600)
                )
                server = SimServer(env)
                try:
                    replay = [*CLI, "replay", "--base-url", server.url, "--model", MODEL,
                              "--trace", str(trace), "--concurrency", "1",
                              "--duration", f"{args.duration:g}",
                              "--output", str(tmp / "replay.json")]  # fmt: skip
                    samples.setdefault((f"replay --duration {args.duration:g}", name), []).append(
                        measure(replay, env, args.cap_mb, 600)
                    )
                finally:
                    server.close()
    for (what, name), runs in samples.items():
        print(line(f"{what} ({name})", runs), flush=True)


if __name__ == "__main__":
    main()
