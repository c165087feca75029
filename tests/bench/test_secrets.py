"""Secrets never written: a loopback server that echoes the request's headers back (in its
completions and in its error bodies) against `inferbench bench` with a planted API key and
credentials in --base-url. Neither reaches a result file, a detail file or the output."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from inferbench.bench.settings import Endpoint
from inferbench.core.redact import REDACTED, Redactor, query_secrets, redact_url, split_userinfo
from inferbench.launch.rundir import environment_record

KEY = "sk-planted-4f1c9e"
PASSWORD = "pw-planted-77aa"


class EchoServer:
    """Streams completions whose text is the request's headers; every third request is a 401
    whose body quotes them. Loopback only."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.queries: list[str] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        echoed = json.dumps(dict(request.headers))
        self.seen.append(request.headers.get("Authorization", ""))
        self.queries.append(request.query_string)
        if len(self.seen) % 3 == 0:
            return web.json_response({"error": f"unauthorized: {echoed}"}, status=401)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        prompt = len(body["prompt"]) if isinstance(body["prompt"], list) else 1
        for k in range(1, body["max_tokens"] + 1):
            chunk = {
                "id": "x",
                "object": "text_completion",
                "choices": [{"index": 0, "text": echoed, "finish_reason": None}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": k},
            }
            await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        return resp

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/v1/completions", self._completions)
        runner = web.AppRunner(app)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()

    def __enter__(self) -> EchoServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    with EchoServer() as server:
        yield server


def _bench(tmp: Path, base_url: str, *extra: str, env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "bench", "--base-url", base_url]
        + ["--model", "m", "--isl", "8", "--osl", "4", "--concurrency", "2"]
        + ["--num-prompts", "6", "--num-warmups", "0", "--max-failure-rate", "1"]
        + ["--output", str(tmp / "out" / "res.json"), "--detail"]
        + ["--detail-file", str(tmp / "out" / "detail.jsonl"), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200", **env},
        check=False,
    )
    return out.stdout + out.stderr


def _written(tmp: Path) -> str:
    return "".join(p.read_text() for p in sorted((tmp / "out").rglob("*")) if p.is_file())


@pytest.mark.integration
@pytest.mark.parametrize("client", ["fast", "aiohttp"])
def test_an_echoed_api_key_is_redacted_everywhere(
    tmp_path: Path, echo: EchoServer, client: str
) -> None:
    url = f"http://127.0.0.1:{echo.port}"
    printed = _bench(tmp_path, url, "--http-client", client, env={"INFERBENCH_API_KEY": KEY})
    assert echo.seen and all(seen == f"Bearer {KEY}" for seen in echo.seen)  # it was sent
    written = _written(tmp_path)
    assert REDACTED in written, printed  # the echo reached the files, redacted
    assert KEY not in written and KEY not in printed


@pytest.mark.integration
def test_credentials_in_the_base_url_are_used_and_never_stored(
    tmp_path: Path, echo: EchoServer
) -> None:
    url = f"http://bench-user:{PASSWORD}@127.0.0.1:{echo.port}"
    env = {"INFERBENCH_API_KEY": "", "OPENAI_API_KEY": ""}
    printed = _bench(tmp_path, url, env=env)
    assert echo.seen and all(seen.startswith("Basic ") for seen in echo.seen)  # Basic auth
    written = _written(tmp_path)
    basic = echo.seen[0].removeprefix("Basic ")
    for secret in (PASSWORD, basic, "bench-user:"):
        assert secret not in written and secret not in printed
    result = json.loads((tmp_path / "out" / "res.json").read_text())  # one point: no suffix
    assert result["inferbench"]["endpoint"]["base_url"] == f"http://127.0.0.1:{echo.port}"


SIGNED = "sig-planted-9b3e"


@pytest.mark.integration
@pytest.mark.parametrize("client", ["fast", "aiohttp"])
def test_a_secret_in_the_url_query_is_sent_and_never_stored(
    tmp_path: Path, echo: EchoServer, client: str
) -> None:
    url = f"http://127.0.0.1:{echo.port}/v1?api-key={SIGNED}&sig={SIGNED}x&n=1"
    env = {"INFERBENCH_API_KEY": "", "OPENAI_API_KEY": ""}
    printed = _bench(tmp_path, url, "--http-client", client, env=env)
    # the query reaches the server with each request, as given
    assert echo.queries and set(echo.queries) == {f"api-key={SIGNED}&sig={SIGNED}x&n=1"}
    written = _written(tmp_path)
    assert SIGNED not in written and SIGNED not in printed, printed
    result = json.loads((tmp_path / "out" / "res.json").read_text())
    assert result["inferbench"]["endpoint"]["base_url"] == f"http://127.0.0.1:{echo.port}/v1"


def test_query_secrets_are_redacted_like_userinfo() -> None:
    url = "https://u:pw@h/v1?token=t1&X-Amz-Signature=s2&n=1&Sig=s3&code=c4&page=2"
    assert redact_url(url) == (
        f"https://h/v1?token={REDACTED}&X-Amz-Signature={REDACTED}&n=1&Sig={REDACTED}"
        f"&code={REDACTED}&page=2"
    )
    assert query_secrets("http://h/?key=a%20b")[1] == ("a%20b", "a b")
    ep = Endpoint(base_url="http://h:1/?token=t1#frag", model="m")
    assert ep.base_url == "http://h:1" and "t1" not in ep.model_dump_json()
    assert ep.url == "http://h:1/v1/completions?token=t1" and ep.redactor()("t1") == REDACTED
    with pytest.raises(ValueError, match="control character"):
        Endpoint(base_url="http://h:1/?a=b\r\nX-Evil: 1", model="m")


def test_endpoint_keeps_credentials_out_of_its_fields() -> None:
    ep = Endpoint(base_url="https://u:p%40ss@host:8443/v1/", model="m")
    assert ep.base_url == "https://host:8443/v1" and "p@ss" not in ep.model_dump_json()
    assert ep.headers()["Authorization"].startswith("Basic ")
    assert ep.redactor()("a p@ss b") == f"a {REDACTED} b"
    assert split_userinfo("http://host/x") == ("http://host/x", None)


def test_redactor_takes_bearer_tokens_and_secret_headers() -> None:
    redact = Redactor.for_headers(
        {"Authorization": "Bearer tok123", "X-Api-Key": "k9", "Accept": "text/event-stream"}
    )
    assert redact("Bearer tok123 tok123 k9 text/event-stream") == (
        f"{REDACTED} {REDACTED} {REDACTED} text/event-stream"
    )


def test_env_json_redacts_secret_names_whatever_the_allow_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("INFERBENCH_API_KEY", KEY)
    monkeypatch.setenv("VLLM_HTTP_HEADERS", '{"Authorization": "Bearer other-token"}')
    monkeypatch.setenv("VLLM_API_KEY", "vllm-key")
    monkeypatch.setenv("NCCL_DEBUG_NOTE", f"run with {KEY}")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    env = environment_record().environment
    assert isinstance(env, dict)
    assert env["VLLM_HTTP_HEADERS"] == REDACTED and env["VLLM_API_KEY"] == REDACTED
    assert env["NCCL_DEBUG_NOTE"] == f"run with {REDACTED}"
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert "other-token" not in json.dumps(env) and KEY not in json.dumps(env)


def test_secrets_inside_the_extra_body_are_redacted_when_written() -> None:
    """issue 40: a key inside --extra-body reached the result file."""
    from inferbench.bench.settings import RequestOptions
    from inferbench.core.redact import redact_tree

    body = {"api_key": "sk-1", "top_k": 1, "max_tokens_hint": 3, "x": [{"password": "pw-2"}]}
    tree, found = redact_tree(body)
    assert tree == {"api_key": "[redacted]", "top_k": 1, "max_tokens_hint": 3,
                    "x": [{"password": "[redacted]"}]}  # fmt: skip
    assert found == ("sk-1", "pw-2")
    options = RequestOptions(extra_body=body)
    assert "sk-1" not in options.model_dump_json() and "pw-2" not in str(options.model_dump())
    assert options.extra_body["api_key"] == "sk-1"  # still sent
    assert set(options.secrets()) == {"sk-1", "pw-2"}
