"""Load shapes, workloads and the CLI against real loopback servers."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import orjson
import pytest

from harness.testserver import ServerConfig, TestServer, serve_in_thread
from inferbench.bench.api import BenchOptions, Endpoint, LoadPoint, run_bench, run_point
from inferbench.bench.datasets import build_prompts
from inferbench.bench.result import read_point_result
from inferbench.bench.settings import ApiKind, ClientOptions
from inferbench.bench.workload import FileWorkload, RandomWorkload, SharedPrefixWorkload
from inferbench.core.errors import InputError

pytestmark = pytest.mark.integration


def _ep(port: int, api: ApiKind = ApiKind.COMPLETIONS) -> Endpoint:
    return Endpoint(base_url=f"http://127.0.0.1:{port}", model="m", api=api)


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "bench", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_rate_fidelity(server_process) -> None:
    """Requests go out at the rate asked for, in real time against a server.

    The scheduling itself (each send at t0 + offset, exactly) is tested on a virtual clock
    in test_schedule_clock.py; this is the one real-time check, with bounds a loaded machine
    keeps (an idle one is within 1% and a median lateness under 1 ms)."""
    rate, n = 50.0, 200
    srv = server_process("--no-stamps")
    outcome = run_point(
        _ep(srv.port),
        RandomWorkload(isl=8, osl=4),
        LoadPoint(request_rate=rate, num_prompts=n),
        BenchOptions(client=ClientOptions(workers=1)),
    )
    block = outcome.result.inferbench
    assert block.failed == 0
    assert block.achieved_request_rate == pytest.approx(rate, rel=0.1)
    lateness = np.array([r.sent - r.scheduled for r in outcome.run.records])
    assert np.median(lateness) < 0.02  # each send on its absolute time, not drifting
    assert srv.summary()["requests"] == n


@pytest.mark.server_config(ttft_s=0.05, itl_s=0.01)
def test_concurrency_is_held_and_warmups_are_excluded(server: TestServer) -> None:
    outcome = run_point(
        _ep(server.port),
        RandomWorkload(isl=8, osl=10),
        LoadPoint(concurrency=48, num_prompts=96, warmups=10),
        BenchOptions(),
    )
    block = outcome.result.inferbench
    assert server.stats.requests == 106  # the warm-ups were sent ...
    assert outcome.result.sa.completed == 96  # ... and not measured
    assert server.stats.max_active == 48 and block.in_flight.max == 48
    assert block.concurrency_requested == 48 and block.warmups == 10
    # the client reads what the server scheduled: 50 ms to the first token, 10 ms apart
    # (never less; more only by what a loaded machine adds to the server thread's sleeps,
    # about 5 ms at a load average of 8 on 2 cores)
    assert 50.0 <= outcome.result.sa.median_ttft_ms < 80.0
    assert 10.0 <= outcome.result.sa.median_tpot_ms < 20.0


@pytest.mark.server_config(itl_s=0.002)
def test_duration_point_cycles_prompts_until_the_time_is_up(server: TestServer) -> None:
    started = time.monotonic()
    outcome = run_point(
        _ep(server.port),
        RandomWorkload(isl=8, osl=5),
        LoadPoint(concurrency=2, num_prompts=3, duration_s=1.0),
        BenchOptions(),
    )
    elapsed = time.monotonic() - started
    records = outcome.run.records
    assert len(records) > 3 and all(r.ok for r in records)
    assert max(r.sent for r in records) - outcome.run.t0 < 1.0
    assert elapsed < 5.0


def test_several_worker_processes_share_one_point(server_process) -> None:
    srv = server_process("--itl", "0.002")
    outcome = run_point(
        _ep(srv.port),
        RandomWorkload(isl=8, osl=6),
        LoadPoint(concurrency=8, num_prompts=40, warmups=4),
        BenchOptions(client=ClientOptions(workers=2)),
    )
    records = outcome.run.records
    assert sorted(r.index for r in records) == list(range(40))
    assert {r.worker for r in records} == {0, 1} and all(r.ok for r in records)
    assert srv.summary()["requests"] == 44 and srv.summary()["max_active"] <= 8
    # the same prompts as one process would build: prompts depend on the index only
    single = build_prompts(RandomWorkload(isl=8, osl=6), list(range(40)), seed=0)
    assert [r.intended_input_tokens for r in sorted(records, key=lambda r: r.index)] == [
        p.input_len for p in single
    ]


@pytest.mark.server_config(itl_s=0.001)
def test_chat_and_text_prompts_with_a_local_tokenizer(
    server: TestServer, word_tokenizer: Path
) -> None:
    workload = RandomWorkload(isl=30, osl=4, range_ratio=0.8, tokenizer=word_tokenizer)
    for api in (ApiKind.CHAT, ApiKind.COMPLETIONS):
        run = run_bench(_ep(server.port, api), workload, [LoadPoint(concurrency=2, num_prompts=6)])
        records = run.points[0].run.records
        assert all(r.ok for r in records), [r.error for r in records]
        # the server counts one token per word, as the tokenizer does: exact lengths
        assert [r.input_tokens for r in records] == [r.intended_input_tokens for r in records]
        assert all(24 <= r.intended_input_tokens <= 30 for r in records)


def test_chat_without_a_tokenizer_is_refused() -> None:
    from inferbench.core.errors import InputError

    with pytest.raises(InputError, match="tokenizer"):
        run_bench(
            _ep(1, ApiKind.CHAT),
            RandomWorkload(isl=8, osl=4),
            [LoadPoint(concurrency=1, num_prompts=1)],
        )


@pytest.mark.server_config(itl_s=0.001)
def test_shared_prefix_groups(server: TestServer) -> None:
    workload = SharedPrefixWorkload(groups=3, prefix_len=32, isl=8, osl=4)
    prompts = build_prompts(workload, list(range(9)), seed=5)
    for p in prompts:
        assert isinstance(p.prompt, list) and p.input_len == 40
        same_group = prompts[p.index % 3]
        assert isinstance(same_group.prompt, list)
        assert p.prompt[:32] == same_group.prompt[:32]
        assert p.prompt[32:] != same_group.prompt[32:] or p.index == same_group.index
    assert prompts[0].prompt[:32] != prompts[1].prompt[:32]
    run = run_bench(_ep(server.port), workload, [LoadPoint(concurrency=3, num_prompts=9)])
    assert run.points[0].result.sa.completed == 9
    assert sorted(server.stats.prompt_tokens) == [40] * 9


@pytest.mark.server_config(itl_s=0.001)
def test_jsonl_and_sharegpt_files(server: TestServer, tmp_path: Path, word_tokenizer: Path) -> None:
    jsonl = tmp_path / "prompts.jsonl"
    jsonl.write_text(
        '{"prompt": [1, 2, 3, 4], "output_len": 3}\n\n{"prompt": [5, 6], "output_len": 5}\n'
    )
    run = run_bench(
        _ep(server.port), FileWorkload(path=jsonl), [LoadPoint(concurrency=1, num_prompts=4)]
    )
    res = run.points[0].result.sa
    assert res.completed == 4 and res.output_lens == [3, 5, 3, 5] and res.input_lens == [4, 2, 4, 2]
    sharegpt = tmp_path / "sharegpt.json"
    conv = [
        {"conversations": [{"value": "w1 w2 w3"}, {"value": "w4 w5"}]},
        {"conversations": [{"value": "only one turn"}]},  # skipped
        {"conversations": [{"value": "w7 w8 w9 w10"}, {"value": "w11 w12 w13"}]},
    ]
    sharegpt.write_text(json.dumps(conv))
    spec = FileWorkload(path=sharegpt, format="sharegpt", tokenizer=word_tokenizer)
    run = run_bench(_ep(server.port), spec, [LoadPoint(concurrency=2, num_prompts=2)])
    res = run.points[0].result.sa
    assert res.completed == 2 and sorted(res.output_lens) == [2, 3]
    assert sorted(res.input_lens) == [3, 4]


def test_sa_bench_preset_extra_body_and_no_key_in_outputs(tmp_path: Path) -> None:
    env = os.environ | {"INFERBENCH_API_KEY": "sk-secret-never-written"}
    with serve_in_thread(ServerConfig(itl_s=0.001)) as srv:
        out = tmp_path / "r.json"
        detail = tmp_path / "d.jsonl"
        proc = _cli(
            "--base-url", f"http://127.0.0.1:{srv.port}", "--model", "m", "--isl", "50",
            "--osl", "10", "--concurrency", "3", "--preset", "sa-bench",
            "--output", str(out), "--detail-file", str(detail),
            env=env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert srv.stats.requests == 30 + 6  # 10 x conc measured, 2 x conc warm-ups
        res = read_point_result(out)
        assert res.sa.num_prompts == 30 and res.inferbench.warmups == 6
        assert all(40 <= n <= 50 for n in res.sa.input_lens)  # U[floor(0.8 L), L]
        assert res.inferbench.workload.range_ratio == 0.8  # type: ignore[union-attr]
        for blob in (out.read_text(), detail.read_text(), proc.stdout, proc.stderr):
            assert "sk-secret-never-written" not in blob
        assert len(detail.read_text().splitlines()) == 30

        proc = _cli(
            "--base-url", f"http://127.0.0.1:{srv.port}", "--model", "m", "--isl", "8",
            "--osl", "4", "--concurrency", "2", "--num-prompts", "4",
            "--extra-body", '{"test_fault": "http500"}', "--output", str(out),
        )  # fmt: skip
    assert proc.returncode == 1  # the failure gate
    assert read_point_result(out).inferbench.failures["http_status"] == 4
    assert "http_status" in proc.stderr or "HTTP 500" in proc.stderr


def test_bad_extra_body_and_half_a_prefix_exit_2() -> None:
    base = ["--base-url", "http://127.0.0.1:1", "--model", "m", "--isl", "8", "--osl", "4"]
    base += ["--concurrency", "1", "--num-prompts", "1"]
    proc = _cli(*base, "--extra-body", "[1, 2]")
    assert proc.returncode == 2 and "--extra-body" in proc.stderr
    proc = _cli(*base, "--prefix-groups", "2")
    assert proc.returncode == 2 and "--prefix-len" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_keeps_finished_requests_and_marks_the_point_incomplete(
    tmp_path: Path, server_process, workers: int
) -> None:
    srv = server_process("--itl", "0.02", "--no-stamps")  # 40 tokens: 0.8 s per request
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "inferbench.cli.main", "bench", "--base-url", srv.url]
    cmd += ["--model", "m", "--isl", "8", "--osl", "40", "--concurrency", "4"]
    cmd += ["--num-prompts", "400", "--workers", str(workers), "--output", str(out)]
    cmd += ["--warmups", "0"]  # every request the server sees is a measured one
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while srv.summary()["requests"] < 12 and time.monotonic() < deadline:
        time.sleep(0.1)  # wait until a few rounds have finished
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "incomplete" in stderr
    res = read_point_result(out)
    assert not res.inferbench.complete and res.inferbench.incomplete_reason == "interrupted"
    assert 4 <= res.sa.completed < 400
    data = orjson.loads(out.read_bytes())
    assert data["completed"] == res.sa.completed
    # the requests in flight at the stop are counted, as failed, each with its reason:
    # completed + failed is every request sent
    sent = srv.summary()["requests"]
    assert {k: v for k, v in res.inferbench.failures.items() if v} == {
        "interrupted": res.inferbench.failed
    }
    assert 1 <= res.inferbench.failed <= 4
    assert res.sa.completed + res.inferbench.failed == sent


@pytest.mark.slow
@pytest.mark.parametrize("rate", [None, "20"])
def test_duration_bounds_a_point_on_a_stalled_server(
    tmp_path: Path, server_process, rate: str | None
) -> None:
    """Every request stalls after one chunk; the default request timeout is 600 s. The point
    still ends at --duration and the grace after it, its stalled requests failed as such."""
    from inferbench.bench.client import DURATION_GRACE_S

    srv = server_process("--itl", "0.01", "--no-stamps")
    out = tmp_path / "r.json"
    args = ["--base-url", srv.url, "--model", "m", "--isl", "8", "--osl", "20", "--warmups", "0"]
    args += ["--concurrency", "3", "--duration", "1", "--max-failure-rate", "1"]
    args += ["--extra-body", '{"test_fault": "stall"}', "--result-file", str(out)]
    if rate:
        args += ["--request-rate", rate]
    started = time.monotonic()
    proc = _cli(*args)
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert took < 1 + DURATION_GRACE_S + 15, took  # not 600 s
    res = read_point_result(out)
    failed = {k: v for k, v in res.inferbench.failures.items() if v}
    assert res.sa.completed == 0 and failed == {"interrupted": res.inferbench.failed}
    assert res.inferbench.failed == srv.summary()["requests"] >= 3


def test_a_jsonl_dataset_is_refused_at_its_first_bad_line_unread_beyond(tmp_path: Path) -> None:
    # a bad first line, then 64 MiB nobody needs to read to refuse it
    data = tmp_path / "d.jsonl"
    with data.open("wb") as f:
        f.write(b'{"prompt": ""}\n')
        f.write(b'{"prompt": "x", "output_len": 1}\n' * (2 * 1024 * 1024))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(InputError, match="non-empty `prompt`") as err:
        build_prompts(FileWorkload(path=data), [0, 1], seed=0)
    assert err.value.location.line == 1
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 32 * 1024


def test_a_jsonl_dataset_yields_the_rows_asked_for(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_bytes(b'{"prompt": "a", "output_len": 1}\n\n{"prompt": "b", "output_len": 2}\n')
    prompts = build_prompts(FileWorkload(path=data), [0, 1, 2, 3], seed=0)
    assert [(p.prompt, p.output_len) for p in prompts] == [("a", 1), ("b", 2), ("a", 1), ("b", 2)]
