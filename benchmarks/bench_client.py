"""Is `inferbench bench` fast and accurate enough not to be what is measured?

Server (`benchmarks/harness/testserver.py`) pinned to core 0, client to
core 1, every scenario against a fresh server:

- firehose: each whole 1,024-token stream written at once, concurrency 256;
  chunks per second delivered (target: at least 300k on one client core).
- held: concurrency 1,024 and 4,096 with a slow schedule; the most streams the
  server saw open at once and the client's own in-flight count (target: held).
- timing: 50 ms TTFT then one token every 5 ms at concurrency 256, and every
  20 ms at concurrency 1,024; p99 of (client receive stamp - server send stamp)
  per chunk, matched by request id (target: under 2 ms), and TTFT read vs 50 ms.

Chunks per second are counted on the server (chunks sent over first-to-last
send), so every client is rated the same way. With `--peers DIR`, aiperf and
guidellm are installed from PyPI into throwaway virtual environments under DIR
(reused when present), and InferenceX's own sa-bench
(`utils/bench_serving/benchmark_serving.py` of the upstream tree, `--sa-bench DIR`)
runs from its source in a venv with its imports (aiohttp, numpy, tqdm, transformers,
no PyTorch); all run against the same servers, and the ratios are printed.

    .venv/bin/python benchmarks/bench_client.py [--repeats 3] [--peers PEERS_DIR]
        [--only firehose,held,timing] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from harness import testserver
from inferbench.bench.api import BenchOptions, PointMeasurement, run_point
from inferbench.bench.records import RequestRecord
from inferbench.bench.schedule import LoadPoint
from inferbench.bench.settings import ClientOptions, Endpoint
from inferbench.bench.workload import RandomWorkload

SERVER_CORE, CLIENT_CORE = 0, 1
TREE_ENV = "INFERBENCH_INFERENCEX_TREE"  # an InferenceX checkout: sa-bench is in it
SA_BENCH_DEPS = ("aiohttp", "numpy", "tqdm", "transformers", "huggingface_hub", "pillow")
ISL = 16
TTFT_S = 0.05
RECEIVE_STAMPS: list[Literal["kernel", "user"]] = ["kernel"]  # set from --receive-stamps


@dataclass
class Server:
    port: int
    proc: subprocess.Popen[str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str) -> dict[str, object]:
        with urllib.request.urlopen(self.url + path, timeout=60) as resp:
            data: dict[str, object] = json.loads(resp.read())
        return data


@contextmanager
def server(*args: str) -> Iterator[Server]:
    """A fresh test server on SERVER_CORE; yields once it printed its port."""
    cmd = [sys.executable, testserver.__file__, *args]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.sched_setaffinity(0, {SERVER_CORE}),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("port "):
            raise RuntimeError(f"test server did not start: {line!r}")
        yield Server(int(line.split()[1]), proc)
    finally:
        proc.terminate()
        proc.wait(10)


def _pin_client() -> None:
    os.sched_setaffinity(0, {CLIENT_CORE})


def _cpu_s() -> float:
    """This process's CPU and that of its finished children (the client's worker processes)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def _int(value: object) -> int:
    assert isinstance(value, int)
    return value


def _server_rate(summary: dict[str, object]) -> float:
    first, last = summary["first_send"], summary["last_send"]
    chunks = summary["chunks_sent"]
    assert isinstance(first, float) and isinstance(last, float) and isinstance(chunks, int)
    return chunks / max(last - first, 1e-9)


@dataclass
class Reading:
    """One client's figures for one scenario."""

    client: str
    scenario: str
    chunks_per_s: list[float] = field(default_factory=list)  # the server's count
    client_chunks_per_s: list[float] = field(default_factory=list)  # the client's own window
    cpu_share: list[float] = field(default_factory=list)  # client CPU s / wall s
    cpu_ms_per_stream: list[float] = field(default_factory=list)  # client CPU ms per stream
    server_max_open: list[int] = field(default_factory=list)
    client_max_in_flight: list[int] = field(default_factory=list)
    recv_error_p50_ms: list[float] = field(default_factory=list)
    recv_error_p99_ms: list[float] = field(default_factory=list)
    recv_error_p999_ms: list[float] = field(default_factory=list)
    ttft_median_ms: list[float] = field(default_factory=list)
    peer_ttft_median_ms: list[float] = field(default_factory=list)  # as the peer reports it
    failed: list[int] = field(default_factory=list)
    note: str = ""


