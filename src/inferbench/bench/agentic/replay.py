"""The replay loop: `lanes` coroutines, each replaying one session after another.

Every session, warm-up or measured, takes the next trace of one shared queue (the traces in
order, round and round), as aiperf's lanes do: each trace is replayed as often as the others,
whatever its length (a lane that drew a short trace draws again sooner). Lanes start the
window together, after the window-start `/metrics` scrape, so the scrape sees no request of
the window.

A session replays its trace's root conversation turn by turn; a turn sleeps its recorded
idle gap (capped), then sends its whole prompt as exact token ids (or, in chat-text mode,
the conversation as chat messages: `chat.py`) and waits for the streamed answer. A fork
starts its subagent conversations concurrently (each at its offset) and, when it joins, the
parent waits for all of them. The first failed request
ends its session: the session counts once as failed, with that request, and the lane
starts its next session. Lanes stop starting requests once the window ends.

Every request carries its conversation's id, the same over all its turns, so a router or an
engine can keep a session on one worker: `X-Correlation-ID` (aiperf's; what ATOM's DP session
affinity and srt-slurm's nginx affinity can key on) and `X-Dynamo-Session-ID` (Dynamo's), a
subagent its own id with `X-Dynamo-Parent-Session-ID`.
"""

from __future__ import annotations

import asyncio
import gc
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import numpy as np
import orjson

from inferbench.bench.agentic.chat import ChatConversation, TextOfIds, chat_prompt_slack
from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.agentic.reuse import PrefixTrie
from inferbench.bench.agentic.tokens import TokenSource, salt_base
from inferbench.bench.client import (
    DURATION_GRACE_S,
    STOPPED,
    PreparedRequest,
    Transport,
    interrupted_record,
    open_transport,
    send_request,
)
from inferbench.bench.records import RequestRecord
from inferbench.bench.settings import ClientOptions, Endpoint, RequestOptions
from inferbench.bench.traces.model import Stream, Trace, Turn

LIVE_GATE_MIN_REQUESTS = 32  # the live failure gate judges no fewer requests
RequestProgress = Callable[[int, int], None]  # (requests sent, of them failed)
_SESSION = "X-Dynamo-Session-ID"


def _session_headers(conversation: str, parent: str | None = None) -> tuple[tuple[str, str], ...]:
    """The session-affinity headers of one conversation (ids made of the run's tag and
    counters, never of trace contents, so nothing from a file reaches a header line)."""
    headers = (("X-Correlation-ID", conversation), (_SESSION, conversation))
    return (*headers, ("X-Dynamo-Parent-Session-ID", parent)) if parent else headers


@dataclass(slots=True)
class TurnRecord:
    """One request of the replay and where it sits in its session."""

    record: RequestRecord
    lane: int
    session: int  # session instance number (unique in the run)
    trace: str
    stream: str  # "main" or the subagent's name
    turn: int  # 1-based position in its stream
    depth: int  # 0 for the root conversation
    reused: int  # prompt tokens shared with an earlier prompt (client side)
    delay_s: float  # the idle gap slept before it
    server_cached: int | None = None  # prompt tokens the server found cached (simulator)
    conversation: str = ""  # its conversation's session id (the affinity headers' value)


@dataclass(slots=True)
class SessionRecord:
    lane: int
    session: int
    trace: str
    started: float
    ended: float = 0.0
    status: str = "completed"  # completed, failed, cut (the window ended first)
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failed_stream: str | None = None
    failed_turn: int | None = None
    error: str | None = None


@dataclass
class ReplayRun:
    turns: list[TurnRecord] = field(default_factory=list)
    sessions: list[SessionRecord] = field(default_factory=list)
    t0: float = 0.0
    end: float = 0.0
    wall_t0: float = 0.0  # Unix time at t0 (0: a virtual clock, no wall time)
    warmup_requests: int = 0
    interrupted: bool = False
    stopped_reason: str | None = None  # the live failure gate ended the window early

    @property
    def duration_s(self) -> float:
        return max(0.0, self.end - self.t0)


