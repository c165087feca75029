"""A minimal OpenAI-compatible streaming server that stamps when it sent each chunk.

It exists to measure the client, so it is raw asyncio (no framework on the
send path): a first chunk after `ttft_s`, then one chunk every `itl_s` (each
carrying `tokens_per_chunk` tokens), or the whole stream in one write
("firehose"). All timed streams share one timer wheel, so thousands of streams
cost one timer. Send stamps (`time.monotonic()` right after each write) are kept
per `X-Request-Id` and served at `GET /stamps`; the client's receive stamps on
the same clock give its timing error. `GET /summary` gives the totals without
the stamps (requests, most streams open at once, chunks sent, first and last
send), which is how a benchmark rates a client it cannot instrument.

Fault modes (server-wide `fault`, or a request body field `test_fault`):
`http500`, `http429`, `stall` (one chunk, then silence), `drop` (connection
closed mid-stream), `malformed` (invalid JSON event), `error_event`,
`ignore_max_tokens` (7 extra tokens), `early_end` (half the tokens),
`wrong_prompt` (reports 5x the prompt tokens).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

FAULTS = (
    "http500",
    "http429",
    "stall",
    "drop",
    "malformed",
    "error_event",
    "ignore_max_tokens",
    "early_end",
    "wrong_prompt",
)


@dataclass(frozen=True)
class ServerConfig:
    ttft_s: float = 0.0
    itl_s: float = 0.0
    tokens_per_chunk: int = 1
    firehose: bool = False
    fault: str | None = None
    record_stamps: bool = True


@dataclass
class ServerStats:
    requests: int = 0
    active: int = 0
    max_active: int = 0
    prompt_tokens: list[int] = field(default_factory=list)
    stamps: dict[str, list[float]] = field(default_factory=dict)
    chunks_sent: int = 0
    first_send: float | None = None
    last_send: float | None = None

    def sent(self, chunks: int, when: float) -> None:
        self.chunks_sent += chunks
        if self.first_send is None:
            self.first_send = when
        self.last_send = when


_HEAD_OK = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
)
_END = b"0\r\n\r\n"


def _frame(event: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(event), event)


def _count_prompt(body: dict[str, Any]) -> int:
    """Token ids are counted exactly; text by whitespace words (the tests' tokenizer)."""
    prompt = body.get("prompt")
    if isinstance(prompt, list):
        return len(prompt)
    if isinstance(prompt, str):
        return len(prompt.split())
    messages = body.get("messages") or []
    return sum(len(str(m.get("content", "")).split()) for m in messages if isinstance(m, dict))


class _Stream:
    """The chunks of one response, produced lazily so a 4,096-stream run stays small."""

    def __init__(self, body: dict[str, Any], rid: str, prompt_tokens: int, fault: str | None):
        self.chat = "messages" in body
        self.rid = rid
        self.fault = fault
        opts = body.get("stream_options") or {}
        self.usage_each = bool(opts.get("continuous_usage_stats"))
        self.usage_end = bool(opts.get("include_usage"))
        n = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        if fault == "ignore_max_tokens":
            n += 7
        elif fault == "early_end":
            n = max(1, n // 2)
        self.total = n
        self.prompt = prompt_tokens * 5 if fault == "wrong_prompt" else prompt_tokens
        self.sent = 0
        model = str(body.get("model", "m")).encode()
        kind = b"chat.completion.chunk" if self.chat else b"text_completion"
        self.head = b'{"id":"%s","object":"%s","created":0,"model":"%s","choices":[' % (
            rid.encode(),
            kind,
            model,
        )

    def _usage(self, done: int) -> bytes:
        return b'{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}' % (
            self.prompt,
            done,
            self.prompt + done,
        )

    def opening(self) -> bytes:
        if not self.chat:
            return b""
        role = b'{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}'
        return _frame(b"data: " + self.head + role + b'],"usage":null}\n\n')

    def next_chunk(self, k: int) -> bytes:
        """The next content chunk carrying up to k tokens."""
        k = min(k, self.total - self.sent)
        self.sent += k
        last = self.sent >= self.total
        text = b" tok" * k
        reason = (b'"stop"' if self.fault == "early_end" else b'"length"') if last else b"null"
        if self.chat:
            choice = b'{"index":0,"delta":{"content":"%s"},"finish_reason":%s}' % (text, reason)
        else:
            choice = b'{"index":0,"text":"%s","logprobs":null,"finish_reason":%s}' % (text, reason)
        usage = self._usage(self.sent) if self.usage_each else b"null"
        return _frame(b"data: " + self.head + choice + b'],"usage":' + usage + b"}\n\n")

    def closing(self) -> bytes:
        tail = b""
        if self.usage_end:
            tail += _frame(
                b"data: " + self.head + b'],"usage":' + self._usage(self.sent) + b"}\n\n"
            )
        return tail + _frame(b"data: [DONE]\n\n") + _END

    @property
    def finished(self) -> bool:
        return self.sent >= self.total


class _Wheel:
    """One timer for every timed stream: a heap of (due time, seq, connection)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.heap: list[tuple[float, int, _Conn]] = []
        self.seq = itertools.count()
        # uvloop hands back a plain Handle (no `when()`) for a due time already past
        self.armed: asyncio.Handle | None = None
        self.armed_at = 0.0

    def add(self, due: float, conn: _Conn) -> None:
        heapq.heappush(self.heap, (due, next(self.seq), conn))
        if self.armed is None or due < self.armed_at:
            self._arm(due)

    def _arm(self, due: float) -> None:
        if self.armed is not None:
            self.armed.cancel()
        self.armed, self.armed_at = self.loop.call_at(due, self._tick), due

    def _tick(self) -> None:
        self.armed = None
        now = self.loop.time()
        heap = self.heap
        while heap and heap[0][0] <= now + 0.0002:
            _, _, conn = heapq.heappop(heap)
            conn.on_due()
        if heap:
            self._arm(heap[0][0])


class TestServer:
    """Create with a config, `await start()`, read `port` and `stats`, `await stop()`."""

    __test__ = False  # not a pytest class

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        self.stats = ServerStats()
        self.port = 0
        self._server: asyncio.Server | None = None
        self._wheel: _Wheel | None = None
        self.conns: set[_Conn] = set()
        self._firehose_cache: dict[tuple[int, int, bool, bool, bool], bytes] = {}

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        loop = asyncio.get_running_loop()
        self._wheel = _Wheel(loop)
        self._server = await loop.create_server(lambda: _Conn(self), host, port, backlog=8192)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for conn in list(self.conns):
                if conn.transport is not None:
                    conn.transport.abort()
            self._server = None

    def stamps_json(self) -> bytes:
        s = self.stats
        return orjson.dumps(
            {"requests": s.requests, "max_active": s.max_active, "stamps": s.stamps}
        )

    def summary_json(self) -> bytes:
        s = self.stats
        return orjson.dumps(
            {
                "requests": s.requests,
                "max_active": s.max_active,
                "chunks_sent": s.chunks_sent,
                "first_send": s.first_send,
                "last_send": s.last_send,
            }
        )


class _Conn(asyncio.Protocol):
    def __init__(self, server: TestServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buf = b""
        self.stream: _Stream | None = None
        self.stamps: list[float] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.server.conns.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.conns.discard(self)
        if self.stream is not None:
            self._end_stream()
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if self.buf[:1] and not self.buf[:1].isalpha():  # not HTTP (a TLS hello, say)
            assert self.transport is not None
            self._reply("400 Bad Request", b'{"error":{"message":"not HTTP"}}')
            self.transport.close()
            self.buf = b""
            return
        while self.stream is None and self.transport is not None:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buf[:head_end].decode("latin-1")
            lines = head.split("\r\n")
            headers = {
                k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])
            }
            length = int(headers.get("content-length", "0"))
            if len(self.buf) < head_end + 4 + length:
                return
            body = self.buf[head_end + 4 : head_end + 4 + length]
            self.buf = self.buf[head_end + 4 + length :]
            parts = lines[0].split(" ")
            self._handle(parts[0], parts[1] if len(parts) > 1 else "/", headers, body)

    def _reply(self, status: str, payload: bytes, ctype: bytes = b"application/json") -> None:
        assert self.transport is not None
        self.transport.write(
            b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s"
            % (status.encode(), ctype, len(payload), payload)
        )

    def _handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> None:
        if method == "GET" and path in ("/health", "/v1/models"):
            self._reply("200 OK", b'{"status":"ok"}')
            return
        if method == "GET" and path == "/stamps":
            self._reply("200 OK", self.server.stamps_json())
            return
        if method == "GET" and path == "/summary":
            self._reply("200 OK", self.server.summary_json())
            return
        if method != "POST" or not path.endswith(("/completions", "/chat/completions")):
            self._reply("404 Not Found", b'{"error":{"message":"not found"}}')
            return
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self._reply("400 Bad Request", b'{"error":{"message":"invalid JSON"}}')
            return
        self._start_stream(body, headers.get("x-request-id", f"req-{self.server.stats.requests}"))

    def _start_stream(self, body: dict[str, Any], rid: str) -> None:
        cfg, stats = self.server.config, self.server.stats
        fault = body.get("test_fault") or cfg.fault
        stats.requests += 1
        if fault in ("http500", "http429"):
            status = "500 Internal Server Error" if fault == "http500" else "429 Too Many Requests"
            self._reply(status, b'{"error":{"message":"injected fault"}}')
            return
        prompt = _count_prompt(body)
        stats.prompt_tokens.append(prompt)
        self.stream = _Stream(body, rid, prompt, fault)
        stats.active += 1
        stats.max_active = max(stats.max_active, stats.active)
        if cfg.record_stamps:
            self.stamps = stats.stamps.setdefault(rid, [])
        assert self.transport is not None
        if cfg.firehose and fault is None:
            self._firehose()
            return
        self.transport.write(_HEAD_OK + self.stream.opening())
        self._schedule(cfg.ttft_s)

    def _firehose(self) -> None:
        stream, k = self.stream, self.server.config.tokens_per_chunk
        assert stream is not None and self.transport is not None
        # the whole response is cached per shape, so the server costs one write per request
        key = (stream.total, stream.prompt, stream.chat, stream.usage_each, stream.usage_end)
        cache = self.server._firehose_cache
        if key not in cache:
            parts = [_HEAD_OK, stream.opening()]
            while not stream.finished:
                parts.append(stream.next_chunk(k))
            parts.append(stream.closing())
            cache[key] = b"".join(parts)
        stream.sent = stream.total
        self.transport.write(cache[key])
        now, chunks = time.monotonic(), -(-stream.total // k)
        self.server.stats.sent(chunks, now)
        if self.stamps is not None:
            self.stamps.extend([now] * chunks)
        self._end_stream()

    def _schedule(self, delay: float) -> None:
        wheel = self.server._wheel
        assert wheel is not None
        wheel.add(wheel.loop.time() + delay, self)

    def on_due(self) -> None:
        stream, transport = self.stream, self.transport
        if stream is None or transport is None:
            return
        fault = stream.fault
        if fault == "malformed" and stream.sent > 0:
            transport.write(_frame(b'data: {"choices": [\n\n'))
        elif fault == "error_event" and stream.sent > 0:
            transport.write(_frame(b'data: {"error":{"message":"injected error event"}}\n\n'))
        elif fault == "drop" and stream.sent >= max(1, stream.total // 2):
            transport.abort()
            return
        elif fault == "stall" and stream.sent > 0:
            return  # keep the connection open, send nothing more
        else:
            transport.write(stream.next_chunk(self.server.config.tokens_per_chunk))
            now = time.monotonic()
            self.server.stats.sent(1, now)
            if self.stamps is not None:
                self.stamps.append(now)
            if not stream.finished:
                self._schedule(self.server.config.itl_s)
                return
        transport.write(stream.closing())
        self._end_stream()

    def _end_stream(self) -> None:
        self.stream = None
        self.stamps = None
        self.server.stats.active -= 1
        if self.buf:
            self.data_received(b"")


@contextmanager
def serve_in_thread(config: ServerConfig | None = None) -> Iterator[TestServer]:
    """Run a TestServer on 127.0.0.1:<ephemeral> in a background thread (for tests)."""
    server = TestServer(config)
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, name="inferbench-testserver", daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def main(argv: list[str] | None = None) -> None:
    """`python benchmarks/harness/testserver.py --ttft 0.05 --itl 0.005 [--firehose]`."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ttft", type=float, default=0.0)
    parser.add_argument("--itl", type=float, default=0.0)
    parser.add_argument("--tokens-per-chunk", type=int, default=1)
    parser.add_argument("--firehose", action="store_true")
    parser.add_argument("--fault", choices=FAULTS)
    parser.add_argument("--no-stamps", action="store_true")
    args = parser.parse_args(argv)
    config = ServerConfig(
        ttft_s=args.ttft,
        itl_s=args.itl,
        tokens_per_chunk=args.tokens_per_chunk,
        firehose=args.firehose,
        fault=args.fault,
        record_stamps=not args.no_stamps,
    )

    async def serve() -> None:
        server = TestServer(config)
        await server.start(port=args.port)
        print(f"port {server.port}", flush=True)
        await asyncio.Event().wait()

    try:
        import uvloop

        uvloop.run(serve())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
