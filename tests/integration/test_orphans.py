"""Every command that starts workers or servers, killed mid-work by SIGTERM (what CI timeouts
and Slurm send) and by SIGKILL: no descendant outlives it and a pipe reading its output
reaches its end. SIGINT reaches a whole terminal process group; these reach the parent alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import pytest
from runcli import started, tiny_tree

from inferbench.core.cpus import usable_cores
from services import needs_service

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SIGNALS = [signal.SIGTERM, signal.SIGKILL]
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def descendants(pid: int) -> set[int]:
    tree, found, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for whoever adopted it to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    return "?"


@dataclass
class Watched:
    """The CLI in a subprocess, its stdout and stderr one pipe drained by a thread."""

    proc: subprocess.Popen[bytes]
    output: bytearray
    eof: threading.Event
    seen: set[int]

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace")


@contextlib.contextmanager
def cli(args: list[str], cwd: Path) -> Iterator[Watched]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferbench.cli.main", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "COLUMNS": "200"},
        start_new_session=True,  # the test's own process group is not signalled
    )
    watched = Watched(proc, bytearray(), threading.Event(), set())

    def drain() -> None:
        assert proc.stdout is not None
        while chunk := proc.stdout.read1(65536):
            watched.output += chunk
        watched.eof.set()

    threading.Thread(target=drain, daemon=True).start()
    try:
        yield watched
    finally:  # whatever a failing test left behind
        for pid in watched.seen | {proc.pid}:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)


def kill_mid_work(
    watched: Watched, sig: int, ready: Callable[[set[int]], bool], timeout: float = 120
) -> None:
    """Wait until `ready(descendants)`, send `sig` to the CLI alone, check what is left."""
    proc = watched.proc
    deadline = time.monotonic() + timeout
    while True:
        now = descendants(proc.pid)
        watched.seen |= now
        if ready(now):
            break
        assert proc.poll() is None, f"ended before the work began:\n{watched.text}"
        assert time.monotonic() < deadline, f"the work never began:\n{watched.text}"
        time.sleep(0.05)
    watched.seen |= descendants(proc.pid)
    os.kill(proc.pid, sig)
    # a run cleans up as after a second Ctrl-C (cut the point, stop the server, write the
    # state); once, on a loaded 2-core CI machine, that took over 60 s
    code = proc.wait(timeout=180)
    assert watched.eof.wait(30), "a pipe reading its output never ended"
    deadline = time.monotonic() + 30
    while left := [pid for pid in watched.seen if alive(pid)]:
        assert time.monotonic() < deadline, "left running: " + "; ".join(
            f"{pid}: {_cmdline(pid)}" for pid in left
        )
        time.sleep(0.1)
    if sig == signal.SIGKILL:
        assert code == -signal.SIGKILL
    else:  # cleaned up as after a Ctrl-C, no traceback
        assert code in (128 + signal.SIGTERM, 0), f"exit {code}:\n{watched.text}"
        assert "Traceback" not in watched.text, watched.text


def _after(seconds: float, then: Callable[[set[int]], bool]) -> Callable[[set[int]], bool]:
    start = time.monotonic()
    return lambda pids: time.monotonic() - start >= seconds and then(pids)


@pytest.mark.skipif(usable_cores() < 2, reason="the parallel parse needs two cores")
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_results_ingest(tmp_path: Path, sig: int) -> None:
    # Hard links to one big result file: a folder of thousands of units made in no time,
    # each read and parsed in full by the parallel parse workers.
    folder = tmp_path / "results"
    folder.mkdir()
    big = tmp_path / "big.json"
    big.write_text('{"itls": [' + ",".join(["0.0125"] * 400_000) + "]}")
    for k in range(4000):
        os.link(big, folder / f"r{k:05d}.json")
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with cli(["results", "ingest", str(folder), "--db", db], tmp_path) as run:
        kill_mid_work(run, sig, lambda pids: len(pids) >= 2)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_bench_workers(
    tmp_path: Path, sig: int, sim_serve: Callable[..., contextlib.AbstractContextManager[str]]
) -> None:
    with sim_serve(64, 2048, 4096) as url:
        args = ["bench", "--base-url", url, "--model", MODEL, "--isl", "64", "--osl", "2048",
                "--concurrency", "8", "--num-prompts", "400", "--workers", "2",
                "--disable-tqdm", "--output", str(tmp_path / "r.json")]  # fmt: skip
        with cli(args, tmp_path) as run:
            kill_mid_work(run, sig, _after(2.0, lambda pids: len(pids) >= 2))


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_replay(
    tmp_path: Path, sig: int, sim_serve: Callable[..., contextlib.AbstractContextManager[str]]
) -> None:
    with sim_serve(64, 256, 65536) as url:
        args = ["replay", "--base-url", url, "--model", MODEL, "--concurrency", "4",
                "--synth", "sessions=50,turns=20,delay=0", "--sessions", "50"]  # fmt: skip
        with cli(args, tmp_path) as run:
            kill_mid_work(run, sig, _after(2.0, lambda pids: True))


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_sim_serve(tmp_path: Path, sig: int) -> None:
    args = ["sim", "serve", "--port", "0", "--model", MODEL, "--gpu", "h100", "--isl", "64",
            "--osl", "64"]  # fmt: skip
    with cli(args, tmp_path) as run:
        kill_mid_work(run, sig, lambda pids: "listening on" in run.text)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_run_server_and_bench(tmp_path: Path, sig: int) -> None:
    tree = tiny_tree(tmp_path / "tree", osl=2048)
    runs = tmp_path / "runs"
    # real-time serving: a server and a bench that live while the signal arrives
    args = ["run", "--root", str(tree), "--engine", "sim", "--sim-realtime", "--max-prompts",
            "64", "--runs-dir", str(runs)]  # fmt: skip

    def point_running(pids: set[int]) -> bool:
        dirs = [p for p in runs.iterdir() if p.is_dir()] if runs.is_dir() else []
        return bool(pids) and len(dirs) == 1 and started(dirs[0]) > 0

    with cli(args, tmp_path) as run:
        kill_mid_work(run, sig, point_running)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_run_script_server_and_bench(tmp_path: Path, sig: int) -> None:
    """The tree's own script starts the server in the background (`sim serve ... &`) and
    the client in the foreground: a SIGKILLed `run` takes both with it."""
    from launch.script_tree import SIM_CMD, write_tree

    tree = tmp_path / "tree"
    write_tree(tree, SIM_CMD.replace("{python}", sys.executable))
    master = tree / "configs" / "nvidia-master.yaml"  # long points: 4096 real-time tokens
    master.write_text(master.read_text().replace("osl: 32", "osl: 4096"))
    args = ["run", "--root", str(tree), "--runs-dir", str(tmp_path / "runs")]

    def benching(pids: set[int]) -> bool:
        lines = [_cmdline(p) for p in pids]
        return any("sim serve" in c for c in lines) and any(" bench " in c for c in lines)

    with cli(args, tmp_path) as run:
        kill_mid_work(run, sig, _after(1.0, benching))


@needs_service(find_spec("lm_eval") is None, "lm-eval is not installed here")
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_eval_lm_eval(
    tmp_path: Path, sig: int, sim_serve: Callable[..., contextlib.AbstractContextManager[str]]
) -> None:
    dataset = tmp_path / "gsm8k.jsonl"
    rows = [{"question": f"What is {k} + {k}?", "answer": f"#### {2 * k}"} for k in range(200)]
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with sim_serve(256, 256, 8192) as url:
        args = ["eval", "--base-url", url, "--model", MODEL, "--task", "gsm8k",
                "--dataset", str(dataset), "--output-dir", str(tmp_path / "out")]  # fmt: skip
        with cli(args, tmp_path) as run:
            kill_mid_work(run, sig, lambda pids: any("lm_eval" in _cmdline(p) for p in pids))