class _Session:
    """The state of one replayed session instance."""

    def __init__(self, replay: _Replay, lane: int, number: int, trace: Trace, measured: bool):
        self.replay = replay
        self.trace = trace
        self.measured = measured
        opts = replay.options
        nonce = replay.nonce
        scope: tuple[int | str, ...] = (opts.seed, nonce)
        if trace.scope == "local":
            scope += (trace.id, number if opts.cache_bust else 0)
        salt = salt_base(*scope)
        self.tokens = TokenSource(salt, opts.id_low, opts.id_high)
        self.trie = replay.trie_for(salt)
        self.record = SessionRecord(lane, number, trace.id, time.monotonic())
        self.detached: list[asyncio.Task[None]] = []
        self.conversation = f"{replay.tag}-{number}"  # the root's id; subagents add .k
        self.subagents = 0

    @property
    def over(self) -> bool:
        return self.record.status != "completed"

    async def run_stream(
        self, stream: Stream, depth: int, headers: tuple[tuple[str, str], ...]
    ) -> None:
        turn_no = 0
        own = dict(headers)[_SESSION]
        chat = self.replay.new_conversation()
        for step in stream.steps:
            if self.over:
                return
            if isinstance(step, Turn):
                turn_no += 1
                await self.send(step, stream.name, turn_no, depth, headers, chat)
                continue
            await self.idle(step.delay_s)
            tasks = []
            for b, off in zip(step.branches, step.offsets_s, strict=True):
                self.subagents += 1
                sub = _session_headers(f"{self.conversation}.{self.subagents}", own)
                tasks.append(asyncio.create_task(self.branch(b, off, depth + 1, sub)))
            if step.join:
                await asyncio.gather(*tasks)
            else:
                self.detached += tasks

    async def branch(
        self, stream: Stream, offset: float, depth: int, headers: tuple[tuple[str, str], ...]
    ) -> None:
        await self.idle(offset)
        await self.run_stream(stream, depth, headers)

    async def idle(self, recorded: float) -> None:
        gap = self.replay.options.gap(recorded) if self.measured else 0.0
        if gap > 0:
            await asyncio.sleep(gap)

    async def send(
        self,
        turn: Turn,
        stream: str,
        number: int,
        depth: int,
        headers: tuple[tuple[str, str], ...] = (),
        chat: ChatConversation | None = None,
    ) -> None:
        replay = self.replay
        gap = replay.options.gap(turn.delay_s) if self.measured else 0.0
        if gap > 0:
            await asyncio.sleep(gap)
        if self.over:
            return
        if replay.window_over():
            self.record.status = "cut"
            return
        ids = self.tokens.prompt(turn.prompt)
        # chat-text mode: decoding a long first prompt takes a while; off the event loop
        messages = (
            None if chat is None else await asyncio.to_thread(chat.messages, ids, turn.output)
        )
        req = replay.prepare(ids, turn.output, headers, messages)
        reused = self.trie.reuse_and_add(turn.prompt)
        try:
            rec = await replay.send(req)
        except asyncio.CancelledError:
            # stopped in flight (Ctrl-C, or still running past --duration): a failed turn,
            # so that completed + failed is every request sent
            rec = interrupted_record(req, replay.cut_reason)
            self._keep(rec, req, stream, number, depth, reused, gap, headers)
            raise
        self._keep(rec, req, stream, number, depth, reused, gap, headers)

    def _keep(
        self,
        rec: RequestRecord,
        req: PreparedRequest,
        stream: str,
        number: int,
        depth: int,
        reused: int,
        gap: float,
        headers: tuple[tuple[str, str], ...],
    ) -> None:
        replay = self.replay
        s = self.record
        s.requests += 1
        s.input_tokens += req.input_len
        s.output_tokens += rec.output_tokens
        if self.measured:
            conversation = dict(headers).get(_SESSION, "")
            replay.run.turns.append(
                TurnRecord(
                    rec,
                    s.lane,
                    s.session,
                    s.trace,
                    stream,
                    number,
                    depth,
                    reused,
                    gap,
                    conversation=conversation,
                )  # fmt: skip
            )
        else:
            replay.run.warmup_requests += 1
        if not rec.ok and not self.over:
            s.status, s.failed_stream, s.failed_turn = "failed", stream, number
            s.error = f"{rec.failure}: {rec.error}"

    async def run(self) -> SessionRecord:
        await self.run_stream(self.trace.root, 0, _session_headers(self.conversation))
        if self.detached:
            await asyncio.gather(*self.detached)
        self.record.ended = time.monotonic()
        return self.record


