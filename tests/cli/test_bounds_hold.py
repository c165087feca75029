"""Every bound holds and every writer names its failure (issue 40, items 4 and 6).

- `--duration` bounds `replay` and `bench` on a stalled server, warm-ups included (a warm-up
  against `inferbench sim serve --fault-stall-rate 1` waited for the 600 s request timeout);
- `--extra-body` cannot turn streaming off or set the length (a non-streamed request of
  100,000 tokens waited for the whole request timeout), and its secrets are redacted in the
  result file;
- `sim serve --record-sends` on a full disk (/dev/full: ENOSPC at the write) exits 2 naming
  the option (it exited 0, no file, no message);
- SQLite's read-only and disk-full errors get SQLite's fix, never PostgreSQL's "check that
  the server is running"; a read-only store of an earlier schema can still be read. Read-only
  and full are SQLite's own errors here, raised by `PRAGMA query_only` and `max_page_count`
  (the tests run as root, for whom file modes do not make a file read-only).
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import URL, create_engine, event

from harness.synthetic import SyntheticConfig, sa_bench_result

from .clirun import Ran, run_cli
from .corpus import RESULT_NAME, _result

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


@contextmanager
def _sim_serve(*options: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`inferbench sim serve` on a free loopback port with `options`: (URL, process)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferbench.cli.main", "sim", "serve", "--port", "0",
         "--model", MODEL, "--gpu", "h100", "--isl", "64", "--osl", "8", *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    try:
        assert "listening on" in line, line + (proc.stderr.read() if proc.stderr else "")
        yield line.strip().rsplit(" ", 1)[-1], proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=30)


def _clean(ran: Ran) -> str:
    assert "Traceback" not in ran.text and "internal error" not in ran.text, ran.text
    return ran.text


@pytest.mark.slow  # a simulator server per test: 6-15 s each on a loaded machine
@pytest.mark.timeout(60)
def test_replay_warm_up_ends_with_the_duration_on_a_stalled_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the warm-up session waited for the request timeout (600 s); now the warm-up
    is cut at --duration + grace (1 s here), no window is measured and the result says so."""
    monkeypatch.setattr("inferbench.bench.agentic.replay.DURATION_GRACE_S", 1.0)
    out = tmp_path / "r.json"
    with _sim_serve("--fault-stall-rate", "1") as (url, _):
        started = time.monotonic()
        ran = run_cli(
            ["replay", "--base-url", url, "--model", MODEL, "--synth", "sessions=2",
             "--concurrency", "1", "--duration", "1", "--warmup-sessions", "1",
             "--output", str(out)],
            capsys,
        )  # fmt: skip
        took = time.monotonic() - started
    _clean(ran)
    assert took < 15, took  # 1 s + 1 s grace, not 600 s
    assert ran.code == 1, ran.text  # nothing measured: the run failed, and says why
    bench = json.loads(out.read_text())["inferbench"]
    assert not bench["complete"] and "warm-up" in bench["incomplete_reason"]


