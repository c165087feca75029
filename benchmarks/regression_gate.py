"""Does `results compare --fail-on-regression` stay quiet on reruns and catch a slowdown?

Measures a baseline, then `--reruns` identical reruns and `--slowed` reruns of a slower
server, each with `inferbench bench` (real time, small points), ingests each as its own
run and runs `inferbench results compare BASE RUN --fail-on-regression` on it, as a CI
gate would. Reports false alarms (reruns that fail the gate) and catches (slow runs that
fail it), and which metrics tripped.

Servers: by default `inferbench sim serve` (flags mode), restarted with
`--step-time-factor` for the slow runs (every engine step that much longer). `--vllm`
starts the real vLLM CPU build on the tiny model of tests/real_engines (the vLLM venv of
.ci/services/40-vllm.sh), with `--max-num-seqs` the concurrency for the reruns and fewer
(`--slow-max-num-seqs`) for the slowed runs. On any other engine, start two servers
yourself and pass them (`--base-url`, `--slow-base-url`) with `--model`.

Each run is `--repeats` measurements of its points (3 on `--vllm`), which `results compare`
resamples as clusters, so differences between whole runs of an unchanged engine widen the
intervals the gate judges.

`--paired` measures a fresh base right before each rerun and each slowed run, with both
servers up (ABAB on one machine, as a CI job that measures the base commit and the head back
to back): each run is gated against its own base, so a drift that lasts minutes (the engine,
the machine's other tenants) moves both sides alike. Without it every run is gated against
one base measured first.

    .venv/bin/python benchmarks/regression_gate.py [--reruns 20] [--slowed 10] [--factor 1.1]
    .venv/bin/python benchmarks/regression_gate.py --vllm --reruns 10 --slowed 10 [--paired]
        [--repeats 3] [--num-prompts 96]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

CLI = [sys.executable, "-m", "inferbench.cli.main"]
SIM_MODEL = "meta-llama/Llama-3.1-8B-Instruct"


@contextmanager
def sim_server(args: argparse.Namespace, factor: float) -> Iterator[str]:
    cmd = [*CLI, "sim", "serve", "--model", args.model, "--gpu", args.gpu]
    cmd += ["--isl", str(args.isl), "--osl", str(args.osl), "--port", "0"]
    cmd += ["--step-time-factor", str(factor)]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    try:
        line = server.stdout.readline()
        if "listening on" not in line:
            raise SystemExit(f"sim serve did not start: {line!r}")
        yield line.strip().rsplit(" ", 1)[-1]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


@contextmanager
def vllm_server(args: argparse.Namespace, max_num_seqs: int, work: Path) -> Iterator[str]:
    """The real vLLM CPU build serving the tiny model, batch limited to `max_num_seqs`."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "real_engines"))
    import vllm_cpu  # the tests' launcher: venv lookup, tiny model, loopback server

    bin_dir = vllm_cpu.vllm_bin()
    model = vllm_cpu.tiny_model(bin_dir)
    args.model = model.model_id
    args.tokenizer = str(model.path)
    log = work / f"vllm-{max_num_seqs}.log"
    # Prefix caching off: every run sends the same seeded prompts, so with it on a run is as
    # fast as what the KV cache still holds from the runs before (the first measured run
    # rode the warm-up's cache and every rerun read 10-75% slower). Server and client on
    # cores of their own, so neither starves the other.
    cores = vllm_cpu.pin_cores()
    env = {"VLLM_CPU_OMP_THREADS_BIND": str(cores[0])} if cores else {}
    args_ = ("--max-num-seqs", str(max_num_seqs), "--no-enable-prefix-caching")
    with (
        vllm_cpu.serve(bin_dir, model, log, *args_, env=env) as server,
        vllm_cpu.pinned(cores[1] if cores else None),
    ):
        if cores:
            vllm_cpu.pin_session(server.pid, cores[0])
        for k in range(args.warmup_points):
            warm_up(args, server.url, work / f"warm-{max_num_seqs}-{k}")
        yield server.url


def warm_up(args: argparse.Namespace, url: str, out: Path) -> None:
    """One unrecorded point first: a fresh vLLM's first batches run slower (CPU kernels
    warming up, allocator growth), which would read as noise in the first measurement."""
    bench = [*CLI, "bench", "--base-url", url, "--model", args.model, "--isl", str(args.isl)]
    bench += ["--osl", str(args.osl), "--concurrency", args.concurrency, "--disable-tqdm"]
    bench += ["--num-prompts", str(args.num_prompts), "--result-dir", str(out)]
    if args.tokenizer:
        bench += ["--tokenizer", args.tokenizer]
    subprocess.run(bench, check=True, capture_output=True)