class _Replay:
    def __init__(
        self,
        endpoint: Endpoint,
        traces: tuple[Trace, ...],
        options: ReplayOptions,
        request: RequestOptions,
        client: ClientOptions,
        transport: Transport,
        text: TextOfIds | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.text = text  # chat-text mode: token ids become message text
        self.traces = traces
        self.options = options
        self.request = request
        self.client = client
        self.transport = transport
        self.run = ReplayRun()
        self.nonce = secrets.randbits(48) if options.cache_bust else 0
        self.tag = f"ag{secrets.token_hex(3)}"
        self.counter = 0
        self.session_counter = 0
        self.trace_counter = 0  # the shared queue's position
        self.started_measured = 0
        self.stop_at = float("inf")
        self.stopping = False
        self.cut_reason = STOPPED  # why a turn cut off in flight failed
        self.warmup_cut = False  # the warm-ups ran past the duration's bound and were cut
        self.warming: set[asyncio.Task[SessionRecord]] = set()
        self.sent = 0
        self.failed = 0
        self._tries: dict[bytes, PrefixTrie] = {}
        self._body = self._body_template()
        self.on_window_start: Callable[[], Awaitable[object]] | None = None
        self.window_open = asyncio.Event()  # set once the window-start scrape is done
        self.on_request: RequestProgress | None = None

    def trie_for(self, salt: bytes) -> PrefixTrie:
        trie = self._tries.get(salt)
        if trie is None:
            trie = self._tries[salt] = PrefixTrie()
        return trie

    def _body_template(self) -> dict[str, object]:
        body: dict[str, object] = {"model": self.endpoint.model}
        if self.request.ignore_eos:
            body["ignore_eos"] = True
        body["temperature"] = self.request.temperature
        body["stream"] = True
        usage = {"include_usage": True}
        if self.request.continuous_usage:
            usage["continuous_usage_stats"] = True
        body["stream_options"] = usage
        body.update(self.request.extra_body)
        return body

    def new_conversation(self) -> ChatConversation | None:
        """A stream's message history (chat-text mode), None when exact ids are sent."""
        return None if self.text is None else ChatConversation(self.text)

    def prepare(
        self,
        ids: np.ndarray,
        output: int,
        headers: tuple[tuple[str, str], ...] = (),
        messages: list[dict[str, str]] | None = None,
    ) -> PreparedRequest:
        self.counter += 1
        slack = 0
        if messages is None:
            body = {**self._body, "prompt": ids, "max_tokens": output}
        else:
            body = {**self._body, "messages": messages, "max_tokens": output}
            slack = chat_prompt_slack(len(messages))
        data = orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY)
        request_id = f"{self.tag}-{self.counter}"
        return PreparedRequest(self.counter, data, len(ids), output, slack, request_id, headers)

    async def send(self, req: PreparedRequest) -> RequestRecord:
        now = time.monotonic()
        rec = await send_request(self.transport, req, now, options=self.request, client=self.client)
        self.sent += 1
        self.failed += not rec.ok
        if self.on_request is not None:
            self.on_request(self.sent, self.failed)
        # a dead or failing server must not be hammered for the whole window: stop once
        # the failure share is past the gate (aiperf's live failed-request threshold)
        if (
            self.sent >= LIVE_GATE_MIN_REQUESTS
            and self.failed / self.sent > self.client.max_failure_rate
            and not self.stopping
        ):
            self.stopping = True
            self.run.stopped_reason = (
                f"{self.failed}/{self.sent} requests failed, above --max-failure-rate"
                f" {self.client.max_failure_rate:.1%}; the replay stopped early"
            )
        return rec

    def window_over(self) -> bool:
        return self.stopping or time.monotonic() >= self.stop_at

    def _next_trace(self) -> Trace:
        trace = self.traces[self.trace_counter % len(self.traces)]
        self.trace_counter += 1
        return trace

    def _next_number(self) -> int:
        self.session_counter += 1
        return self.session_counter

    async def lane(self, lane: int, barrier: asyncio.Barrier) -> None:
        for _ in range(self.options.warmup_sessions):
            if self.warmup_cut:
                break
            session = _Session(self, lane, self._next_number(), self._next_trace(), False)
            warm = asyncio.create_task(session.run())
            self.warming.add(warm)
            try:
                await warm
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if not self.warmup_cut or (current is not None and current.cancelling()):
                    raise  # the lane itself is stopped (Ctrl-C)
            finally:
                self.warming.discard(warm)
        await barrier.wait()
        await self.window_open.wait()
        wanted = self.options.sessions
        while not self.window_over():
            if wanted is not None and self.started_measured >= wanted:
                break
            self.started_measured += 1
            session = _Session(self, lane, self._next_number(), self._next_trace(), True)
            self.run.sessions.append(session.record)
            await session.run()

    async def _warm_up(self, waiter: asyncio.Task[int], lanes: list[asyncio.Task[None]]) -> None:
        """Wait for every lane's warm-up sessions. With --duration they are bounded too, by
        the duration and its grace (a stalled server would hold them for the request
        timeout, 600 s): past it they are cut and no window opens, the run incomplete."""
        duration = self.options.duration_s
        limit = None
        if duration is not None:
            limit = duration + min(self.client.request_timeout_s, DURATION_GRACE_S)
        done, _ = await asyncio.wait(
            [waiter, *lanes], timeout=limit, return_when=asyncio.FIRST_COMPLETED
        )
        if not done:
            self.warmup_cut = True
            self.cut_reason = f"warm-up still running {limit:g} s after it began"
            self.run.stopped_reason = (
                f"the warm-up sessions were still running {limit:g} s after they began"
                " (--duration and its grace): cut, and no window measured"
            )
            self.stopping = True
            for warm in list(self.warming):
                warm.cancel()
            await asyncio.wait([waiter, *lanes], return_when=asyncio.FIRST_COMPLETED)
        for t in lanes:  # a lane that crashed during warm-up: surface it
            if t.done() and t.exception() is not None:
                raise t.exception()  # type: ignore[misc]

    async def main(self) -> None:
        lanes = self.options.lanes
        barrier = asyncio.Barrier(lanes + 1)
        tasks = [asyncio.create_task(self.lane(i, barrier)) for i in range(lanes)]
        waiter = asyncio.create_task(barrier.wait())
        await self._warm_up(waiter, tasks)
        await waiter
        if self.on_window_start is not None:
            await self.on_window_start()
        self.run.t0 = time.monotonic()
        self.run.wall_t0 = time.time()
        if self.options.duration_s is not None:
            self.stop_at = self.run.t0 + self.options.duration_s
        self.window_open.set()
        if self.options.duration_s is None:
            await asyncio.gather(*tasks)
            return
        # bounded by the duration: a stalled server would hold the turns in flight for the
        # request timeout (600 s); past the grace they are cut, each a failed turn
        grace = min(self.client.request_timeout_s, DURATION_GRACE_S)
        left = self.stop_at + grace - time.monotonic()
        _, pending = await asyncio.wait(tasks, timeout=max(0.0, left))
        if pending:
            self.cut_reason = f"still running {grace:g} s after --duration ended"
            self.stopping = True
            for t in pending:
                t.cancel()
        for result in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                raise result