@pytest.mark.slow  # a simulator server per test: 6-15 s each on a loaded machine
@pytest.mark.timeout(60)
def test_bench_warm_up_ends_with_the_duration_on_a_stalled_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("inferbench.bench.worker.DURATION_GRACE_S", 1.0)
    out = tmp_path / "b.json"
    with _sim_serve("--fault-stall-rate", "1") as (url, _):
        started = time.monotonic()
        ran = run_cli(
            ["bench", "--base-url", url, "--model", MODEL, "--isl", "8", "--osl", "8",
             "--concurrency", "1", "--duration", "1", "--warmups", "1", "--workers", "1",
             "--result-file", str(out)],
            capsys,
        )  # fmt: skip
        took = time.monotonic() - started
    text = _clean(ran)
    assert took < 15, took
    assert ran.code == 1 and "warm-up still running" in text, text
    failures = json.loads(out.read_text())["inferbench"]["failures"]
    assert failures.get("interrupted") == 1, failures


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ('{"stream": false, "max_tokens": 100000}', "stream"),
        ('{"stream": false}', "stream"),
        ('{"max_tokens": 100000}', "max_tokens"),
        ('{"max_completion_tokens": 5}', "max_completion_tokens"),
    ],
)
def test_extra_body_cannot_turn_streaming_off_or_set_the_length(
    body: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before any request (it waited for the 600 s request timeout)."""
    started = time.monotonic()
    ran = run_cli(
        ["bench", "--base-url", "http://127.0.0.1:9", "--model", "m", "--isl", "8",
         "--osl", "8", "--concurrency", "1", "--num-prompts", "1", "--extra-body", body],
        capsys,
    )  # fmt: skip
    text = _clean(ran)
    assert ran.code == 2 and "--extra-body" in text and named in text and "fix:" in text, text
    assert time.monotonic() - started < 10


@pytest.mark.slow  # a simulator server per test: 6-15 s each on a loaded machine
@pytest.mark.timeout(60)
def test_secrets_inside_extra_body_never_reach_the_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = {"api_key": "sk-live-0123456789", "auth": {"token": "tok-9876543210"}, "top_k": 1}
    out = tmp_path / "r.json"
    with _sim_serve() as (url, _):
        ran = run_cli(
            ["bench", "--base-url", url, "--model", MODEL, "--isl", "8", "--osl", "8",
             "--concurrency", "1", "--num-prompts", "2", "--warmups", "0",
             "--extra-body", json.dumps(body), "--result-file", str(out)],
            capsys,
        )  # fmt: skip
    text = _clean(ran)
    assert ran.code == 0, text
    written = out.read_text()
    assert "sk-live-0123456789" not in written and "tok-9876543210" not in written
    assert "sk-live" not in text and "tok-98" not in text
    extra = json.loads(written)["inferbench"]["request"]["extra_body"]
    assert extra == {"api_key": "[redacted]", "auth": "[redacted]", "top_k": 1}


@pytest.mark.slow  # a simulator server per test: 6-15 s each on a loaded machine
@pytest.mark.timeout(60)
def test_record_sends_on_a_full_disk_is_an_error_naming_the_option() -> None:
    """/dev/full: every write is ENOSPC, as on a full disk (exit 0, no message, before)."""
    with _sim_serve("--record-sends", "/dev/full") as (url, proc):
        body = json.dumps({"model": MODEL, "prompt": "hi", "max_tokens": 2, "stream": True})
        request = urllib.request.Request(f"{url}/v1/completions", body.encode(), method="POST")
        with urllib.request.urlopen(request, timeout=30) as answer:  # one send to record
            answer.read()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2, err
    assert "--record-sends" in err and "No space left" in err and "fix:" in err, err
    assert "Traceback" not in err


def _sqlite_store(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """Every store connection is read-only (`ro`: SQLite's `mode=ro`, as a read-only file or
    mount is opened) or on a full disk (`full`: no page may be added)."""
    from inferbench.results import store

    def engine(url: URL, **kwargs: Any) -> Any:
        if how == "ro":
            url = url.set(database=f"file:{url.database}", query={"mode": "ro", "uri": "true"})
        made = create_engine(url, **kwargs)
        if how == "full":
            pragma = "PRAGMA max_page_count = 1"  # clamped to the pages it has
            event.listen(made, "connect", lambda conn, _record: conn.execute(pragma))
        return made

    monkeypatch.setattr(store, "create_engine", engine)


def _ingest(tmp_path: Path, capsys: pytest.CaptureFixture[str], db: str) -> Ran:
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    (folder / RESULT_NAME).write_text(json.dumps(_result()))
    return run_cli(["results", "ingest", str(folder), "--db", db], capsys)


@pytest.mark.parametrize(
    ("how", "fix"),
    [
        ("ro", "read-only"),
        ("full", "free some space"),
    ],
)
def test_sqlite_read_only_or_full_gets_the_sqlite_fix(
    how: str,
    fix: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before: "cannot use database ...: attempt to write a readonly database (fix: check
    that the server is running and the URL, user and password are right)"."""
    db = f"sqlite:///{tmp_path}/r.sqlite"
    if how == "ro":  # a store to open read-only
        assert _ingest(tmp_path, capsys, db).code == 0
        (tmp_path / "in" / RESULT_NAME).unlink()
        (tmp_path / "in" / RESULT_NAME.replace("_conc4_", "_conc8_")).write_text(
            json.dumps(sa_bench_result(SyntheticConfig(), 8, rng=random.Random(0)))
        )
    _sqlite_store(monkeypatch, how)
    ran = _ingest(tmp_path, capsys, db)
    text = _clean(ran)
    assert ran.code == 2 and fix in text, text
    assert "server is running" not in text, text


def test_a_read_only_store_of_an_earlier_schema_can_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store made before v6 (predicted_points) used to be migrated on every open: read-only,
    `results list` failed with PostgreSQL's hint (a regression)."""
    from inferbench.results.migrations import LATEST, migrate

    path = tmp_path / "old.sqlite"
    engine = create_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        migrate(conn, LATEST - 1)
        conn.commit()
    engine.dispose()
    _sqlite_store(monkeypatch, "ro")
    db = f"sqlite:///{path}"
    for args in (["results", "list"], ["report", "--output-dir", str(tmp_path / "rep")]):
        ran = run_cli([*args, "--db", db], capsys)
        assert ran.code == 0, _clean(ran)
    ran = _ingest(tmp_path, capsys, db)  # writing is still refused, with the right fix
    assert ran.code == 2 and "read-only" in _clean(ran), ran.text


@contextmanager
def _hung_server() -> Iterator[str]:
    """A server that stalls everything: /metrics never answers, a completion stream sends
    one chunk and then nothing (a hung engine behind a live socket)."""
    import asyncio
    import threading

    from aiohttp import web

    async def hang(_request: web.Request) -> web.Response:
        await asyncio.sleep(3600)
        return web.Response()

    async def stall(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunk = {"choices": [{"index": 0, "text": "x", "finish_reason": None}]}
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await asyncio.sleep(3600)
        return response

    app = web.Application()
    app.add_routes([web.get("/metrics", hang), web.post("/v1/completions", stall)])
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


@pytest.mark.slow  # waits out a /metrics timeout (5 s)
@pytest.mark.timeout(60)
def test_replay_on_a_hung_server_ends_near_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the window (5 s), its grace (30 s) and two 10 s /metrics waits, 58 s in all.
    Now one /metrics wait of 5 s, no second one on a server that never answered."""
    from inferbench.bench.agentic.server_metrics import SCRAPE_TIMEOUT_S

    monkeypatch.setattr("inferbench.bench.agentic.replay.DURATION_GRACE_S", 1.0)
    out = tmp_path / "r.json"
    with _hung_server() as url:
        started = time.monotonic()
        ran = run_cli(
            ["replay", "--base-url", url, "--model", "m", "--synth", "sessions=2",
             "--concurrency", "1", "--duration", "1", "--output", str(out)],
            capsys,
        )  # fmt: skip
        took = time.monotonic() - started
    _clean(ran)
    assert took < SCRAPE_TIMEOUT_S + 1 + 1 + 6, took
    assert json.loads(out.read_text())["inferbench"]["failed"] >= 1