def _inferbench_point(
    srv: Server, concurrency: int, osl: int, prompts: int, workers: int | None
) -> tuple[PointMeasurement, float, float]:
    endpoint = Endpoint(base_url=srv.url, model="m")
    workload = RandomWorkload(isl=ISL, osl=osl)
    point = LoadPoint(concurrency=concurrency, num_prompts=prompts, warmups=0)
    client = ClientOptions(workers=workers, request_timeout_s=120, receive_stamps=RECEIVE_STAMPS[0])
    options = BenchOptions(client=client)
    cpu0, wall0 = _cpu_s(), time.monotonic()
    outcome = run_point(endpoint, workload, point, options)
    return outcome, _cpu_s() - cpu0, time.monotonic() - wall0


def firehose_inferbench(repeats: int, prompts: int) -> Reading:
    reading = Reading("inferbench", "firehose c256")
    for _ in range(repeats):
        with server("--firehose", "--no-stamps") as srv:
            outcome, cpu, wall = _inferbench_point(srv, 256, 1024, prompts, workers=1)
            summary = srv.get("/summary")
        reading.chunks_per_s.append(_server_rate(summary))
        chunks = sum(len(r.chunk_times) for r in outcome.run.records)
        reading.client_chunks_per_s.append(chunks / outcome.run.duration_s)
        reading.cpu_share.append(cpu / wall)
        reading.failed.append(outcome.result.inferbench.failed)
    return reading


def held_schedule(concurrency: int) -> tuple[tuple[str, ...], int]:
    """(server args, output tokens): slow enough that one server core keeps up.

    Up to 4,096 streams: 200 ms TTFT, then a token every 50 ms, 40 tokens (20k chunks/s
    at 1,024). Beyond: 1 s TTFT, a token every 500 ms, 12 tokens, so 16,384 streams ask
    the server for 33k chunks/s, about what one core of this machine sends."""
    if concurrency <= 4096:
        return ("--ttft", "0.2", "--itl", "0.05", "--no-stamps"), 40
    return ("--ttft", "1.0", "--itl", "0.5", "--no-stamps"), 12


def held_inferbench(concurrency: int, repeats: int, workers: int | None) -> Reading:
    """`concurrency` streams open at once: the most the server saw, the client's own count,
    and the client's CPU per stream (all its processes)."""
    reading = Reading("inferbench", f"held c{concurrency}")
    args, osl = held_schedule(concurrency)
    for _ in range(repeats):
        with server(*args) as srv:
            outcome, cpu, wall = _inferbench_point(srv, concurrency, osl, concurrency, workers)
            summary = srv.get("/summary")
        result = outcome.result
        reading.server_max_open.append(_int(summary["max_active"]))
        reading.client_max_in_flight.append(result.inferbench.in_flight.max)
        reading.cpu_share.append(cpu / wall)
        reading.cpu_ms_per_stream.append(1000 * cpu / concurrency)
        reading.failed.append(result.inferbench.failed)
    return reading


def _receive_errors(records: list[RequestRecord], stamps: object) -> np.ndarray:
    """Per chunk: client receive stamp - server send stamp, matched by request index."""
    assert isinstance(stamps, dict)
    by_index: dict[int, list[float]] = {}
    for rid, sent in stamps.items():
        if "-w-" in rid:
            continue  # warm-ups
        by_index[int(rid.rsplit("-", 1)[1])] = sent
    errors: list[float] = []
    for record in records:
        sent = by_index.get(record.index)
        received = record.chunk_times
        if sent is None or len(sent) != len(received):
            continue
        errors.extend(np.subtract(received, sent).tolist())
    return np.asarray(errors) * 1000.0


def timing_inferbench(concurrency: int, itl_s: float, osl: int, repeats: int) -> Reading:
    label = f"timing c{concurrency} itl {itl_s * 1000:g} ms"
    reading = Reading(f"inferbench ({RECEIVE_STAMPS[0]} stamps)", label)
    for _ in range(repeats):
        with server("--ttft", str(TTFT_S), "--itl", str(itl_s)) as srv:
            # beyond 2,048 streams: one client process per core, one request per stream
            big = concurrency > 2048
            prompts = concurrency if big else 2 * concurrency
            workers = None if big else 1
            outcome, cpu, wall = _inferbench_point(srv, concurrency, osl, prompts, workers)
            data = srv.get("/stamps")
        errors = _receive_errors(outcome.run.records, data["stamps"])
        result = outcome.result
        reading.recv_error_p50_ms.append(float(np.percentile(errors, 50)))
        reading.recv_error_p99_ms.append(float(np.percentile(errors, 99)))
        reading.recv_error_p999_ms.append(float(np.percentile(errors, 99.9)))
        reading.ttft_median_ms.append(result.sa.median_ttft_ms)
        reading.server_max_open.append(_int(data["max_active"]))
        reading.client_max_in_flight.append(result.inferbench.in_flight.max)
        reading.cpu_share.append(cpu / wall)
        reading.failed.append(result.inferbench.failed)
    return reading