async def replay(
    endpoint: Endpoint,
    traces: tuple[Trace, ...],
    options: ReplayOptions,
    *,
    request: RequestOptions | None = None,
    client: ClientOptions | None = None,
    on_window_start: Callable[[], Awaitable[object]] | None = None,
    text: TextOfIds | None = None,
    on_request: RequestProgress | None = None,
) -> ReplayRun:
    """Replay `traces` over `options.lanes` lanes; returns every measured request and session.
    With `text` (chat-text mode) each conversation is sent as chat messages;
    `on_request(sent, failed)` follows every finished request (for a progress display)."""
    request = request or RequestOptions()
    client = client or ClientOptions()
    transport = open_transport(endpoint, client, options.lanes, request.secrets())
    state = _Replay(endpoint, traces, options, request, client, transport, text)
    state.on_window_start = on_window_start
    state.on_request = on_request
    gc.collect()
    gc.freeze()
    try:
        await state.main()
    except asyncio.CancelledError:
        state.run.interrupted = True
        state.stopping = True
    finally:
        await transport.close()
        gc.unfreeze()
    run = state.run
    last = max((t.record.done or t.record.sent for t in run.turns), default=run.t0)
    # a duration window lasts its duration even when its last request ended in an idle gap
    run.end = max(last, min(time.monotonic(), state.stop_at)) if run.t0 else last
    return run
