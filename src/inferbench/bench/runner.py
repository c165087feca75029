"""Run one load point over one or several worker processes and gather its records.

Workers start, build their requests and warm up; then the parent gives every
worker the same start instant `t0` (the monotonic clock is shared by all
processes of a machine), and records come back in compact batches while the
point runs. Ctrl-C or a crashed worker keeps every record already received and
marks the point incomplete.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import pickle
import signal
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, cast

from inferbench.bench.records import FailureKind, RequestRecord
from inferbench.bench.worker import WorkerTask, run_worker
from inferbench.core.errors import InputError
from inferbench.core.lifetime import die_with_parent

START_DELAY_S = 0.05  # lets every worker see t0 before it arrives
STOP_GRACE_S = 10.0

ProgressFn = Callable[[int], None]  # records finished so far


@dataclass
class PointRun:
    """The raw outcome of one point: records, the window, and whether it finished."""

    records: list[RequestRecord] = field(default_factory=list)
    t0: float = 0.0
    end: float = 0.0
    complete: bool = True
    reason: str | None = None

    @property
    def duration_s(self) -> float:
        return max(0.0, self.end - self.t0)


def pack(records: list[RequestRecord]) -> bytes:
    """Compact wire form: stamps as raw doubles, tokens as raw ints."""
    rows = [
        (
            r.index,
            r.scheduled,
            r.sent,
            r.intended_input_tokens,
            r.intended_output_tokens,
            r.ok,
            array("d", r.chunk_times).tobytes(),
            None if all(k == 1 for k in r.chunk_tokens) else array("i", r.chunk_tokens).tobytes(),
            len(r.chunk_tokens),
            r.input_tokens,
            r.output_tokens,
            r.done,
            r.failure.value if r.failure else None,
            r.error,
            r.per_chunk_usage,
            r.generated_text,
            r.worker,
        )
        for r in records
    ]
    return pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(data: bytes) -> list[RequestRecord]:
    out = []
    for row in pickle.loads(data):
        times, tokens = array("d"), array("i")
        times.frombytes(row[6])
        if row[7] is None:
            token_list = [1] * row[8]
        else:
            tokens.frombytes(row[7])
            token_list = tokens.tolist()
        out.append(
            RequestRecord(
                index=row[0],
                scheduled=row[1],
                sent=row[2],
                intended_input_tokens=row[3],
                intended_output_tokens=row[4],
                ok=row[5],
                chunk_times=times.tolist(),
                chunk_tokens=token_list,
                input_tokens=row[9],
                output_tokens=row[10],
                done=row[11],
                failure=FailureKind(row[12]) if row[12] else None,
                error=row[13],
                per_chunk_usage=row[14],
                generated_text=row[15],
                worker=row[16],
            )
        )
    return out


def _event_loop_runner() -> Callable[[Any], Any]:
    try:
        import uvloop

        return uvloop.run
    except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
        return asyncio.run


class _LocalOutbox:
    def __init__(self, run: PointRun, progress: ProgressFn | None) -> None:
        self.run = run
        self.progress = progress

    async def ready(self) -> float:
        self.run.t0 = time.monotonic() + 0.005
        return self.run.t0

    def emit(self, records: list[RequestRecord]) -> None:
        self.run.records.extend(records)
        if self.progress:
            self.progress(len(self.run.records))


def run_in_process(task: WorkerTask, progress: ProgressFn | None = None) -> PointRun:
    run = PointRun()
    try:
        _event_loop_runner()(run_worker(task, _LocalOutbox(run, progress)))
    except KeyboardInterrupt:
        run.complete, run.reason = False, "interrupted"
    except InputError:
        raise
    except Exception as exc:  # a bug must not lose the requests already measured
        run.complete, run.reason = False, f"client crashed: {type(exc).__name__}: {exc}"[:300]
    run.end = max((r.done or r.sent for r in run.records), default=run.t0)
    return run


class _PipeOutbox:
    """A child's outbox; after t0 a message from the parent on the pipe means stop."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.stop: Callable[[], None] | None = None

    def on_stop(self, stop: Callable[[], None]) -> None:
        self.stop = stop

    async def ready(self) -> float:
        self.conn.send(("ready",))
        loop = asyncio.get_running_loop()
        message = await loop.run_in_executor(None, self.conn.recv)
        loop.add_reader(self.conn.fileno(), self._stop_requested, loop)
        # uvloop (libuv's uv_poll_init) turns the watched fd non-blocking, and it is also
        # the pipe the records go out on: a batch larger than the pipe buffer then fails
        # half-written (EAGAIN) and the parent unpickles garbage. Watching works as well
        # on a blocking fd, so make it blocking again.
        os.set_blocking(self.conn.fileno(), True)
        return float(message[1])

    def _stop_requested(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.remove_reader(self.conn.fileno())
        if self.stop is not None:
            self.stop()

    def emit(self, records: list[RequestRecord]) -> None:
        self.conn.send(("records", pack(records)))


def _child(task: WorkerTask, conn: Connection, parent: int) -> None:
    """Worker process entry: the parent handles Ctrl-C and tells workers to stop; a worker
    dies with its parent (SIGTERM or SIGKILL reach the parent alone)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(signal.SIGKILL, parent)
    outbox = _PipeOutbox(conn)
    try:
        _event_loop_runner()(run_worker(task, outbox, outbox.on_stop))
        conn.send(("done",))
    except InputError as exc:
        conn.send(("input_error", exc.message, exc.hint))
    except BaseException as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"[:300]))
    finally:
        conn.close()


def run_in_processes(tasks: list[WorkerTask], progress: ProgressFn | None = None) -> PointRun:
    ctx = mp.get_context("spawn")
    run = PointRun()
    conns: list[Connection] = []
    procs = []
    for task in tasks:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_child, args=(task, child, os.getpid()), daemon=True)
        proc.start()
        child.close()
        conns.append(parent)
        procs.append(proc)
    try:
        _gather(conns, run, progress)
    except KeyboardInterrupt:
        run.complete, run.reason = False, "interrupted"
        _stop(conns, run, progress)
    finally:
        for proc in procs:
            proc.join(timeout=2)
            if proc.is_alive():
                proc.terminate()
        for conn in conns:
            conn.close()
    run.end = max((r.done or r.sent for r in run.records), default=run.t0)
    return run


def _gather(conns: list[Connection], run: PointRun, progress: ProgressFn | None) -> None:
    waiting = set(conns)
    while waiting:  # everyone prepared and warmed up
        for conn in wait(list(waiting)):
            message = _recv(conn, run)
            if message is None or message[0] != "ready":
                raise _failure(message, run)
            waiting.discard(conn)
    run.t0 = time.monotonic() + START_DELAY_S
    for conn in conns:
        conn.send(("start", run.t0))
    live = set(conns)
    while live:
        for conn in wait(list(live), timeout=0.5):
            message = _recv(conn, run)
            if message is None or message[0] in ("done", "error"):
                live.discard(conn)
                if message is None or message[0] == "error":
                    run.complete = False
                    run.reason = "client worker died" if message is None else str(message[1])
            elif message[0] == "records":
                run.records.extend(unpack(message[1]))
                if progress:
                    progress(len(run.records))


def _recv(conn: Any, run: PointRun) -> tuple[Any, ...] | None:
    try:
        message: tuple[Any, ...] = conn.recv()
    except (EOFError, OSError):
        return None
    return message


def _failure(message: tuple[Any, ...] | None, run: PointRun) -> Exception:
    if message is not None and message[0] == "input_error":
        return InputError(str(message[1]), hint=message[2])
    return RuntimeError(f"client worker failed before the start: {message}")


def _stop(conns: list[Connection], run: PointRun, progress: ProgressFn | None) -> None:
    """Ask workers to stop and keep what they send back within the grace period."""
    for conn in conns:
        with contextlib.suppress(OSError):
            conn.send(("stop",))
    deadline = time.monotonic() + STOP_GRACE_S
    live = set(conns)
    while live and time.monotonic() < deadline:
        for ready in wait(list(live), timeout=0.5):
            conn = cast(Connection, ready)
            message = _recv(conn, run)
            if message is None or message[0] != "records":
                live.discard(conn)
            else:
                run.records.extend(unpack(message[1]))
                if progress:
                    progress(len(run.records))