# --- peers -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Peer:
    name: str
    package: str
    venv: Path
    script: Path | None = None  # sa-bench runs from its source file

    @property
    def bin(self) -> Path:
        return self.venv / "bin" / ("python" if self.script else self.name)

    def version(self) -> str:
        if self.script is not None:
            return "upstream"
        out = subprocess.run(
            [str(self.venv / "bin" / "python"), "-m", "pip", "show", self.package],
            capture_output=True,
            text=True,
        ).stdout
        return next((x.split()[1] for x in out.splitlines() if x.startswith("Version:")), "?")


def install_peers(root: Path, names: list[str], sa_bench: Path) -> list[Peer]:
    """Throwaway venvs under root; a peer that does not install is skipped, and said so."""
    peers = []
    for name in names:
        venv = root / name
        if name == "sa-bench":
            script = sa_bench / "benchmark_serving.py"
            if not script.is_file():
                print(f"skipping sa-bench: {script} not found (--sa-bench DIR)")
                continue
            peer, packages = Peer(name, name, venv, script), list(SA_BENCH_DEPS)
        else:
            peer, packages = Peer(name, name, venv), [name]
        marker = venv / ".installed"
        if not marker.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            pip = subprocess.run(
                [str(venv / "bin" / "pip"), "install", "-q", *packages],
                capture_output=True,
                text=True,
            )
            if pip.returncode != 0 or not peer.bin.exists():
                print(f"skipping {name}: pip install failed\n{pip.stderr[-800:]}")
                continue
            marker.touch()
        peers.append(peer)
    return peers


