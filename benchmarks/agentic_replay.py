"""Does `inferbench replay` hold 1,024 trajectory lanes, and how accurate are its stamps?

Server (`benchmarks/harness/testserver.py`, 50 ms TTFT, then one token every 20 ms)
pinned to core 0, the replay client (one process) to core 1. Synthetic sessions (6 root
turns, a 512-token first input, 64-token tool results, 32-token outputs) with their idle
gaps scaled to 0, so every lane always has a request in flight, for a 20 s window. Figures:
the most streams the server saw open at once, the client's own in-flight maximum, the p50
and p99 of (client receive stamp - server send stamp) per chunk, matched by request id
(as `bench_client.py` rates `inferbench bench`), the TTFT median against the server's 50 ms,
requests completed and client CPU share. Medians of `--repeats` runs.

    .venv/bin/python benchmarks/agentic_replay.py [--lanes 1024] [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time

import numpy as np

from bench_client import _receive_errors, server
from inferbench.bench.agentic.api import run_replay
from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.settings import ClientOptions, Endpoint
from inferbench.bench.traces.source import synth_traces
from inferbench.bench.traces.synth import SynthSpec

CLIENT_CORE = 1
TTFT_S, ITL_S = 0.05, 0.02


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one_run(lanes: int, duration: float) -> dict[str, float]:
    traces = synth_traces(
        SynthSpec(
            sessions=256,
            seed=1,
            turns=6,
            first_input=512,
            input=64,
            output=32,
            sigma=0.3,
            subagent_p=0.0,
            max_context=8192,
        )
    )
    options = ReplayOptions(lanes=lanes, duration_s=duration, delay_scale=0, scrape_metrics=False)
    with server("--ttft", str(TTFT_S), "--itl", str(ITL_S)) as srv:
        cpu, wall = _cpu_s(), time.monotonic()
        outcome = run_replay(
            Endpoint(base_url=srv.url, model="m"),
            traces,
            options,
            client=ClientOptions(request_timeout_s=120),
        )
        cpu, wall = _cpu_s() - cpu, time.monotonic() - wall
        data = srv.get("/stamps")
    records = [t.record for t in outcome.run.turns]
    errors = _receive_errors(records, data["stamps"])
    result = outcome.result
    return {
        "server_max_open": float(data["max_active"]),  # type: ignore[arg-type]
        "client_max_in_flight": float(result.inferbench.in_flight.max),
        "recv_error_p50_ms": float(np.percentile(errors, 50)),
        "recv_error_p99_ms": float(np.percentile(errors, 99)),
        "ttft_median_ms": result.sa.median_ttft_ms,
        "requests": float(result.sa.completed),
        "failed": float(result.inferbench.failed),
        "cpu_share": cpu / wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lanes", type=int, default=1024)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=str, default=None)
    args = parser.parse_args()
    os.sched_setaffinity(0, {CLIENT_CORE})
    runs = [one_run(args.lanes, args.duration) for _ in range(args.repeats)]
    medians = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"inferbench replay, {args.lanes} lanes, {args.duration:g} s, {args.repeats} runs")
    for key, value in medians.items():
        spread = ", ".join(f"{r[key]:.2f}" for r in runs)
        print(f"  {key:22s} median {value:10.2f}   ({spread})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"runs": runs, "medians": medians}, out, indent=2)


if __name__ == "__main__":
    main()
