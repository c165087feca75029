"""The HTTP side: request bodies built ahead of time, and one streamed request.

One transport (connection pool) per worker. The hot path only reads bytes,
stamps the read, and hands them to `StreamState`; nothing is tokenised or
serialised while the clock runs.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import orjson

from inferbench.bench.datasets import Prompt
from inferbench.bench.http import AiohttpTransport, FastTransport, TransportError
from inferbench.bench.records import FailureKind, RequestRecord
from inferbench.bench.settings import ApiKind, ClientOptions, Endpoint, RequestOptions
from inferbench.bench.sse import StreamProtocolError, StreamState

# slack on top of the relative tolerance: a BOS token for text, a chat template for chat
_PROMPT_SLACK = {"ids": 0, "text": 2, "chat": 64}


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """A request ready to send: its body bytes and what it should produce."""

    index: int
    body: bytes
    input_len: int
    output_len: int
    prompt_slack: int
    request_id: str
    # per-request headers besides X-Request-Id (a replay's session ids); plain tokens only
    headers: tuple[tuple[str, str], ...] = ()


def prepare_request(
    prompt: Prompt, endpoint: Endpoint, options: RequestOptions, tag: str
) -> PreparedRequest:
    """Serialise one request body (done before the clock starts)."""
    body: dict[str, object] = {"model": endpoint.model}
    if endpoint.api is ApiKind.CHAT:
        if not isinstance(prompt.prompt, str):
            raise ValueError("chat requests need a text prompt")
        body["messages"] = [{"role": "user", "content": prompt.prompt}]
        slack = _PROMPT_SLACK["chat"]
    else:
        body["prompt"] = prompt.prompt
        slack = _PROMPT_SLACK["text" if isinstance(prompt.prompt, str) else "ids"]
    body["max_tokens"] = prompt.output_len
    if options.ignore_eos:
        body["ignore_eos"] = True
    body["temperature"] = options.temperature
    body["stream"] = True
    usage: dict[str, bool] = {"include_usage": True}
    if options.continuous_usage:
        usage["continuous_usage_stats"] = True
    body["stream_options"] = usage
    body.update(options.extra_body)
    return PreparedRequest(
        index=prompt.index,
        body=orjson.dumps(body),
        input_len=prompt.input_len,
        output_len=prompt.output_len,
        prompt_slack=slack,
        request_id=f"{tag}-{prompt.index}",
    )


Transport = FastTransport | AiohttpTransport


def open_transport(
    endpoint: Endpoint, options: ClientOptions, concurrency: int, secrets: tuple[str, ...] = ()
) -> Transport:
    """The connection pool for one worker; the API key lives only in its headers. What the
    server sends back is redacted of the endpoint's secrets and of `secrets` (those of the
    request body: `RequestOptions.secrets`)."""
    headers = endpoint.headers()
    transport: Transport
    if options.http_client == "aiohttp":
        transport = AiohttpTransport(
            endpoint.url, headers, options.connect_timeout_s, concurrency, options.read_bufsize
        )
    else:
        transport = FastTransport(
            endpoint.url,
            headers,
            options.connect_timeout_s,
            kernel_stamps=options.receive_stamps == "kernel",
        )
    # the URL's password too, not only the headers
    transport.redact = endpoint.redactor().plus(secrets)
    return transport


async def send_request(
    transport: Transport,
    req: PreparedRequest,
    scheduled: float,
    *,
    options: RequestOptions,
    client: ClientOptions,
    worker: int = 0,
) -> RequestRecord:
    """Send one streamed request; every outcome becomes a record (failures categorised)."""
    record = RequestRecord(
        index=req.index,
        scheduled=scheduled,
        sent=0.0,
        intended_input_tokens=req.input_len,
        intended_output_tokens=req.output_len,
        worker=worker,
    )
    state = StreamState(keep_text=client.detail)
    record.sent = time.monotonic()
    try:
        async with asyncio.timeout(client.request_timeout_s):
            status, snippet = await transport.stream(req.body, req.request_id, state, req.headers)
        if status != 200:
            _fail(record, FailureKind.HTTP_STATUS, f"HTTP {status}: {snippet}"[:240])
        else:
            state.finish()
    except StreamProtocolError as exc:
        _fail(record, FailureKind.STREAM_ERROR, str(exc))
    except TimeoutError:
        limit = client.request_timeout_s
        _fail(record, FailureKind.TIMEOUT, f"no complete response within {limit:g} s")
    except TransportError as exc:
        _fail(record, exc.kind, str(exc))
    record.done = time.monotonic()
    _finish(record, state, req, options, client)
    # what the server sent back may echo the request's secrets: never keep them
    record.error = transport.redact.optional(record.error)
    record.generated_text = transport.redact.optional(record.generated_text)
    return record


# How long the requests in flight when --duration ends may take to finish: a point is
# bounded by its duration (a stalled server would otherwise hold it for --request-timeout,
# 600 s), yet a healthy request that started just before the end is not cut.
DURATION_GRACE_S = 30.0
STOPPED = "stopped before its response ended (Ctrl-C or SIGTERM)"


def interrupted_record(
    req: PreparedRequest, why: str, scheduled: float | None = None, sent: float | None = None,
    worker: int = 0,
) -> RequestRecord:  # fmt: skip
    """The record of a request cut off in flight: failed, `interrupted`, with the reason (a
    stopped point keeps completed + failed == sent: a request cut off is no success, and
    not nothing)."""
    now = time.monotonic()
    return RequestRecord(
        index=req.index,
        scheduled=now if scheduled is None else scheduled,
        sent=now if sent is None else sent,
        intended_input_tokens=req.input_len,
        intended_output_tokens=req.output_len,
        done=now,
        failure=FailureKind.INTERRUPTED,
        error=why,
        worker=worker,
    )


def _fail(record: RequestRecord, kind: FailureKind, message: str) -> None:
    record.failure = kind
    record.error = message


def _finish(
    record: RequestRecord,
    state: StreamState,
    req: PreparedRequest,
    options: RequestOptions,
    client: ClientOptions,
) -> None:
    """Copy what the stream said into the record and decide whether it succeeded."""
    record.chunk_times = state.chunk_times
    record.chunk_tokens = state.chunk_tokens
    record.per_chunk_usage = state.per_chunk_usage and bool(state.chunk_times)
    record.input_tokens = state.prompt_tokens
    record.output_tokens = state.output_tokens
    if client.detail:
        record.generated_text = "".join(state.texts)
    if record.failure is not None:
        return
    if not state.ended:
        _fail(record, FailureKind.STREAM_ERROR, "stream ended before [DONE]")
    elif not state.chunk_times:
        _fail(record, FailureKind.STREAM_ERROR, "stream carried no generated content")
    elif _prompt_mismatch(record, req, client):
        _fail(
            record,
            FailureKind.PROMPT_MISMATCH,
            f"server counted {record.input_tokens} prompt tokens, intended {req.input_len}",
        )
    elif options.ignore_eos and record.output_tokens != req.output_len:
        _fail(
            record,
            FailureKind.TRUNCATED,
            f"{record.output_tokens} output tokens, asked for {req.output_len}",
        )
    else:
        record.ok = True


def _prompt_mismatch(record: RequestRecord, req: PreparedRequest, client: ClientOptions) -> bool:
    if record.input_tokens is None or req.input_len <= 0:
        return False
    allowed = max(req.prompt_slack, client.prompt_tolerance * req.input_len)
    return abs(record.input_tokens - req.input_len) > allowed
