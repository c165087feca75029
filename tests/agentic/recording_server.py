"""A loopback OpenAI server (completions and chat) that records every request it is sent.

Each request's arrival and end times (monotonic, same clock as the client), its prompt
token ids and max_tokens are kept in order. `fail` lists request numbers (1-based, in
arrival order) answered with HTTP 500. `/metrics` exports vLLM-named counters, counting
a prompt's tokens as prefix-cache hits where they repeat an earlier prompt (block-free).
A chat request's prompt is the whitespace-separated words of its messages (no template),
one token each, as the word-level test tokenizer counts them.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import orjson
from aiohttp import web


@dataclass
class Seen:
    arrived: float
    prompt: list[int]
    max_tokens: int
    ended: float = 0.0
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    messages: list[dict[str, str]] | None = None  # a chat request's messages


@dataclass
class RecordingServer:
    ttft_s: float = 0.002
    itl_s: float = 0.0005
    fail: set[int] = field(default_factory=set)
    seen: list[Seen] = field(default_factory=list)
    url: str = ""
    prompts_seen: list[tuple[object, ...]] = field(default_factory=list)
    queries: int = 0
    hits: int = 0
    metrics_delay_s: float = 0.0  # the time a scrape takes before the counters are read

    def _hit(self, prompt: Sequence[object]) -> int:
        best = 0
        for earlier in self.prompts_seen:
            n = 0
            for a, b in zip(earlier, prompt, strict=False):
                if a != b:
                    break
                n += 1
            best = max(best, n)
        self.prompts_seen.append(tuple(prompt))
        return best

    async def completions(self, request: web.Request) -> web.StreamResponse:
        body = orjson.loads(await request.read())
        seen = Seen(time.monotonic(), list(body["prompt"]), int(body["max_tokens"]))
        return await self._answer(request, seen, seen.prompt)

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = orjson.loads(await request.read())
        seen = Seen(time.monotonic(), [], int(body["max_tokens"]), messages=body["messages"])
        words = [w for m in body["messages"] for w in m["content"].split()]
        return await self._answer(request, seen, words, chat=True)

    async def _answer(
        self, request: web.Request, seen: Seen, prompt: Sequence[object], chat: bool = False
    ) -> web.StreamResponse:
        seen.headers = {k.lower(): v for k, v in request.headers.items()}
        self.seen.append(seen)
        if len(self.seen) in self.fail:
            seen.status, seen.ended = 500, time.monotonic()
            return web.json_response({"error": {"message": "injected"}}, status=500)
        self.queries += len(prompt)
        self.hits += self._hit(prompt)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await asyncio.sleep(self.ttft_s)
        n, p = seen.max_tokens, len(prompt)
        kind = "chat.completion.chunk" if chat else "text_completion"
        for k in range(1, n + 1):
            usage = {"prompt_tokens": p, "completion_tokens": k, "total_tokens": p + k}
            finish = "length" if k == n else None
            choice: dict[str, object] = {"index": 0, "finish_reason": finish}
            choice.update({"delta": {"content": " t"}} if chat else {"text": " t"})
            chunk = {"id": "x", "object": kind, "choices": [choice], "usage": usage}
            await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
            if k < n and self.itl_s:
                await asyncio.sleep(self.itl_s)
        final = {"id": "x", "object": kind, "choices": [], "usage": usage}
        await resp.write(b"data: " + orjson.dumps(final) + b"\n\ndata: [DONE]\n\n")
        await resp.write_eof()
        seen.ended = time.monotonic()
        return resp

    async def metrics(self, request: web.Request) -> web.Response:
        await asyncio.sleep(self.metrics_delay_s)
        text = (
            "# TYPE vllm:prefix_cache_queries counter\n"
            f'vllm:prefix_cache_queries_total{{model_name="m"}} {self.queries}\n'
            "# TYPE vllm:prefix_cache_hits counter\n"
            f'vllm:prefix_cache_hits_total{{model_name="m"}} {self.hits}\n'
        )
        return web.Response(text=text, content_type="text/plain")


@contextmanager
def recording_server(**kwargs: object) -> Iterator[RecordingServer]:
    srv = RecordingServer(**kwargs)  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    runner_box: list[web.AppRunner] = []

    async def start() -> None:
        app = web.Application(client_max_size=1 << 28)
        app.router.add_post("/v1/completions", srv.completions)
        app.router.add_post("/v1/chat/completions", srv.chat)
        app.router.add_get("/metrics", srv.metrics)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        srv.url = f"http://127.0.0.1:{port}"
        runner_box.append(runner)

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield srv
    finally:
        asyncio.run_coroutine_threadsafe(runner_box[0].cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
