"""Metric definitions on crafted streams, faults against the loopback test server, result files."""

from __future__ import annotations

import orjson
import pytest

from harness.testserver import ServerConfig, serve_in_thread
from inferbench.bench.api import BenchOptions, Endpoint, LoadPoint, run_bench
from inferbench.bench.metrics import summarize
from inferbench.bench.records import RequestRecord
from inferbench.bench.result import read_point_result, write_point_result
from inferbench.bench.settings import ClientOptions, RequestOptions
from inferbench.bench.sse import StreamState
from inferbench.bench.workload import RandomWorkload
from inferbench.cli.main import main


def _ev(obj: object) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def test_crafted_stream_role_empty_multi_token_usage_only() -> None:
    role = {"choices": [{"delta": {"role": "assistant", "content": ""}}]}
    c1 = {
        "choices": [{"delta": {"content": "a"}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1},
    }
    empty = {"choices": [{"delta": {"content": ""}}], "usage": {"completion_tokens": 1}}
    c2 = {"choices": [{"delta": {"content": "bcd"}}], "usage": {"completion_tokens": 4}}
    last = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 4}}
    raw = b": keep-alive\n\n" + _ev(role) + _ev(c1) + _ev(empty) + _ev(c2) + _ev(last)
    raw += b"data: [DONE]\n\n"
    state = StreamState()
    for i, byte in enumerate(raw):  # one byte per read: boundaries anywhere
        state.feed(bytes([byte]), float(i))
    assert len(state.chunk_times) == 2
    assert state.chunk_tokens == [1, 3]
    assert state.output_tokens == 4 and state.prompt_tokens == 5 and state.done
    rec = RequestRecord(
        0,
        0.0,
        0.0,
        5,
        4,
        ok=True,
        chunk_times=[1.0, 4.0],
        chunk_tokens=[1, 3],
        output_tokens=4,
        input_tokens=5,
        done=4.0,
        per_chunk_usage=True,
    )
    m = summarize([rec], 4.0)
    assert m.ttft_ms.mean == pytest.approx(1000.0)
    assert m.e2el_ms.mean == pytest.approx(4000.0)
    assert m.tpot_ms.mean == pytest.approx(1000.0)  # (4 - 1) / (4 - 1)
    assert m.itl_ms.mean == pytest.approx(3000.0)  # one chunk gap
    assert m.itl_per_token_ms.mean == pytest.approx(1000.0)  # 3 tokens in that gap
    assert m.output_throughput == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("http500", "http_status"),
        ("http429", "http_status"),
        ("drop", "stream_error"),
        ("malformed", "stream_error"),
        ("ignore_max_tokens", "truncated"),
        ("early_end", "truncated"),
        ("wrong_prompt", "prompt_mismatch"),
        ("stall", "timeout"),
    ],
)
def test_faults_are_counted(fault: str, kind: str) -> None:
    with serve_in_thread(ServerConfig(itl_s=0.001)) as srv:
        ep = Endpoint(base_url=f"http://127.0.0.1:{srv.port}", model="m")
        opts = BenchOptions(
            request=RequestOptions(extra_body={"test_fault": fault}),
            client=ClientOptions(request_timeout_s=0.5),
        )
        run = run_bench(
            ep, RandomWorkload(isl=8, osl=8), [LoadPoint(concurrency=2, num_prompts=4)], opts
        )
    block = run.points[0].result.inferbench
    assert block.failures[kind] == 4 and block.failed == 4
    assert run.failures  # the gate says why


def test_connect_failure_and_exact_prompts_and_result_roundtrip(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-written")
    run = run_bench(
        Endpoint(base_url="http://127.0.0.1:1", model="m"),
        RandomWorkload(isl=8, osl=4),
        [LoadPoint(concurrency=1, num_prompts=2)],
    )
    assert run.points[0].result.inferbench.failures["connect"] == 2
    with serve_in_thread(ServerConfig()) as srv:
        ep = Endpoint(base_url=f"http://127.0.0.1:{srv.port}", model="m")
        run = run_bench(
            ep,
            RandomWorkload(isl=100, osl=10, range_ratio=0.8),
            [LoadPoint(concurrency=4, num_prompts=20)],
        )
    res = run.points[0].result
    assert res.sa.completed == 20 and res.sa.input_lens == [
        r.input_tokens for r in run.points[0].run.records if r.ok
    ]
    assert sorted(srv.stats.prompt_tokens) == sorted(
        r.intended_input_tokens for r in run.points[0].run.records
    )
    assert res.sa.total_output_tokens == sum(res.sa.output_lens)
    path = tmp_path / "r.json"
    write_point_result(path, res)
    assert b"sk-never-written" not in path.read_bytes()
    assert "p99.9_ttft_ms" in orjson.loads(path.read_bytes())
    assert read_point_result(path).sa.completed == 20


def test_cli_bad_args_exit_2() -> None:
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "bench",
                "--base-url",
                "http://127.0.0.1:1",
                "--model",
                "m",
                "--isl",
                "4",
                "--osl",
                "4",
                "--concurrency",
                "4,a",
                "--num-prompts",
                "4",
            ]
        )
    assert exc.value.code == 2


@pytest.mark.parametrize("url", ["http://", "https:///v1", "http://host:port", "http://:8000"])
def test_a_base_url_without_a_host_or_with_a_bad_port_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="base URL"):
        Endpoint(base_url=url, model="m")
