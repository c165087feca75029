"""Can `inferbench sim serve` hold >= 2,000 concurrent streams on its scheduled pace?

Starts the server as a subprocess (the seed's 2P1D DEP2/DEP8 B200 deployment, with
1k/1k lengths so 2,048 sequences fit its decode KV at once), opens 2,048 streams
from several client processes (aiohttp, token-id prompts, ignore_eos), and reads the
server's --record-sends file: for every chunk, when the engine scheduled it and when
it was written. Also runs the offline estimate of the same workload and compares
the serve run's wall duration with the simulated one.

    .venv/bin/python benchmarks/sim_serve.py [--streams 2048] [--stream-interval 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from inferbench.sim.estimate import estimate
from inferbench.sim.inputs import Overrides, from_recipe

SEED = (
    "examples/benchmarks/multi_node/srt-slurm-recipes/vllm/minimax-m3/b200-fp4/8k1k/"
    "2p1d-dep2-dep8-8k1k.yaml"
)


async def _client(url: str, streams: int, isl: int, osl: int) -> tuple[int, int]:
    body = {"prompt": list(range(isl)), "max_tokens": osl, "stream": True, "ignore_eos": True}
    ok = errors = 0

    async def one(session: aiohttp.ClientSession) -> None:
        nonlocal ok, errors
        try:
            async with session.post(f"{url}/v1/completions", json=body) as resp:
                async for _ in resp.content.iter_any():
                    pass
                ok += resp.status == 200
        except aiohttp.ClientError:
            errors += 1

    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        await asyncio.gather(*(one(session) for _ in range(streams)))
    return ok, errors


def _client_process(args: tuple[str, int, int, int]) -> tuple[int, int]:
    import uvloop

    return uvloop.run(_client(*args))


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * q), len(ordered) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=2048)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--isl", type=int, default=1024)
    parser.add_argument("--osl", type=int, default=1024)
    parser.add_argument("--stream-interval", type=int, default=16)
    args = parser.parse_args()
    sends = Path(tempfile.mkdtemp()) / "sends.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "inferbench.cli.main",
        "sim",
        "serve",
        "--recipe",
        SEED,
        "--isl",
        str(args.isl),
        "--osl",
        str(args.osl),
        "--stream-interval",
        str(args.stream_interval),
        "--port",
        "0",
        "--record-sends",
        str(sends),
    ]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stderr is not None
    url = server.stdout.readline().strip().rsplit(" ", 1)[-1]
    share = [
        args.streams // args.clients + (i < args.streams % args.clients)
        for i in range(args.clients)
    ]
    start = time.perf_counter()
    with mp.Pool(args.clients) as pool:
        results = pool.map(_client_process, [(url, n, args.isl, args.osl) for n in share])
    wall = time.perf_counter() - start
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)
    summary = server.stderr.read().strip().splitlines()[-1]
    rows = [json.loads(line) for line in sends.read_text().splitlines()]
    late = [(r["sent"] - r["scheduled"]) * 1000 for r in rows]
    dep = from_recipe(
        SEED, Overrides(isl=args.isl, osl=args.osl, stream_interval=args.stream_interval)
    )
    exact = dep.model_copy(
        update={"workload": dep.workload.model_copy(update={"random_range_ratio": 1.0})}
    )
    est = estimate(exact, args.streams, num_prompts=args.streams)
    ok = sum(r[0] for r in results)
    errors = sum(r[1] for r in results)
    print(
        f"streams {args.streams} over {args.clients} client processes, stream-interval "
        f"{args.stream_interval}, isl {args.isl} osl {args.osl}"
    )
    print(f"server: {summary}")
    print(f"completed {ok}, errors {errors}; {len(rows)} chunks recorded")
    print(
        f"chunk send lateness ms: p50 {_quantile(late, 0.5):.1f}  p99 {_quantile(late, 0.99):.1f}  "
        f"max {max(late):.1f}"
    )
    print(
        f"serve wall {wall:.1f} s vs estimate {est.duration_s:.1f} s simulated "
        f"({(wall / est.duration_s - 1) * 100:+.1f} %)"
    )


if __name__ == "__main__":
    main()