def measure(args: argparse.Namespace, url: str, run_id: str, work: Path, db: str) -> None:
    """One run: `inferbench bench` into its own folder, ingested as run `run_id`."""
    out = work / run_id
    bench = [*CLI, "bench", "--base-url", url, "--model", args.model, "--isl", str(args.isl)]
    bench += ["--osl", str(args.osl), "--concurrency", args.concurrency, "--disable-tqdm"]
    bench += ["--num-prompts", str(args.num_prompts), "--result-dir", str(out)]
    bench += ["--repeats", str(args.repeats)]
    if args.tokenizer:
        bench += ["--tokenizer", args.tokenizer]
    subprocess.run(bench, check=True, capture_output=True)
    identity = (
        f"model={args.model},model-prefix=gate,precision=bf16,framework=bench,"
        f"runner={args.gpu},isl={args.isl},osl={args.osl},tp=1,run-id={run_id}"
    )
    ingest = [*CLI, "results", "ingest", str(out), "--db", db, "--identity", identity]
    subprocess.run(ingest, check=True, capture_output=True)


def gate(
    args: argparse.Namespace, run_id: str, db: str, base: str = "base"
) -> tuple[int, list[str], float | None]:
    """`results compare BASE RUN --fail-on-regression`: its exit code, the tripped metrics
    (`metric: change [interval]`) and the closest any judged interval came to the
    tolerance on the harmful side (points of change; negative: beyond it)."""
    cmd = [*CLI, "results", "compare", base, run_id, "--db", db, "--format", "json"]
    cmd += ["--fail-on-regression", "--threshold", str(args.threshold)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"compare failed: {proc.stderr}")
    doc = json.loads(proc.stdout)
    tripped: list[str] = []
    closest: float | None = None
    for point in doc["points"]:
        for d in point["deltas"]:
            if d["margin"] is None:  # not judged
                continue
            closest = d["margin"] if closest is None else min(closest, d["margin"])
            if d["verdict"] == "regression":
                low, high = d["interval"]
                change = f"{d['change']:+.1%} [{low:+.1%}, {high:+.1%}]"
                tripped.append(f"{d['label']} c{point['concurrency']}: {change}")
    return proc.returncode, tripped, closest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reruns", type=int, default=20)
    parser.add_argument("--slowed", type=int, default=10)
    parser.add_argument("--factor", type=float, default=1.1, help="sim step-time factor")
    parser.add_argument("--base-url", help="a running server (else sim serve is started)")
    parser.add_argument("--slow-base-url", help="the slowed server, with --base-url")
    parser.add_argument("--model", default=SIM_MODEL)
    parser.add_argument("--gpu", default="h200")
    parser.add_argument("--isl", type=int, default=256)
    parser.add_argument("--osl", type=int, default=64)
    parser.add_argument("--concurrency", help="default 8,16 (sim), 16 (--vllm)")
    parser.add_argument("--num-prompts", type=int, help="per repeat: default 64 (sim), 96 (--vllm)")
    parser.add_argument(
        "--repeats", type=int, help="bench --repeats of each run: default 1 (sim), 3 (--vllm)"
    )
    parser.add_argument("--threshold", type=float, default=0.05)
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument(
        "--paired",
        action="store_true",
        help="measure a fresh base right before each run (ABAB), both servers up",
    )
    parser.add_argument("--vllm", action="store_true", help="start the real vLLM CPU build")
    parser.add_argument("--max-num-seqs", type=int, default=16, help="vLLM, the reruns")
    parser.add_argument("--slow-max-num-seqs", type=int, default=8, help="vLLM, slowed runs")
    parser.add_argument("--tokenizer", help="for bench (set by --vllm)")
    parser.add_argument(
        "--warmup-points", type=int, default=3, help="--vllm: unrecorded points first"
    )
    args = parser.parse_args()
    if bool(args.base_url) != bool(args.slow_base_url):
        parser.error("--base-url and --slow-base-url go together")
    if args.vllm and args.base_url:
        parser.error("--vllm starts its own servers: leave out --base-url")
    if args.vllm and args.slow_max_num_seqs >= args.max_num_seqs:
        parser.error("--slow-max-num-seqs must be below --max-num-seqs (it is the slowdown)")
    # the tiny model on a CPU is fast: longer points keep one slow second from deciding
    args.concurrency = args.concurrency or ("16" if args.vllm else "8,16")
    args.num_prompts = args.num_prompts or (96 if args.vllm else 64)
    # A real engine's runs differ by more than their requests do (a run's TTFT can lock into
    # one regime for half of it): three repeats a run let the comparison see that spread.
    args.repeats = args.repeats or (3 if args.vllm else 1)
    work = Path(tempfile.mkdtemp(prefix="gate-"))
    args.work = work
    db = f"sqlite:///{work / 'results.sqlite'}"
    started = time.monotonic()
    alarms: list[tuple[str, list[str]]] = []
    caught: list[str] = []
    missed: list[str] = []

    margins: list[float] = []  # per identical rerun: its judged intervals' closest approach

    def judge(run_id: str, base: str, slowed: bool) -> None:
        code, tripped, closest = gate(args, run_id, db, base)
        if slowed:
            (caught if code else missed).append(run_id)
        else:
            if closest is not None:
                margins.append(closest)
            if code:
                alarms.append((run_id, tripped))
        print(_verdict_line(run_id, base, code, tripped, None if slowed else closest), flush=True)

    if args.paired:
        # A fresh base right before each run, both servers up: a drift of the engine or the
        # machine that lasts minutes moves base and run alike, as when CI measures the base
        # commit and the head back to back on one runner.
        with (
            _server(args, 1.0, args.base_url, args.max_num_seqs) as url,
            _server(args, args.factor, args.slow_base_url, args.slow_max_num_seqs) as slow_url,
        ):
            for k in range(1, args.reruns + 1):
                measure(args, url, f"base-{k}", work, db)
                measure(args, url, f"same-{k}", work, db)
                judge(f"same-{k}", f"base-{k}", slowed=False)
            for k in range(1, args.slowed + 1):
                measure(args, url, f"base-slow-{k}", work, db)
                measure(args, slow_url, f"slow-{k}", work, db)
                judge(f"slow-{k}", f"base-slow-{k}", slowed=True)
    else:
        with _server(args, 1.0, args.base_url, args.max_num_seqs) as url:
            measure(args, url, "base", work, db)
            for k in range(1, args.reruns + 1):
                measure(args, url, f"same-{k}", work, db)
                judge(f"same-{k}", "base", slowed=False)
        with _server(args, args.factor, args.slow_base_url, args.slow_max_num_seqs) as url:
            for k in range(1, args.slowed + 1):
                measure(args, url, f"slow-{k}", work, db)
                judge(f"slow-{k}", "base", slowed=True)
    metrics = Counter(t.split(":")[0] for _, ts in alarms for t in ts)
    figures = {
        "reruns": args.reruns,
        "false_alarms": len(alarms),
        "false_alarm_runs": alarms,
        "slowed": args.slowed,
        "caught": len(caught),
        "missed": missed,
        # how near the reruns' intervals came to the tolerance (points; below 0: an alarm)
        "rerun_margin_min": round(min(margins), 4) if margins else None,
        "rerun_margin_median": round(sorted(margins)[len(margins) // 2], 4) if margins else None,
        "factor": args.factor,
        "concurrency": args.concurrency,
        "num_prompts": args.num_prompts,
        "repeats": args.repeats,
        "threshold": args.threshold,
        "paired": args.paired,
        "server": _describe(args),
        "wall_s": round(time.monotonic() - started, 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}",
    }
    print(json.dumps(figures, indent=2))
    if metrics:
        print(f"false alarms by metric: {dict(metrics)}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    ok = not alarms and len(caught) * 10 >= 9 * args.slowed
    return 0 if ok else 1


def _verdict_line(
    run_id: str, base: str, code: int, tripped: list[str], margin: float | None
) -> str:
    near = "" if margin is None else f" (its intervals stayed {margin:.1%} or more inside)"
    return f"{run_id} vs {base}: gate {'FAILED' if code else 'passed'}{near} {tripped}"


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url


def _server(
    args: argparse.Namespace, factor: float, given: str | None, max_num_seqs: int
) -> AbstractContextManager[str]:
    if given:
        return _given(given)
    if args.vllm:
        return vllm_server(args, max_num_seqs, args.work)
    return sim_server(args, factor)


def _describe(args: argparse.Namespace) -> str:
    if args.vllm:
        return (
            f"vLLM CPU {args.model} --max-num-seqs {args.max_num_seqs} "
            f"(slowed: {args.slow_max_num_seqs}) {args.isl}/{args.osl}"
        )
    if args.base_url:
        return f"{args.base_url} (slowed: {args.slow_base_url})"
    return f"sim serve {args.model} {args.gpu} {args.isl}/{args.osl} x{args.factor}"


def _main() -> int:
    """Exit 0: the gate behaved; 1: a false alarm or too few catches; 2: the benchmark
    itself failed (a server that did not start, a command that failed)."""
    try:
        return main()
    except subprocess.CalledProcessError as exc:
        print(f"failed: {' '.join(map(str, exc.cmd))}\n{exc.stderr or ''}", file=sys.stderr)
    except Exception as exc:  # no vLLM venv, a server that died: named, exit 2
        print(f"failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    except SystemExit as exc:
        if isinstance(exc.code, int):
            return exc.code
        print(exc.code, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main())
