"""Does `results compare --fail-on-regression` stay quiet on reruns and catch a slowdown?

Measures a baseline, then `--reruns` identical reruns and `--slowed` reruns of a slower
server, each with `inferbench bench` (real time, small points), ingests each as its own
run and runs `inferbench results compare BASE RUN --fail-on-regression` on it, as a CI
gate would. Reports false alarms (reruns that fail the gate) and catches (slow runs that
fail it), and which metrics tripped.

Servers: by default `inferbench sim serve` (flags mode), restarted with
`--step-time-factor` for the slow runs (every engine step that much longer). `--vllm`
starts the real vLLM CPU build on the tiny model of tests/real_engines (the vLLM venv of
.ci/services/40-vllm.sh), `--max-num-seqs` the concurrency, and slows the same server for
the slowed runs by `--factor` (1.1: about 10%): its process group is stopped for
1 - 1/factor of every 100 ms (harness.throttle, as cpulimit does). `--slowdown max-num-seqs`
instead starts a second server with fewer sequences (`--slow-max-num-seqs`), the gate's
earlier test, which slows TTFT by hundreds of percent. On any other engine, start two
servers yourself and pass them (`--base-url`, `--slow-base-url`) with `--model`.

The verdict (exit 0) is the target of docs/benchmarks.md: at least 9 of 10 slowed runs
caught, at most one false alarm in 20 identical reruns.

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
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from harness.throttle import ThrottleStats, slowdown_fraction, throttled

CLI = [sys.executable, "-m", "inferbench.cli.main"]
SIM_MODEL = "meta-llama/Llama-3.1-8B-Instruct"


@dataclass(frozen=True)
class Served:
    """A server to measure: its URL and, when this benchmark started it, its process group
    (what the throttle stops)."""

    url: str
    pgid: int | None = None


@contextmanager
def sim_server(args: argparse.Namespace, factor: float) -> Iterator[Served]:
    cmd = [*CLI, "sim", "serve", "--model", args.model, "--gpu", args.gpu]
    cmd += ["--isl", str(args.isl), "--osl", str(args.osl), "--port", "0"]
    cmd += ["--step-time-factor", str(factor)]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    try:
        line = server.stdout.readline()
        if "listening on" not in line:
            raise SystemExit(f"sim serve did not start: {line!r}")
        yield Served(line.strip().rsplit(" ", 1)[-1], server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


@contextmanager
def vllm_server(args: argparse.Namespace, max_num_seqs: int, work: Path) -> Iterator[Served]:
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
        yield Served(server.url, server.pid)


def warm_up(args: argparse.Namespace, url: str, out: Path) -> None:
    """One unrecorded point first: a fresh vLLM's first batches run slower (CPU kernels
    warming up, allocator growth), which would read as noise in the first measurement."""
    bench = [*CLI, "bench", "--base-url", url, "--model", args.model, "--isl", str(args.isl)]
    bench += ["--osl", str(args.osl), "--concurrency", args.concurrency, "--disable-tqdm"]
    bench += ["--num-prompts", str(args.num_prompts), "--result-dir", str(out)]
    if args.tokenizer:
        bench += ["--tokenizer", args.tokenizer]
    subprocess.run(bench, check=True, capture_output=True)


def measure(
    args: argparse.Namespace, served: Served, run_id: str, work: Path, db: str, slow: bool = False
) -> ThrottleStats | None:
    """One run: `inferbench bench` into its own folder, ingested as run `run_id`; `slow`
    with the throttle on (when the slowdown is the throttle): its stats."""
    out = work / run_id
    url = served.url
    bench = [*CLI, "bench", "--base-url", url, "--model", args.model, "--isl", str(args.isl)]
    bench += ["--osl", str(args.osl), "--concurrency", args.concurrency, "--disable-tqdm"]
    bench += ["--num-prompts", str(args.num_prompts), "--result-dir", str(out)]
    bench += ["--repeats", str(args.repeats)]
    if args.tokenizer:
        bench += ["--tokenizer", args.tokenizer]
    throttle = slow and args.throttle
    if throttle and served.pgid is None:
        raise SystemExit("the throttle needs a server this benchmark started")
    with (
        throttled(served.pgid, slowdown_fraction(args.factor))  # type: ignore[arg-type]
        if throttle
        else nullcontext()
    ) as stats:
        subprocess.run(bench, check=True, capture_output=True)
    identity = (
        f"model={args.model},model-prefix=gate,precision=bf16,framework=bench,"
        f"runner={args.gpu},isl={args.isl},osl={args.osl},tp=1,run-id={run_id}"
    )
    ingest = [*CLI, "results", "ingest", str(out), "--db", db, "--identity", identity]
    subprocess.run(ingest, check=True, capture_output=True)
    return stats


@dataclass(frozen=True)
class Verdict:
    """`results compare BASE RUN --fail-on-regression` on one run: its exit code, the
    tripped metrics (`metric: change [interval]`), the closest any judged interval came to
    the tolerance on the harmful side (points of change; negative: beyond it) and the change
    of tok/s/GPU (the median over the points), which says how much slower a run was."""

    code: int
    tripped: list[str]
    closest: float | None
    tput_change: float | None


def gate(args: argparse.Namespace, run_id: str, db: str, base: str = "base") -> Verdict:
    cmd = [*CLI, "results", "compare", base, run_id, "--db", db, "--format", "json"]
    cmd += ["--fail-on-regression", "--threshold", str(args.threshold)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"compare failed: {proc.stderr}")
    doc = json.loads(proc.stdout)
    tripped: list[str] = []
    closest: float | None = None
    tput: list[float] = []
    for point in doc["points"]:
        for d in point["deltas"]:
            if d["metric"] == "total_tput_per_gpu" and d["change"] is not None:
                tput.append(d["change"])
            if d["margin"] is None:  # not judged
                continue
            closest = d["margin"] if closest is None else min(closest, d["margin"])
            if d["verdict"] == "regression":
                low, high = d["interval"]
                change = f"{d['change']:+.1%} [{low:+.1%}, {high:+.1%}]"
                tripped.append(f"{d['label']} c{point['concurrency']}: {change}")
    return Verdict(proc.returncode, tripped, closest, _median(tput))


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reruns", type=int, default=20)
    parser.add_argument("--slowed", type=int, default=10)
    parser.add_argument(
        "--factor", type=float, default=1.1, help="slowdown: sim step-time factor, vLLM throttle"
    )
    parser.add_argument(
        "--slowdown",
        choices=("throttle", "max-num-seqs"),
        default="throttle",
        help="--vllm: how the slowed runs are slowed",
    )
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
    if args.slowdown == "max-num-seqs" and not args.vllm:
        parser.error("--slowdown max-num-seqs is for --vllm")
    if args.factor < 1.0:
        parser.error("--factor is at least 1 (1.1: 10% slower)")
    mns = args.vllm and args.slowdown == "max-num-seqs"
    if mns and args.slow_max_num_seqs >= args.max_num_seqs:
        parser.error("--slow-max-num-seqs must be below --max-num-seqs (it is the slowdown)")
    # the tiny model on a CPU is fast: longer points keep one slow second from deciding
    args.concurrency = args.concurrency or ("16" if args.vllm else "8,16")
    args.num_prompts = args.num_prompts or (96 if args.vllm else 64)
    # A real engine's runs differ by more than their requests do (a run's TTFT can lock into
    # one regime for half of it): three repeats a run let the comparison see that spread.
    args.repeats = args.repeats or (3 if args.vllm else 1)
    # The throttle slows the server the reruns measure: no second server.
    args.throttle = args.vllm and args.slowdown == "throttle"
    return args


@dataclass
class Tally:
    """What the gate said on every run so far."""

    alarms: list[tuple[str, list[str]]] = field(default_factory=list)
    caught: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    margins: list[float] = field(default_factory=list)  # per rerun: closest approach
    rerun_tput: list[float] = field(default_factory=list)  # tok/s/GPU change of each rerun
    slow_tput: list[float] = field(default_factory=list)  # and of each slowed run
    stopped: list[float] = field(default_factory=list)  # the throttle's stopped share

    def add(self, run_id: str, v: Verdict, slowed: bool, stats: ThrottleStats | None) -> None:
        if v.tput_change is not None:
            (self.slow_tput if slowed else self.rerun_tput).append(v.tput_change)
        if stats is not None:
            self.stopped.append(stats.fraction)
        if slowed:
            (self.caught if v.code else self.missed).append(run_id)
            return
        if v.closest is not None:
            self.margins.append(v.closest)
        if v.code:
            self.alarms.append((run_id, v.tripped))

    def figures(self) -> dict[str, object]:
        slow = self.slow_tput
        return {
            "false_alarms": len(self.alarms),
            "false_alarm_runs": self.alarms,
            "caught": len(self.caught),
            "missed": self.missed,
            # how near the reruns' intervals came to the tolerance (points; below 0: alarm)
            "rerun_margin_min": _round(min(self.margins)) if self.margins else None,
            "rerun_margin_median": _round(_median(self.margins)),
            # tok/s/GPU change against the base (median over points), median over the runs:
            # what the slowdown really was, beside what identical reruns drift by
            "slowed_tput_change_median": _round(_median(slow)),
            "slowed_tput_change_range": [_round(min(slow)), _round(max(slow))] if slow else None,
            "rerun_tput_change_median": _round(_median(self.rerun_tput)),
            "throttle_stopped_median": _round(_median(self.stopped)),
        }


def main() -> int:
    args = _parse_args()
    work = Path(tempfile.mkdtemp(prefix="gate-"))
    args.work = work
    db = f"sqlite:///{work / 'results.sqlite'}"
    started = time.monotonic()
    tally = Tally()

    def judge(run_id: str, base: str, slowed: bool, stats: ThrottleStats | None = None) -> None:
        v = gate(args, run_id, db, base)
        tally.add(run_id, v, slowed, stats)
        print(_verdict_line(run_id, base, v, slowed, stats), flush=True)

    one_server = args.throttle
    if args.paired:
        # A fresh base right before each run, both servers up: a drift of the engine or the
        # machine that lasts minutes moves base and run alike, as when CI measures the base
        # commit and the head back to back on one runner.
        with (
            _server(args, 1.0, args.base_url, args.max_num_seqs) as url,
            nullcontext(url)
            if one_server
            else _server(args, args.factor, args.slow_base_url, args.slow_max_num_seqs) as slow_url,
        ):
            for k in range(1, args.reruns + 1):
                measure(args, url, f"base-{k}", work, db)
                measure(args, url, f"same-{k}", work, db)
                judge(f"same-{k}", f"base-{k}", slowed=False)
            for k in range(1, args.slowed + 1):
                measure(args, url, f"base-slow-{k}", work, db)
                stats = measure(args, slow_url, f"slow-{k}", work, db, slow=True)
                judge(f"slow-{k}", f"base-slow-{k}", slowed=True, stats=stats)
    else:
        with _server(args, 1.0, args.base_url, args.max_num_seqs) as url:
            measure(args, url, "base", work, db)
            for k in range(1, args.reruns + 1):
                measure(args, url, f"same-{k}", work, db)
                judge(f"same-{k}", "base", slowed=False)
            for k in range(1, args.slowed + 1 if one_server else 1):
                stats = measure(args, url, f"slow-{k}", work, db, slow=True)
                judge(f"slow-{k}", "base", slowed=True, stats=stats)
        if not one_server:
            with _server(args, args.factor, args.slow_base_url, args.slow_max_num_seqs) as url:
                for k in range(1, args.slowed + 1):
                    measure(args, url, f"slow-{k}", work, db, slow=True)
                    judge(f"slow-{k}", "base", slowed=True)
    allowed = args.reruns // 20  # the target: at most one false alarm in 20 reruns
    figures = {
        "reruns": args.reruns,
        "slowed": args.slowed,
        **tally.figures(),
        "allowed_false_alarms": allowed,
        "factor": args.factor,
        "slowdown": _slowdown(args),
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
    metrics = Counter(t.split(":")[0] for _, ts in tally.alarms for t in ts)
    if metrics:
        print(f"false alarms by metric: {dict(metrics)}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    ok = len(tally.alarms) <= allowed and len(tally.caught) * 10 >= 9 * args.slowed
    return 0 if ok else 1


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _verdict_line(
    run_id: str, base: str, v: Verdict, slowed: bool, stats: ThrottleStats | None
) -> str:
    near = ""
    if not slowed and v.closest is not None:
        near = f" (its intervals stayed {v.closest:.1%} or more inside)"
    tput = "" if v.tput_change is None else f" tok/s/GPU {v.tput_change:+.1%}"
    stop = "" if stats is None else f" (stopped {stats.fraction:.1%} of {stats.wall_s:.0f} s)"
    return (
        f"{run_id} vs {base}: gate {'FAILED' if v.code else 'passed'}{near}{tput}{stop} {v.tripped}"
    )


@contextmanager
def _given(url: str) -> Iterator[Served]:
    yield Served(url)


def _server(
    args: argparse.Namespace, factor: float, given: str | None, max_num_seqs: int
) -> AbstractContextManager[Served]:
    if given:
        return _given(given)
    if args.vllm:
        return vllm_server(args, max_num_seqs, args.work)
    return sim_server(args, factor)


def _describe(args: argparse.Namespace) -> str:
    if args.vllm:
        return f"vLLM CPU {args.model} --max-num-seqs {args.max_num_seqs} {args.isl}/{args.osl}"
    if args.base_url:
        return f"{args.base_url} (slowed: {args.slow_base_url})"
    return f"sim serve {args.model} {args.gpu} {args.isl}/{args.osl} x{args.factor}"


def _slowdown(args: argparse.Namespace) -> str:
    if args.vllm and args.slowdown == "max-num-seqs":
        return f"a second server, --max-num-seqs {args.slow_max_num_seqs}"
    if args.vllm:
        return f"the server stopped {slowdown_fraction(args.factor):.1%} of every 100 ms"
    if args.base_url:
        return f"{args.slow_base_url}"
    return f"sim serve --step-time-factor {args.factor}"


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
