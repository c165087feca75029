"""Does `inferbench bench` measure a real vLLM as vLLM's own `vllm bench serve` does?

Both clients get the same command line (random dataset, fixed isl/osl, --max-concurrency,
--num-prompts, --ignore-eos, --temperature 0, the model's tokenizer) against the same
`vllm serve` of the tiny model (tools/tiny_model.py) on vLLM's CPU build
(.ci/services/40-vllm.sh). They alternate, which one goes first flipping each repeat, after
one unmeasured run of each. Output throughput, median TPOT and median TTFT are read from the
result files both write (the same sa-bench keys), the server's own prompt and generation
token counters (/metrics) are differenced around every run to show both asked for the same
work, and the medians are compared (target: throughput and TPOT within 5%).

The server is pinned to one core (`--server-core`, OpenMP threads bound there too) and each
client to another (`--client-core`), so a client cannot slow the server by sharing its core.

    .venv/bin/python benchmarks/vllm_bench_compare.py [--repeats 15] [--isl 256] [--osl 128]
        [--concurrency 8] [--num-prompts 64] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "real_engines"))

from vllm_cpu import TinyModel, serve, server_env, tiny_model, vllm_bin

CLIENTS = ("vllm", "inferbench")
TARGET = 0.05


@dataclass(frozen=True)
class Run:
    client: str
    repeat: int
    output_throughput: float  # tok/s
    median_tpot_ms: float
    median_ttft_ms: float
    duration_s: float
    server_prompt_tokens: float  # what vLLM counted while the run lasted
    server_generation_tokens: float


def _counter(url: str, name: str) -> float:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(name + "{") or line.startswith(name + " ")
    )


def common_argv(url: str, model: str, args: argparse.Namespace, out_dir: Path) -> list[str]:
    """What both clients are given, word for word. No --random-range-ratio: both then use
    exact lengths, while `--random-range-ratio 0` is exact to vLLM but U[0, L] to
    inferbench, which reads it with sa-bench's convention (docs/bench.md)."""
    return [
        "--backend", "vllm", "--base-url", url, "--model", model, "--tokenizer", model,
        "--dataset-name", "random", "--random-input-len", str(args.isl),
        "--random-output-len", str(args.osl),
        "--max-concurrency", str(args.concurrency), "--num-prompts", str(args.num_prompts),
        "--ignore-eos", "--temperature", "0", "--seed", "0",
        "--save-result", "--result-dir", str(out_dir), "--disable-tqdm",
    ]  # fmt: skip


def client_argv(client: str, bin_dir: Path, core: int | None) -> list[str]:
    pin = ["taskset", "-c", str(core)] if core is not None else []
    if client == "vllm":
        return [*pin, str(bin_dir / "vllm"), "bench", "serve"]
    return [*pin, sys.executable, "-m", "inferbench.cli.main", "bench"]


