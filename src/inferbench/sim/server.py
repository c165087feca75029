"""`inferbench sim serve`: an OpenAI-compatible HTTP server whose tokens follow the engine.

Each request becomes a `Seq` in the same SimCluster the estimate runs; the real-time
driver steps it on the event loop's clock, and every token the engine emits is
sent when its step ends (grouped by `stream-interval`, as vLLM does). With
`record_sends` the server writes when it actually sent each chunk next to when the
engine scheduled it, so a client's timing error can be measured against it.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import os
import random
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from inferbench.core.errors import InputError, Location
from inferbench.core.fsio import WriteFailed, write_output
from inferbench.sim import protocol as proto
from inferbench.sim.build import build_cluster
from inferbench.sim.cache_metrics import render_cache_metrics
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.driver import RealTimeDriver
from inferbench.sim.metrics import ServerMetrics
from inferbench.sim.prefix import token_block_hashes
from inferbench.sim.scheduler import Seq
from inferbench.sim.serve_options import ServeOptions


@dataclass(slots=True, eq=False)
class _Stream:
    """Tokens of one request waiting to be written, and when the engine produced them."""

    seq: Seq
    interval: int
    pending: list[tuple[float, int, int]] = field(default_factory=list)  # (time, tokens, total)
    generated: int = 0
    emitted: int = 0
    finished: bool = False
    waiter: asyncio.Future[None] | None = None

    def wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def on_tokens(self, when: float, count: int) -> None:
        self.generated += count
        g = self.generated
        if g == 1 or (g - 1) % self.interval == 0 or g >= self.seq.output:
            self.pending.append((when, g - self.emitted, g))
            self.emitted = g
            self.wake()


class _Listener:
    per_token = True

    def __init__(self, server: SimServer) -> None:
        self.server = server

    def on_tokens(self, seq: Seq, time: float, count: int) -> None:
        stream = seq.tag
        if isinstance(stream, _Stream):
            stream.on_tokens(time, count)

    def on_decode_step(self, seqs: list[Seq], time: float) -> None:
        # the hot path at thousands of streams: one token per sequence per step, inlined
        for seq in seqs:
            stream = seq.tag
            if not isinstance(stream, _Stream):
                continue
            g = stream.generated = stream.generated + 1
            if (g - 1) % stream.interval == 0 or g >= seq.output:
                stream.pending.append((time, g - stream.emitted, g))
                stream.emitted = g
                stream.wake()

    def on_finish(self, seq: Seq, time: float) -> None:
        self.server.finished(seq)
        stream = seq.tag
        if isinstance(stream, _Stream):
            stream.finished = True
            stream.wake()


class SimServer:
    """The aiohttp application around one SimCluster."""

    def __init__(self, dep: SimDeployment, options: ServeOptions) -> None:
        self.dep, self.options = dep, options
        self.metrics = ServerMetrics(dep.served_model)
        self.cluster = build_cluster(
            dep, _Listener(self), step_time_factor=options.step_time_factor
        )
        self.rng = random.Random(options.seed)
        self.ids = itertools.count()
        self.lateness: list[float] = []  # sent - scheduled, per chunk
        self.sends: list[tuple[int, int, int, float, float, float]] = []
        self.completed = 0
        self.open_streams = 0
        self.peak_streams = 0
        self.url = ""
        names = {dep.served_model, dep.model.key, *dep.model.aliases}
        self.model_names = {n.lower() for n in names}
        self._runner: web.AppRunner | None = None
        self.driver: RealTimeDriver | None = None
        self._started = 0.0
        self._closing = asyncio.Event()  # releases stalled streams at shutdown

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> str:
        self.driver = RealTimeDriver(self.cluster)
        self.driver.start()
        self._started = self.driver.now()
        app = web.Application(middlewares=[_json_errors], client_max_size=64 * 2**20)
        app.add_routes(
            [
                web.post("/v1/completions", self._completions),
                web.post("/v1/chat/completions", self._chat),
                web.get("/v1/models", self._models),
                web.get("/health", self._health),
                web.get("/metrics", self._metrics),
            ]
        )
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=2.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.options.host, self.options.port, backlog=8192)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            await self.driver.stop()
            raise _listen_error(self.options.host, self.options.port, exc) from None
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"
        return self.url

    async def close(self) -> None:
        self._closing.set()
        if self.driver is not None:
            await self.driver.stop()
        if self._runner is not None:
            await self._runner.cleanup()
        self.write_sends()

    def write_sends(self) -> None:
        if self.options.record_sends is None:
            return
        lines = [
            orjson.dumps(
                {"request": r, "chunk": c, "tokens": n, "scheduled": s, "sent": t, "wall": w}
            )
            for r, c, n, s, t, w in self.sends
        ]
        data = b"\n".join(lines) + b"\n" if lines else b""
        write_output(self.options.record_sends, data, "--record-sends")

    def summary(self) -> str:
        """One line of what the server did: requests, peak streams, chunk lateness."""
        late = sorted(self.lateness)
        p50 = late[len(late) // 2] * 1000 if late else 0.0
        p99 = late[int(len(late) * 0.99)] * 1000 if late else 0.0
        return (
            f"served {self.completed} requests, peak {self.peak_streams} concurrent streams, "
            f"{len(late)} chunks sent {p50:.1f} ms (p50) / {p99:.1f} ms (p99) after schedule"
        )

    @property
    def healthy(self) -> bool:
        assert self.driver is not None
        return self.driver.now() - self._started >= self.options.slow_start_s

    def finished(self, seq: Seq) -> None:
        m = self.metrics
        m.success += 1
        m.generation_tokens += seq.output
        if seq.first_token is not None and seq.done is not None:
            m.ttft.observe(seq.first_token - seq.arrival)
            m.e2e.observe(seq.done - seq.arrival)
            if seq.output > 1:
                m.tpot.observe((seq.done - seq.first_token) / (seq.output - 1))
        self.completed += 1

    def _maybe_crash(self) -> None:
        """--crash-after N: once N responses are out, die the way a crashed engine does."""
        limit = self.options.crash_after
        if limit is None or self.completed < limit:
            return
        message = f"inferbench sim: crashing after {self.completed} requests (--crash-after)"
        print(message, file=sys.stderr, flush=True)
        asyncio.get_running_loop().call_later(0.1, os._exit, 3)  # lets the last reply go out

    # -- endpoints ----------------------------------------------------------------------
    async def _health(self, request: web.Request) -> web.Response:
        if not self.healthy:
            return web.Response(status=503, text="starting")
        return web.Response(status=200)

    async def _models(self, request: web.Request) -> web.Response:
        entry = {
            "id": self.dep.served_model,
            "object": "model",
            "created": int(time.time()),
            "owned_by": "inferbench-sim",
            "root": self.dep.served_model,
            "parent": None,
            "max_model_len": self.dep.max_model_len,
        }
        return _json({"object": "list", "data": [entry]})

    async def _metrics(self, request: web.Request) -> web.Response:
        running, waiting = self.cluster.counts()
        text = self.metrics.render(running, waiting, self.cluster.kv_usage())
        text += render_cache_metrics(self.cluster, self.metrics.labels, self.dep.engine)
        return web.Response(text=text, content_type="text/plain", charset="utf-8")

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=False)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, chat=True)

    async def _generate(self, request: web.Request, *, chat: bool) -> web.StreamResponse:
        if not self.healthy:
            return _error(503, "server is starting", "ServiceUnavailableError")
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return _error(400, "request body is not valid JSON", "BadRequestError")
        try:
            req = proto.parse_request(body, chat=chat, max_model_len=self.dep.max_model_len)
        except proto.RequestError as exc:
            return _error(exc.status, exc.message, exc.kind)
        if req.model and req.model.lower() not in self.model_names:
            return _error(404, f"The model `{req.model}` does not exist.", "NotFoundError")
        roll = self.rng.random()
        opts = self.options
        if roll < opts.fault_error_rate:
            return _error(500, "injected fault (--fault-error-rate)", "InternalServerError")
        roll -= opts.fault_error_rate
        if roll < opts.fault_empty_rate:
            return await self._empty(req, chat, request)
        roll -= opts.fault_empty_rate
        fault = "stall" if roll < opts.fault_stall_rate else None
        if fault is None and roll - opts.fault_stall_rate < opts.fault_drop_rate:
            fault = "drop"
        assert self.driver is not None
        number = next(self.ids)
        seq = Seq(
            rid=number, prompt=req.prompt_tokens, output=req.max_tokens, arrival=self.driver.now()
        )
        if self.cluster.cache_stats is not None and isinstance(body.get("prompt"), list):
            seq.hashes = token_block_hashes(body["prompt"], self.dep.prompt_pool.block_size)
        stream = _Stream(seq, self.dep.stream_interval)
        seq.tag = stream
        self.metrics.prompt_tokens += req.prompt_tokens
        latency = self.dep.efficiency.front_latency_s
        if latency:  # the front end's fixed latency (calibrated) before the engine sees it
            await asyncio.sleep(latency)
        self.driver.submit(seq)
        rid = ("chatcmpl-" if chat else "cmpl-") + f"sim{number}"
        model = req.model or self.dep.served_model
        try:
            if not req.stream:
                return await self._whole(stream, req, rid, model, fault, request)
            return await self._stream(stream, req, rid, model, fault, request)
        finally:
            self._maybe_crash()

    async def _empty(
        self, req: proto.ParsedRequest, chat: bool, request: web.Request
    ) -> web.StreamResponse:
        """A successful answer that generated nothing (--fault-empty-rate)."""
        self.metrics.prompt_tokens += req.prompt_tokens
        rid = ("chatcmpl-" if chat else "cmpl-") + f"sim{next(self.ids)}"
        model = req.model or self.dep.served_model
        if not req.stream:
            body = proto.full_response(req, rid, model, 0)
            body["choices"][0]["finish_reason"] = "stop"
            return _json(body)
        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await resp.prepare(request)
        if chat:
            await resp.write(_sse(proto.stream_chunk(req, rid, model, text=None, role=True)))
        await resp.write(_sse(proto.stream_chunk(req, rid, model, text="", finish="stop")))
        if req.include_usage:
            use = proto.usage(req.prompt_tokens, 0)
            await resp.write(_sse(proto.usage_chunk(req, rid, model, use)))
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def _next(self, stream: _Stream) -> list[tuple[float, int, int]]:
        while not stream.pending and not stream.finished:
            stream.waiter = asyncio.get_running_loop().create_future()
            await stream.waiter
        items, stream.pending = stream.pending, []
        return items

    async def _whole(
        self,
        stream: _Stream,
        req: proto.ParsedRequest,
        rid: str,
        model: str,
        fault: str | None,
        request: web.Request,
    ) -> web.StreamResponse:
        while not stream.finished:
            await self._next(stream)
            if fault is not None:  # a stalled or dropped non-streaming request never answers
                _drop(request)
                return web.Response(status=500)
        return _json(proto.full_response(req, rid, model, stream.generated))

    async def _stream(
        self,
        stream: _Stream,
        req: proto.ParsedRequest,
        rid: str,
        model: str,
        fault: str | None,
        request: web.Request,
    ) -> web.StreamResponse:
        self.open_streams += 1
        self.peak_streams = max(self.peak_streams, self.open_streams)
        try:
            return await self._stream_body(stream, req, rid, model, fault, request)
        finally:
            self.open_streams -= 1

    async def _stream_body(
        self,
        stream: _Stream,
        req: proto.ParsedRequest,
        rid: str,
        model: str,
        fault: str | None,
        request: web.Request,
    ) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await resp.prepare(request)
        loop = asyncio.get_running_loop()
        chunk_no = 0
        try:
            if req.chat:
                await resp.write(_sse(proto.stream_chunk(req, rid, model, text=None, role=True)))
            while True:
                items = await self._next(stream)
                if not items and stream.finished:
                    break
                if fault == "stall":  # one chunk, however many tokens a late loop has ready
                    items = items[:1]
                parts = []
                for _, count, total in items:
                    last = total >= stream.seq.output
                    use = proto.usage(req.prompt_tokens, total) if req.continuous_usage else None
                    parts.append(
                        _sse(
                            proto.stream_chunk(
                                req,
                                rid,
                                model,
                                text=proto.filler(count),
                                finish="length" if last else None,
                                usage_now=use,
                            )
                        )
                    )
                await resp.write(b"".join(parts))
                sent, wall = loop.time(), time.time()
                for when, count, _ in items:
                    self.lateness.append(sent - when)
                    if self.options.record_sends is not None:
                        self.sends.append((stream.seq.rid, chunk_no, count, when, sent, wall))
                    chunk_no += 1
                if fault == "stall":
                    await self._closing.wait()  # until the client gives up or we shut down
                    return resp
                if fault == "drop" and stream.emitted * 2 >= stream.seq.output:
                    _drop(request)
                    return resp
            if req.include_usage:
                await resp.write(
                    _sse(
                        proto.usage_chunk(
                            req, rid, model, proto.usage(req.prompt_tokens, stream.generated)
                        )
                    )
                )
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
        except (ConnectionResetError, ConnectionError):
            pass  # the client went away; the engine still finishes the sequence
        return resp


def _drop(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


def _json(payload: dict[str, Any], status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(payload), status=status, content_type="application/json")


def _error(status: int, message: str, kind: str) -> web.Response:
    return _json(proto.error_body(status, message, kind), status)


@web.middleware
async def _json_errors(request: web.Request, handler: Any) -> web.StreamResponse:
    try:
        response: web.StreamResponse = await handler(request)
        return response
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        kind = "NotFoundError" if exc.status == 404 else "BadRequestError"
        return _error(exc.status, exc.reason, kind)


def _listen_error(host: str, port: int, exc: OSError) -> InputError:
    """Why the server cannot listen, blamed on the option to change."""
    why = exc.strerror or str(exc)
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return InputError(
            f"{host!r}: cannot listen there: {why}",
            location=Location(key="--host"),
            hint="give an address of this machine, e.g. 127.0.0.1 (loopback)",
        )
    if exc.errno == errno.EADDRINUSE:
        hint = "pick another port, or --port 0 for a free one"
    elif exc.errno == errno.EACCES:
        hint = "ports below 1024 need privileges: pick one above, or --port 0"
    else:
        hint = "check --host and --port"
    return InputError(
        f"{port}: cannot listen on {host}:{port}: {why}",
        location=Location(key="--port"),
        hint=hint,
    )


async def serve_until_stopped(
    dep: SimDeployment, options: ServeOptions, stop: asyncio.Event, on_ready: Any = None
) -> SimServer:
    """Run the server until `stop` is set (SIGTERM in the CLI); returns it for its figures."""
    server = SimServer(dep, options)
    url = await server.start()
    if on_ready is not None:
        on_ready(url)
    try:
        await stop.wait()
    finally:
        try:
            await server.close()
        except WriteFailed:
            raise  # --record-sends could not be written (disk full, read-only): say so
        except Exception:
            pass
    return server
