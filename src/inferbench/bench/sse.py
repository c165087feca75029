"""Incremental server-sent-events parsing for OpenAI-compatible streams.

`StreamState.feed(block, t)` takes whatever bytes one socket read returned
(events may be split anywhere, several may arrive at once) and the time that
read completed. It keeps only what the metrics need: the arrival time of each
chunk that carried generated content, the tokens each carried (from per-chunk
usage when the server sends it), the final usage, and whether the stream ended
properly. Role-only chunks, empty chunks, comments and the usage-only last chunk
are not tokens.
"""

from __future__ import annotations

import msgspec


class StreamProtocolError(Exception):
    """The stream was not valid SSE / JSON, or carried an error event."""


_DONE = b"[DONE]"


class _Usage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Delta(msgspec.Struct):
    content: str | None = None
    reasoning_content: str | None = None  # reasoning tokens are generated tokens too
    reasoning: str | None = None


class _Choice(msgspec.Struct):
    text: str | None = None  # completions
    delta: _Delta | None = None  # chat
    finish_reason: str | None = None


class _Chunk(msgspec.Struct):
    """The fields of a stream chunk the metrics need; everything else is skipped unread."""

    choices: list[_Choice] = []
    usage: _Usage | None = None
    error: msgspec.Raw | None = None


_decode = msgspec.json.Decoder(_Chunk).decode


class StreamState:
    """What one response stream has said so far."""

    __slots__ = (
        "_buf",
        "_keep_text",
        "_pending_tokens",
        "_usage_tokens",
        "chunk_times",
        "chunk_tokens",
        "completion_tokens",
        "done",
        "finish_reason",
        "per_chunk_usage",
        "prompt_tokens",
        "texts",
    )

    def __init__(self, *, keep_text: bool = False) -> None:
        self._buf = b""
        self._keep_text = keep_text
        self._pending_tokens = 0  # tokens reported by usage on chunks without text
        self._usage_tokens = 0  # last cumulative usage.completion_tokens seen
        self.chunk_times: list[float] = []
        self.chunk_tokens: list[int] = []
        self.completion_tokens: int | None = None
        self.prompt_tokens: int | None = None
        self.done = False
        self.finish_reason: str | None = None
        self.per_chunk_usage = True  # until a content chunk arrives without usage
        self.texts: list[str] = []

    @property
    def output_tokens(self) -> int:
        """Server-reported completion tokens, else the tokens counted from chunks."""
        if self.completion_tokens is not None:
            return self.completion_tokens
        return sum(self.chunk_tokens)

    @property
    def ended(self) -> bool:
        """True when the server said the stream is over ([DONE] or a finish_reason)."""
        return self.done or self.finish_reason is not None

    def feed(self, block: bytes, t: float) -> None:
        """Consume one read; raises StreamProtocolError on malformed data or an error event."""
        if (  # one whole single-line event: the common read
            not self._buf
            and block.startswith(b"data: ")
            and block.find(b"\n") == len(block) - 2
            and block.endswith(b"\n\n")
        ):
            self.on_data(block[6:-2], t)
            return
        data = self._buf + block if self._buf else block
        if b"\r" in data:
            data = _normalise_newlines(data)
        events = data.split(b"\n\n")
        self._buf = events.pop()  # an incomplete event waits for the next read
        on_data = self.on_data
        for event in events:
            # fast path: one `data: ` line, the form every engine sends
            if event[:6] == b"data: " and b"\n" not in event:
                on_data(event[6:], t)
            elif event:
                self._on_event_lines(event, t)

    def finish(self) -> None:
        """The connection ended: a trailing event without its blank line still counts."""
        if self._buf.strip():
            rest, self._buf = self._buf, b""
            self.feed(rest + b"\n\n", self.chunk_times[-1] if self.chunk_times else 0.0)

    def _on_event_lines(self, event: bytes, t: float) -> None:
        data_lines: list[bytes] = []
        for line in event.split(b"\n"):
            if not line or line.startswith(b":"):
                continue  # comment / keep-alive
            field, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            if field == b"data":
                data_lines.append(value)
            elif field == b"event" and value.strip() == b"error":
                raise StreamProtocolError("server sent an error event")
        if data_lines:
            self.on_data(b"\n".join(data_lines), t)

    def on_data(self, payload: bytes, t: float) -> None:
        """One event's data (the hot path: one call per chunk, kept lean)."""
        if payload == _DONE:
            self.done = True
            return
        try:
            chunk = _decode(payload)
        except msgspec.DecodeError as exc:  # also wrong types (ValidationError)
            raise StreamProtocolError(f"malformed JSON in stream: {exc}") from None
        if chunk.error is not None:
            raise StreamProtocolError(f"error event: {bytes(chunk.error)[:160].decode()}")
        usage = chunk.usage
        new_tokens = None
        if usage is not None:
            if usage.prompt_tokens is not None:
                self.prompt_tokens = usage.prompt_tokens
            completion = usage.completion_tokens
            if completion is not None:
                self.completion_tokens = completion
                new_tokens = completion - self._usage_tokens
                if new_tokens < 0:
                    new_tokens = 0
                self._usage_tokens = completion
        choices = chunk.choices
        if not choices:
            return  # usage-only chunk
        choice = choices[0]
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason
        text = choice.text
        if text is None and choice.delta is not None:
            delta = choice.delta
            text = delta.content or delta.reasoning_content or delta.reasoning
        if not text:
            if new_tokens:
                self._pending_tokens += new_tokens
            return
        self.chunk_times.append(t)
        if new_tokens is None:
            self.per_chunk_usage = False
            self.chunk_tokens.append(1)
        else:
            self.chunk_tokens.append(new_tokens + self._pending_tokens)
            self._pending_tokens = 0
        if self._keep_text:
            self.texts.append(text)

    @property
    def between_events(self) -> bool:
        """No partial event is buffered (a transport may then hand over whole events)."""
        return not self._buf


def _normalise_newlines(data: bytes) -> bytes:
    """CRLF / CR line ends to LF; a trailing CR waits, since its LF may be in the next read."""
    tail = b""
    if data.endswith(b"\r"):
        data, tail = data[:-1], b"\r"
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n") + tail