def run_client(
    client: str, repeat: int, url: str, base: list[str], prefix: list[str], env: dict[str, str]
) -> Run:
    out_dir = Path(base[base.index("--result-dir") + 1])
    name = f"{client}-{repeat}.json"
    prompt0 = _counter(url, "vllm:prompt_tokens_total")
    gen0 = _counter(url, "vllm:generation_tokens_total")
    done = subprocess.run(
        [*prefix, *base, "--result-filename", name],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{client} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    data = json.loads((out_dir / name).read_text())
    return Run(
        client=client,
        repeat=repeat,
        output_throughput=float(data["output_throughput"]),
        median_tpot_ms=float(data["median_tpot_ms"]),
        median_ttft_ms=float(data["median_ttft_ms"]),
        duration_s=float(data["duration"]),
        server_prompt_tokens=_counter(url, "vllm:prompt_tokens_total") - prompt0,
        server_generation_tokens=_counter(url, "vllm:generation_tokens_total") - gen0,
    )


def report(runs: list[Run], args: argparse.Namespace) -> dict[str, object]:
    def med(client: str, key: str) -> float:
        return statistics.median(getattr(r, key) for r in runs if r.client == client)

    print(f"\n{'client':<11} {'rep':>3} {'out tok/s':>10} {'TPOT p50':>9} {'TTFT p50':>9} "
          f"{'dur s':>6} {'srv in':>8} {'srv out':>8}")  # fmt: skip
    for r in runs:
        print(f"{r.client:<11} {r.repeat:>3} {r.output_throughput:>10.1f} "
              f"{r.median_tpot_ms:>9.3f} {r.median_ttft_ms:>9.2f} {r.duration_s:>6.2f} "
              f"{r.server_prompt_tokens:>8.0f} {r.server_generation_tokens:>8.0f}")  # fmt: skip
    summary: dict[str, object] = {}
    print(f"\nmedians of {args.repeats} runs each (inferbench / vllm):")
    for key, label in (
        ("output_throughput", "output throughput (tok/s)"),
        ("median_tpot_ms", "median TPOT (ms)"),
        ("median_ttft_ms", "median TTFT (ms)"),
    ):
        ours, theirs = med("inferbench", key), med("vllm", key)
        ratio = ours / theirs if theirs else float("nan")
        gated = key != "median_ttft_ms"
        verdict = ("within 5%" if abs(ratio - 1) <= TARGET else "OUTSIDE 5%") if gated else ""
        print(f"  {label:<28} inferbench {ours:10.3f}  vllm {theirs:10.3f}  "
              f"ratio {ratio:.3f} {verdict}")  # fmt: skip
        summary[key] = {"inferbench": ours, "vllm": theirs, "ratio": ratio}
    # the load of a shared machine drifts over minutes: the ratio within each repeat (the
    # two runs back to back) is steadier than the ratio of the medians
    print("median of the per-repeat ratios (inferbench / vllm, same repeat):")
    for key in ("output_throughput", "median_tpot_ms", "median_ttft_ms"):
        pairs = [
            getattr(a, key) / getattr(b, key)
            for a in runs
            for b in runs
            if a.client == "inferbench" and b.client == "vllm" and a.repeat == b.repeat
        ]
        lo, mid, hi = min(pairs), statistics.median(pairs), max(pairs)
        print(f"  {key:<28} {mid:.3f} ({lo:.3f}-{hi:.3f})")
        summary[f"{key}_pair_ratio"] = {"median": mid, "min": lo, "max": hi}
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--isl", type=int, default=256)
    parser.add_argument("--osl", type=int, default=128)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--num-prompts", type=int, default=64)
    parser.add_argument("--server-core", type=int, default=0)
    parser.add_argument("--client-core", type=int, default=1)
    parser.add_argument("--no-pin", action="store_true", help="run without taskset")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    bin_dir = vllm_bin()
    model: TinyModel = tiny_model(bin_dir)
    env = server_env(bin_dir, model)
    work = Path(tempfile.mkdtemp(prefix="vllm-bench-compare-"))
    pin = not args.no_pin
    wrapper = ["taskset", "-c", str(args.server_core)] if pin else []
    server_extra = {"VLLM_CPU_OMP_THREADS_BIND": str(args.server_core)} if pin else {}
    max_len = str(args.isl + args.osl + 64)
    started = time.monotonic()
    with serve(
        bin_dir, model, work / "server.log", "--max-model-len", max_len,
        "--max-num-seqs", str(args.concurrency), "--no-enable-prefix-caching",
        wrapper=wrapper, env=server_extra,
    ) as server:  # fmt: skip
        print(f"vllm serve ready in {time.monotonic() - started:.1f} s at {server.url}")
        base = common_argv(server.url, model.model_id, args, work)
        core = args.client_core if pin else None
        prefixes = {c: client_argv(c, bin_dir, core) for c in CLIENTS}
        print("common argv:", " ".join(base))
        for client in CLIENTS:  # warm both paths up (server and client caches); not counted
            run_client(client, 0, server.url, base, prefixes[client], env)
        runs: list[Run] = []
        for repeat in range(1, args.repeats + 1):
            order = CLIENTS if repeat % 2 else CLIENTS[::-1]
            for client in order:
                runs.append(run_client(client, repeat, server.url, base, prefixes[client], env))
                print(f"  {client} #{repeat}: {runs[-1].output_throughput:.1f} tok/s", flush=True)
    summary = report(runs, args)
    if args.json:
        machine = {"cpus": os.cpu_count(), "load_avg": os.getloadavg()}
        payload = {"args": vars(args) | {"json": str(args.json)}, "machine": machine,
                   "runs": [asdict(r) for r in runs], "summary": summary}  # fmt: skip
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