def tokenizer_dir(root: Path) -> Path:
    """A tiny local word-level tokenizer (peers need one to make prompts; no hub download).

    Words outside the vocabulary map to "[UNK]", which is deliberately not declared a
    special token: guidellm makes its prompts from English text and decodes them with
    `skip_special_tokens=True`, so a special "[UNK]" came out as an empty prompt. As a
    plain token, a 16-token prompt decodes to 16 whitespace-separated words, which is
    also what the test server counts. Rewritten every time (cheap), so a stale copy from
    an older version of this script is never reused.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers

    out = root / "tokenizer"
    vocab = {"[UNK]": 0, "<s>": 1, "</s>": 2} | {f"w{i}": i + 3 for i in range(4000)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<s>",
                "eos_token": "</s>",
                "model_max_length": 1 << 20,
            }
        )
    )
    (out / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": 4003}))
    return out


# where each peer writes its summary, relative to its output directory
_PEER_SUMMARY = {
    "aiperf": "profile_export_aiperf.json",
    "guidellm": "benchmarks.json",
    "sa-bench": "sa.json",
}


def _peer_command(
    peer: Peer, srv: Server, tok: Path, conc: int, osl: int, n: int, out: Path
) -> list[str]:
    """Closed loop at `conc`, `n` requests, ISL-token prompts, exactly `osl` tokens, no warm-up.

    aiperf 0.13: `--use-legacy-max-tokens` because by default it sends only
    `max_completion_tokens`, which the test server ignores (16 tokens then);
    `ignore_eos` goes in through `--extra-inputs`. No warm-up is its default (no
    `--warmup-request-count`). Server-metrics scraping (/metrics) and GPU telemetry
    (DCGM on localhost:9400) are off, as the test server has neither.
    guidellm 0.8.1 (the `run` command and `kind=...` option syntax): with
    `output_tokens` set it sends `max_tokens`, `ignore_eos: true` and `stop: null`
    itself, and asks for `continuous_usage_stats` (usage on every chunk). Its
    warm-up and cool-down default to none.
    """
    if peer.script is not None:  # sa-bench, as run_benchmark_serving calls it
        return [
            str(peer.bin),
            str(peer.script),
            "--model", "m",
            "--tokenizer", str(tok),
            "--backend", "vllm",
            "--base-url", srv.url,
            "--dataset-name", "random",
            "--random-input-len", str(ISL),
            "--random-output-len", str(osl),
            "--random-range-ratio", "1",
            "--num-prompts", str(n),
            "--max-concurrency", str(conc),
            "--request-rate", "inf",
            "--ignore-eos",
            "--save-result",
            "--percentile-metrics", "ttft,tpot,itl,e2el",
            "--result-dir", str(out),
            "--result-filename", _PEER_SUMMARY["sa-bench"],
            "--disable-tqdm",
            "--random-num-workers", "1",
        ]  # fmt: skip
    if peer.name == "aiperf":
        return [
            str(peer.bin),
            "profile",
            "--model",
            "m",
            "--url",
            srv.url,
            "--endpoint-type",
            "completions",
            "--streaming",
            "--tokenizer",
            str(tok),
            "--concurrency",
            str(conc),
            "--request-count",
            str(n),
            "--synthetic-input-tokens-mean",
            str(ISL),
            "--synthetic-input-tokens-stddev",
            "0",
            "--output-tokens-mean",
            str(osl),
            "--output-tokens-stddev",
            "0",
            "--use-legacy-max-tokens",
            "--extra-inputs",
            "ignore_eos:true",
            "--no-server-metrics",
            "--no-gpu-telemetry",
            "--artifact-dir",
            str(out),
            "--ui-type",
            "none",
        ]
    return [
        str(peer.bin),
        "run",
        "--backend",
        f"kind=openai_http,target={srv.url},model=m,request_format=/v1/completions,stream=true",
        "--tokenizer",
        f"kind=huggingface_auto,model={tok}",
        "--profile",
        f"kind=concurrent,streams={conc}",
        "--constraint",
        f"kind=max_requests,count={n}",
        "--data",
        f"kind=synthetic_text,prompt_tokens={ISL},output_tokens={osl}",
        "--output",
        f"kind=json,path={out / _PEER_SUMMARY['guidellm']}",
        "--disable-console-interactive",
    ]


def _peer_env(peer: Peer) -> dict[str, str]:
    """guidellm runs hub-offline; aiperf must not: with HF_HUB_OFFLINE (or
    TRANSFORMERS_OFFLINE) set it resolves even a local tokenizer directory through
    `snapshot_download(local_files_only=True)`, which rejects a path as a repo id
    (HFValidationError). Online it sees the path is local and never calls the hub."""
    env = dict(os.environ)
    if peer.script is not None:
        return env | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if peer.name == "aiperf":
        env.pop("HF_HUB_OFFLINE", None)
        env.pop("TRANSFORMERS_OFFLINE", None)
        env["HF_HUB_DISABLE_TELEMETRY"] = "1"
    else:
        env |= {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return env


@dataclass(frozen=True)
class PeerFigures:
    """What a peer itself reports for a run."""

    ttft_median_ms: float
    output_tokens_per_s: float  # one token per chunk from the test server
    completed: int


def _peer_figures(peer: Peer, out: Path) -> PeerFigures:
    """Read the peer's own summary file.

    aiperf: profile_export_aiperf.json, `time_to_first_token.p50` (ms),
    `output_token_throughput.avg` (tokens/s), `request_count.avg` (completed requests).
    guidellm: benchmarks.json, `benchmarks[0].metrics`:
    `time_to_first_token_ms.successful.median`, `output_tokens_per_second.successful.mean`,
    `request_totals.successful`.
    """
    data = json.loads((out / _PEER_SUMMARY[peer.name]).read_text())
    if peer.script is not None:  # sa-bench's own result file (ms, tokens/s)
        return PeerFigures(
            ttft_median_ms=float(data["median_ttft_ms"]),
            output_tokens_per_s=float(data["output_throughput"]),
            completed=int(data["completed"]),
        )
    if peer.name == "aiperf":
        assert data["time_to_first_token"]["unit"] == "ms"
        return PeerFigures(
            ttft_median_ms=float(data["time_to_first_token"]["p50"]),
            output_tokens_per_s=float(data["output_token_throughput"]["avg"]),
            completed=int(data["request_count"]["avg"]),
        )
    metrics = data["benchmarks"][0]["metrics"]
    return PeerFigures(
        ttft_median_ms=float(metrics["time_to_first_token_ms"]["successful"]["median"]),
        output_tokens_per_s=float(metrics["output_tokens_per_second"]["successful"]["mean"]),
        completed=int(metrics["request_totals"]["successful"]),
    )


def run_peer(
    peer: Peer,
    scenario: str,
    server_args: tuple[str, ...],
    shape: tuple[int, int, int],
    tok: Path,
    repeats: int,
) -> Reading:
    """`repeats` peer runs, each on a fresh server (shape: concurrency, osl, requests)."""
    reading = Reading(f"{peer.name} {peer.version()}", scenario)
    for _ in range(repeats):
        _run_peer_once(peer, reading, server_args, *shape, tok)
    return reading


def _run_peer_once(
    peer: Peer,
    reading: Reading,
    server_args: tuple[str, ...],
    conc: int,
    osl: int,
    n: int,
    tok: Path,
) -> None:
    """One run: the server's chunk rate and most open streams, and the peer's own TTFT
    median, output-token rate and completed count."""
    scenario = reading.scenario
    with tempfile.TemporaryDirectory() as tmp, server(*server_args) as srv:
        out = Path(tmp) / "out"
        out.mkdir()  # sa-bench writes into --result-dir but does not create it
        cmd = _peer_command(peer, srv, tok, conc, osl, n, out)
        started = time.monotonic()
        proc = subprocess.run(
            ["taskset", "-c", str(CLIENT_CORE), *cmd],
            capture_output=True,
            text=True,
            env=_peer_env(peer),
            timeout=900,
            cwd=tmp,
        )
        wall = time.monotonic() - started
        summary = srv.get("/summary")
        if proc.returncode != 0 or not summary["chunks_sent"]:
            reading.note = f"exit {proc.returncode}: {(proc.stderr or proc.stdout)[-600:]}"
            print(f"{peer.name} failed on {scenario}:\n{reading.note}")
            return
        reading.chunks_per_s.append(_server_rate(summary))
        reading.server_max_open.append(_int(summary["max_active"]))
        notes = [f"{wall:.1f} s wall for the whole command"]
        try:
            figures = _peer_figures(peer, out)
        except (OSError, ValueError, KeyError, IndexError, TypeError, AssertionError) as exc:
            notes.append(f"peer summary unreadable: {exc!r}")
        else:
            reading.peer_ttft_median_ms.append(figures.ttft_median_ms)
            reading.client_chunks_per_s.append(figures.output_tokens_per_s)
            reading.failed.append(n - figures.completed)
        requests, chunks = _int(summary["requests"]), _int(summary["chunks_sent"])
        if requests != n or chunks != n * osl:
            expected = f"expected {n}, {n * osl}"
            notes.append(f"server saw {requests} requests, {chunks} chunks ({expected})")
        reading.note = "; ".join(notes)


# --- report ------------------------------------------------------------------------------


def _median(values: list[float] | list[int]) -> str:
    if not values:
        return "-"
    med = statistics.median(values)
    spread = f" ({min(values):.4g}-{max(values):.4g})" if len(values) > 1 else ""
    return f"{med:.4g}{spread}"


def report(readings: list[Reading]) -> None:
    cols: list[tuple[str, Callable[[Reading], str]]] = [
        ("client", lambda r: r.client),
        ("scenario", lambda r: r.scenario),
        ("chunks/s (server)", lambda r: _median(r.chunks_per_s)),
        ("chunks/s (client)", lambda r: _median(r.client_chunks_per_s)),
        ("client CPU", lambda r: _median(r.cpu_share)),
        ("client CPU ms/stream", lambda r: _median(r.cpu_ms_per_stream)),
        ("server max open", lambda r: _median(r.server_max_open)),
        ("client max in flight", lambda r: _median(r.client_max_in_flight)),
        ("recv err p50 ms", lambda r: _median(r.recv_error_p50_ms)),
        ("recv err p99 ms", lambda r: _median(r.recv_error_p99_ms)),
        ("recv err p99.9 ms", lambda r: _median(r.recv_error_p999_ms)),
        ("TTFT median ms", lambda r: _median(r.ttft_median_ms)),
        ("peer's own TTFT median ms", lambda r: _median(r.peer_ttft_median_ms)),
        ("failed", lambda r: _median(r.failed)),
    ]
    print("| " + " | ".join(c for c, _ in cols) + " |")
    print("|" + "---|" * len(cols))
    for r in readings:
        print("| " + " | ".join(f(r) for _, f in cols) + " |")
    ours = next((r for r in readings if r.client == "inferbench" and r.chunks_per_s), None)
    for r in readings:
        if ours and r is not ours and r.chunks_per_s and r.scenario == ours.scenario:
            ratio = statistics.median(ours.chunks_per_s) / statistics.median(r.chunks_per_s)
            print(f"inferbench / {r.client} ({r.scenario}): {ratio:.2f}x")
    for r in readings:
        if r.note:
            print(f"{r.client} {r.scenario}: {r.note}")


def _sa_bench_dir(given: Path | None, peers: list[str]) -> Path:
    """--sa-bench, else utils/bench_serving of $INFERBENCH_INFERENCEX_TREE (no default tree)."""
    if given is not None or "sa-bench" not in peers:
        return given or Path(".")
    if not os.environ.get(TREE_ENV):
        raise SystemExit(f"sa-bench: pass --sa-bench DIR or set {TREE_ENV}")
    return Path(os.environ[TREE_ENV]) / "utils" / "bench_serving"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--firehose-prompts", type=int, default=2048)
    parser.add_argument("--only", default="firehose,held,timing")
    parser.add_argument("--peers", type=Path, help="install and run the peer clients here")
    parser.add_argument(
        "--peer-names", default="sa-bench,aiperf,guidellm", help="which peers to run"
    )
    parser.add_argument(
        "--sa-bench",
        type=Path,
        default=None,
        help=f"InferenceX's utils/bench_serving (default: under ${TREE_ENV})",
    )
    parser.add_argument("--receive-stamps", choices=["kernel", "user"], default="kernel")
    parser.add_argument("--peer-repeats", type=int, default=3)
    parser.add_argument("--peer-firehose-prompts", type=int, default=1024, help="peers are slow")
    parser.add_argument("--no-inferbench", action="store_true", help="peers only")
    parser.add_argument(
        "--held-workers", type=int, default=None, help="client processes (default: auto)"
    )
    parser.add_argument("--held", default="1024,4096", help="concurrencies to hold")
    parser.add_argument(
        "--timing-big",
        action="store_true",
        help="also the receive error at 4,096 (100 ms ITL) and 16,384 (500 ms ITL) streams",
    )
    parser.add_argument("--json", type=Path, help="write the raw readings here")
    args = parser.parse_args()
    if (os.cpu_count() or 1) < 2:
        sys.exit("needs two cores: the server and the client each get one")
    _pin_client()
    RECEIVE_STAMPS[0] = args.receive_stamps
    only = set(args.only.split(","))
    readings: list[Reading] = []
    if args.no_inferbench:
        only_ours: set[str] = set()
    else:
        only_ours = only
    if "firehose" in only_ours:
        readings.append(firehose_inferbench(args.repeats, args.firehose_prompts))
    if "held" in only_ours:
        for conc in (int(c) for c in args.held.split(",")):
            readings.append(held_inferbench(conc, args.repeats, args.held_workers))
    if "timing" in only_ours:
        readings.append(timing_inferbench(256, 0.005, 256, args.repeats))
        readings.append(timing_inferbench(1024, 0.02, 128, args.repeats))
        if args.timing_big:
            readings.append(timing_inferbench(4096, 0.1, 20, args.repeats))
            readings.append(timing_inferbench(16384, 0.5, 8, args.repeats))
    if args.peers is not None:
        names = args.peer_names.split(",")
        peers = install_peers(args.peers, names, _sa_bench_dir(args.sa_bench, names))
        tok = tokenizer_dir(args.peers)
        fh = ("--firehose", "--no-stamps")
        slow = ("--ttft", "0.2", "--itl", "0.05", "--no-stamps")
        timed = ("--ttft", str(TTFT_S), "--itl", "0.005", "--no-stamps")
        for peer in peers:
            runs: list[tuple[str, tuple[str, ...], tuple[int, int, int]]] = []
            if "firehose" in only:
                runs.append(("firehose c256", fh, (256, 1024, args.peer_firehose_prompts)))
            if "held" in only:
                runs += [(f"held c{c}", slow, (c, 40, 2 * c)) for c in (1024, 4096)]
            if "timing" in only:
                runs.append(("timing c256 itl 5 ms", timed, (256, 256, 512)))
            for scenario, server_args, shape in runs:
                readings.append(
                    run_peer(peer, scenario, server_args, shape, tok, args.peer_repeats)
                )
    report(readings)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in readings], indent=1))


if __name__ == "__main__":
    main()
