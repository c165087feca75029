"""OpenAI-protocol conformance of `inferbench sim serve`, over real loopback HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from inferbench.sim.server import ServeOptions, SimServer

from .conftest import small_deployment

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


async def _sse(resp: aiohttp.ClientResponse) -> list[Any]:
    events: list[Any] = []
    async for raw in resp.content:
        line = raw.decode().strip()
        if not line:
            continue
        assert line.startswith("data: ")
        data = line[len("data: ") :]
        events.append(data if data == "[DONE]" else json.loads(data))
    return events


async def test_streaming_completion_shapes(server: SimServer) -> None:
    body = {
        "model": MODEL,
        "prompt": list(range(100)),
        "max_tokens": 6,
        "stream": True,
        "ignore_eos": True,
        "stream_options": {"include_usage": True},
    }
    async with aiohttp.ClientSession() as s, s.post(f"{server.url}/v1/completions", json=body) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/event-stream")
        events = await _sse(r)
    assert events[-1] == "[DONE]"
    usage_chunk = events[-2]
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"] == {
        "prompt_tokens": 100,
        "completion_tokens": 6,
        "total_tokens": 106,
    }
    content = events[:-2]
    assert len(content) == 6
    for chunk in content:
        assert chunk["object"] == "text_completion" and chunk["model"] == MODEL
        assert chunk["choices"][0]["text"] and "usage" not in chunk
    assert [c["choices"][0]["finish_reason"] for c in content] == [None] * 5 + ["length"]


async def test_streaming_chat_opens_with_role_and_counts_per_chunk(server: SimServer) -> None:
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "x" * 400}],
        "max_tokens": 3,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }
    url = f"{server.url}/v1/chat/completions"
    async with aiohttp.ClientSession() as s, s.post(url, json=body) as r:
        events = await _sse(r)
    role = events[0]
    assert role["object"] == "chat.completion.chunk"
    assert role["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    content = events[1:-2]
    assert [c["usage"]["completion_tokens"] for c in content] == [1, 2, 3]
    assert all(c["choices"][0]["delta"]["content"] for c in content)
    assert content[0]["usage"]["prompt_tokens"] == 100 + 4  # 400 chars / 4 + template tokens


async def test_non_streaming_responses(server: SimServer) -> None:
    async with aiohttp.ClientSession() as s:
        async with s.post(
            f"{server.url}/v1/completions", json={"prompt": "hello world!", "max_tokens": 4}
        ) as r:
            body = await r.json()
        assert body["object"] == "text_completion"
        assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
        assert body["choices"][0]["finish_reason"] == "length"
        chat = {"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 2}
        async with s.post(f"{server.url}/v1/chat/completions", json=chat) as r:
            body = await r.json()
        assert body["object"] == "chat.completion"
        assert body["choices"][0]["message"]["role"] == "assistant"
        assert body["usage"]["completion_tokens"] == 2


async def test_error_shapes(server: SimServer) -> None:
    async with aiohttp.ClientSession() as s:
        too_long = {"model": MODEL, "prompt": [1] * 2000, "max_tokens": 100}
        async with s.post(f"{server.url}/v1/completions", json=too_long) as r:
            assert r.status == 400
            err = (await r.json())["error"]
        assert err["code"] == 400 and err["type"] == "BadRequestError"
        assert "maximum context length is 2048 tokens" in err["message"]
        async with s.post(
            f"{server.url}/v1/completions", json={"model": "nope", "prompt": "a"}
        ) as r:
            assert r.status == 404
            assert (await r.json())["error"]["type"] == "NotFoundError"
        async with s.post(f"{server.url}/v1/completions", data=b"{not json") as r:
            assert r.status == 400
        async with s.get(f"{server.url}/v1/nothing") as r:
            assert r.status == 404 and "error" in await r.json()


async def test_models_health_and_metrics(server: SimServer) -> None:
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{server.url}/v1/models") as r:
            models = await r.json()
        assert models["object"] == "list" and models["data"][0]["id"] == MODEL
        async with s.get(f"{server.url}/health") as r:
            assert r.status == 200
        async with s.post(
            f"{server.url}/v1/completions", json={"prompt": [1] * 50, "max_tokens": 5}
        ) as r:
            await r.read()
        async with s.get(f"{server.url}/metrics") as r:
            text = await r.text()
    for name in (
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:time_to_first_token_seconds_bucket",
        "vllm:time_per_output_token_seconds_count",
    ):
        assert name in text
    assert f'vllm:prompt_tokens_total{{model_name="{MODEL}"}} 50' in text
    assert f'vllm:generation_tokens_total{{model_name="{MODEL}"}} 5' in text


async def _serve(**options: Any) -> SimServer:
    srv = SimServer(small_deployment(), ServeOptions(port=0, **options))
    await srv.start()
    return srv


async def test_fault_error_rate() -> None:
    srv = await _serve(fault_error_rate=1.0)
    try:
        async with (
            aiohttp.ClientSession() as s,
            s.post(f"{srv.url}/v1/completions", json={"prompt": "a"}) as r,
        ):
            assert r.status == 500
            assert (await r.json())["error"]["type"] == "InternalServerError"
    finally:
        await srv.close()


async def test_fault_drop_closes_mid_stream() -> None:
    srv = await _serve(fault_drop_rate=1.0)
    body = {"prompt": [1] * 10, "max_tokens": 20, "stream": True}
    try:
        async with aiohttp.ClientSession() as s:
            with pytest.raises(aiohttp.ClientError):
                async with s.post(f"{srv.url}/v1/completions", json=body) as r:
                    events = await _sse(r)
                    assert "[DONE]" not in events  # pragma: no cover - the read must fail
    finally:
        await srv.close()


async def test_fault_stall_stops_after_first_chunk() -> None:
    srv = await _serve(fault_stall_rate=1.0)
    body = {"prompt": [1] * 10, "max_tokens": 20, "stream": True}
    timeout = aiohttp.ClientTimeout(total=None, sock_read=0.5)
    got = 0
    try:
        async with aiohttp.ClientSession(timeout=timeout) as s:
            with pytest.raises(TimeoutError):
                async with s.post(f"{srv.url}/v1/completions", json=body) as r:
                    async for raw in r.content:
                        got += raw.startswith(b"data: ")
    finally:
        await srv.close()
    assert got == 1


async def test_slow_start_keeps_health_at_503() -> None:
    srv = await _serve(slow_start_s=30)
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"{srv.url}/health") as r:
                assert r.status == 503
            async with s.post(f"{srv.url}/v1/completions", json={"prompt": "a"}) as r:
                assert r.status == 503
    finally:
        await srv.close()


async def test_record_sends_file(tmp_path: Path) -> None:
    out = tmp_path / "sends.jsonl"
    srv = await _serve(record_sends=out)
    body = {"prompt": [1] * 10, "max_tokens": 5, "stream": True}
    async with aiohttp.ClientSession() as s, s.post(f"{srv.url}/v1/completions", json=body) as r:
        await r.read()
    await srv.close()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["chunk"] for row in rows] == [0, 1, 2, 3, 4]
    assert all(row["sent"] >= row["scheduled"] - 1e-6 for row in rows)
    assert sum(row["tokens"] for row in rows) == 5


async def test_step_time_factor_slows_every_step() -> None:
    """`--step-time-factor 1.5`: the same request takes 1.5x the engine time, step by step
    (an injected slowdown for the regression gate's benchmark)."""
    body = {"prompt": [1] * 64, "max_tokens": 16, "stream": True}
    busy = []
    for factor in (1.0, 1.5):
        srv = await _serve(step_time_factor=factor)
        try:
            async with (
                aiohttp.ClientSession() as s,
                s.post(f"{srv.url}/v1/completions", json=body) as r,
            ):
                assert "[DONE]" in await _sse(r)
        finally:
            await srv.close()
        busy.append(sum(w.busy_time for w in srv.cluster.workers))
    assert busy[0] > 0 and busy[1] == pytest.approx(1.5 * busy[0], rel=1e-9)
