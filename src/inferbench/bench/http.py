"""Transports that stream one response into a `StreamState`.

`FastTransport` is a small HTTP/1.1 keep-alive client on an asyncio protocol:
the socket read callback de-chunks the body and feeds the SSE parser directly,
stamping each read once, with no per-chunk coroutine switches or buffer
objects. aiohttp spends about as much time per chunk in its own reader as the
whole parse costs, which caps one core well under the 300k chunks/s target.
`AiohttpTransport` (one pooled connector, large read buffer) is kept for
setups the fast path does not cover (proxies); both raise the same errors.

Receive stamps. On plain-HTTP connections on Linux the fast transport reads the
socket itself with `recvmsg` and takes each read's time from the kernel
(`SO_TIMESTAMPNS`: when the last packet of the read arrived), converted to the
monotonic clock. A chunk that arrives while the client is busy with others
(thousands of streams whose tokens land in the same decode step) is then
stamped when it arrived, not when the event loop got round to it, so the
client's own load does not inflate TTFT or ITL. TLS connections, and kernels
without the option, stamp in the read callback.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
import sys
import time
from itertools import repeat
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from inferbench.bench.records import FailureKind
from inferbench.bench.sse import StreamProtocolError, StreamState
from inferbench.core.redact import Redactor

_HEAD, _CHUNKED, _LENGTH, _UNTIL_CLOSE, _TRAILER = range(5)
_SNIPPET = 300
_READ_SIZE = 256 * 1024
# SO_TIMESTAMPNS (== SCM_TIMESTAMPNS): generic Linux value; Python does not export it
_SO_TIMESTAMPNS = 35
_TIMESPEC = struct.Struct("@qq")
_ANC_SIZE = socket.CMSG_SPACE(_TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0
# one read buffer per process (reads are handled one at a time and copied out at once);
# a fresh 256 KiB bytes per recvmsg would cost an mmap/munmap pair per read
_READ_BUF = bytearray(_READ_SIZE)
_READ_VIEW = memoryview(_READ_BUF)
_READ_VIEWS = [_READ_VIEW]


def _chunk_size(line: bytes) -> int:
    try:
        return int(line, 16)
    except ValueError:  # chunk extensions: `size;name=value`
        return int(line.split(b";", 1)[0], 16)


class TransportError(Exception):
    """A failed request, already categorised."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _Conn(asyncio.Protocol):
    """One keep-alive connection; carries one response at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.state: StreamState | None = None
        self.fut: asyncio.Future[None] | None = None
        self.mode = _HEAD
        self.buf = b""
        self.need = 0  # payload bytes left in the current HTTP chunk (or body)
        self.skip = 0  # CRLF bytes left after a chunk's payload
        self.status = 0
        self.keep_alive = True
        self.got_bytes = False
        self.snippet = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        fut = self.fut
        if fut is None or fut.done():
            return
        if self.mode == _UNTIL_CLOSE and exc is None:
            fut.set_result(None)
        else:
            fut.set_exception(ConnectionResetError("connection closed by the server"))

    def begin(self, request: bytes, state: StreamState) -> asyncio.Future[None]:
        assert self.transport is not None
        self.state = state
        self.mode, self.buf, self.need, self.skip = _HEAD, b"", 0, 0
        self.status, self.got_bytes, self.snippet = 0, False, b""
        self.fut = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self.fut

    def data_received(self, data: bytes) -> None:
        self.feed(data, time.monotonic())

    def feed(self, data: bytes, t: float) -> None:
        """One read of response bytes, completed at monotonic time t."""
        self.got_bytes = True
        if self.mode == _CHUNKED and not (self.buf or self.need or self.skip):
            data = self._whole_events(data, t)
            if not data:
                return
        try:
            if self.mode == _HEAD:
                data = self._head(data)
                if not data:
                    return
            if self.mode == _CHUNKED:
                self._chunked(data, t)
            elif self.mode == _LENGTH:
                self._body(data[: self.need], t)
                self.need -= len(data)
                if self.need <= 0:
                    self._complete()
            elif self.mode == _UNTIL_CLOSE:
                self._body(data, t)
            elif self.mode == _TRAILER:
                self._trailer(data)
        except (StreamProtocolError, ValueError) as exc:
            self._fail(exc)

    def _whole_events(self, data: bytes, t: float) -> bytes:
        """The common reads: whole HTTP chunks, each holding one `data:` event.

        Hands each event straight to the parser; returns what it did not take
        (from the first chunk framed any other way) for the general path.
        """
        state = self.state
        if state is None or self.status != 200 or not state.between_events:
            return data
        on_data, pos, size = state.on_data, 0, len(data)
        try:
            while pos < size:
                nl = data.find(b"\r\n", pos, pos + 10)
                if nl < 0:
                    break
                end = nl + 2 + int(data[pos:nl], 16)
                if end == nl + 2:  # `0` CRLF: the terminal chunk
                    if data.startswith(b"\r\n", end):
                        self._complete()
                        return b""
                    break
                if not (
                    data.startswith(b"\n\n\r\n", end - 2)
                    and data.startswith(b"data: ", nl + 2)
                    and data.find(b"\n", nl + 8, end - 2) < 0
                ):
                    break
                on_data(data[nl + 8 : end - 2], t)
                pos = end + 2
        except ValueError:  # a chunk size with extensions: the general path copes
            pass
        except StreamProtocolError as exc:
            self._fail(exc)
            return b""
        return data[pos:] if pos else data

    def _fail(self, exc: Exception) -> None:
        self.keep_alive = False
        if self.fut is not None and not self.fut.done():
            self.fut.set_exception(exc)

    def _head(self, data: bytes) -> bytes:
        buf = self.buf + data
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            self.buf = buf
            return b""
        lines = buf[:end].split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
            raise ValueError("not an HTTP response")
        self.status = int(parts[1])
        length: int | None = None
        chunked = False
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                self.keep_alive = b"close" not in value.lower()
        if parts[0] == b"HTTP/1.0":
            self.keep_alive = False
        self.buf = b""
        if chunked:
            self.mode = _CHUNKED
        elif length is not None:
            self.mode, self.need = _LENGTH, length
            if length == 0:
                self._complete()
        else:
            self.mode, self.keep_alive = _UNTIL_CLOSE, False
        return buf[end + 4 :]

    def _body(self, payload: bytes, t: float) -> None:
        if not payload:
            return
        if self.status == 200 and self.state is not None:
            self.state.feed(payload, t)
        elif len(self.snippet) < _SNIPPET:
            self.snippet += payload[: _SNIPPET - len(self.snippet)]

    def _chunked(self, data: bytes, t: float) -> None:
        """De-chunk whole reads at C speed when every chunk is framed plainly."""
        if self.need or self.skip or self.status != 200:
            self._chunked_slow(data, t)
            return
        buf = self.buf + data if self.buf else data
        parts = buf.split(b"\r\n")
        # parts: size, payload, size, payload, ..., tail (an unfinished chunk, or b"")
        if len(parts) % 2 == 0:
            tail = parts[-2] + b"\r\n" + parts[-1]
            del parts[-2:]
        else:
            tail = parts.pop()
        sizes, payloads = parts[0::2], parts[1::2]
        try:
            framed = list(map(int, sizes, repeat(16))) == list(map(len, payloads))
        except ValueError:  # chunk extensions
            framed = False
        if not framed:  # a payload holding CRLF, extensions, trailers: byte by byte
            self.buf = b""
            self._chunked_slow(buf, t)
            return
        last = payloads.index(b"") if b"" in payloads else -1
        if last >= 0:  # `0` CRLF CRLF: the terminal chunk without trailers
            self._body(b"".join(payloads[:last]), t)
            self.buf = b""
            self._complete()
            return
        self._body(b"".join(payloads), t)
        self.buf = b""
        if tail:
            self._chunked_slow(tail, t)

    def _chunked_slow(self, data: bytes, t: float) -> None:
        """De-chunk byte by byte; an HTTP chunk holding one `data:` event skips the buffer."""
        buf = self.buf + data if self.buf else data
        self.buf = b""
        pos, end = 0, len(buf)
        out: list[bytes] = []  # bytes for the general SSE parser, in order
        need, skip = self.need, self.skip
        state = self.state if self.status == 200 else None
        while pos < end:
            if need:  # the rest of a chunk split across reads
                stop = pos + need
                if stop > end:
                    out.append(buf[pos:])
                    need -= end - pos
                    pos = end
                    break
                out.append(buf[pos:stop])
                pos, need, skip = stop, 0, 2
            if skip:
                taken = min(skip, end - pos)
                pos += taken
                skip -= taken
                if skip:
                    break
            nl = buf.find(b"\r\n", pos)
            if nl < 0:
                self.buf = buf[pos:]
                break
            size = _chunk_size(buf[pos:nl])
            start = nl + 2
            if size == 0:
                self.need, self.skip, self.mode = 0, 0, _TRAILER
                self._flush(out, t)
                self._trailer(buf[start:])
                return
            stop = start + size
            if (
                stop <= end
                and state is not None
                and buf[stop - 2 : stop] == b"\n\n"
                and buf[start : start + 6] == b"data: "
                and buf.find(b"\n", start, stop - 2) < 0
            ):
                if out:
                    self._flush(out, t)
                    out = []
                if state.between_events:
                    state.on_data(buf[start + 6 : stop - 2], t)
                else:
                    state.feed(buf[start:stop], t)
                pos, skip = stop, 2
            else:
                pos, need = start, size
        self.need, self.skip = need, skip
        self._flush(out, t)

    def _flush(self, out: list[bytes], t: float) -> None:
        if out:
            self._body(out[0] if len(out) == 1 else b"".join(out), t)

    def _trailer(self, data: bytes) -> None:
        buf = self.buf + data
        if buf.startswith(b"\r\n") or b"\r\n\r\n" in buf:
            self.buf = b""
            self._complete()
        else:
            self.buf = buf

    def _complete(self) -> None:
        self.mode = _HEAD
        if self.fut is not None and not self.fut.done():
            self.fut.set_result(None)


def _realtime_offset() -> float:
    """CLOCK_REALTIME - CLOCK_MONOTONIC, read back to back (kernel stamps are realtime)."""
    best = (1.0, 0.0)
    for _ in range(3):  # the narrowest bracket wins
        a = time.monotonic()
        r = time.time()
        b = time.monotonic()
        best = min(best, (b - a, r - (a + b) / 2))
    return best[1]


class _StampedSocket:
    """The transport side of one plain TCP connection read with kernel receive stamps.

    Implements the part of `asyncio.Transport` that `_Conn` uses (write, close,
    abort) on a non-blocking socket watched with `add_reader`.
    """

    __slots__ = ("closed", "conn", "fd", "feed", "loop", "offset", "pending", "recv", "sock")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, sock: socket.socket, conn: _Conn, offset: float
    ) -> None:
        self.loop = loop
        self.sock = sock
        self.fd = sock.fileno()
        self.conn = conn
        self.feed = conn.feed
        self.recv = sock.recvmsg_into
        self.offset = offset
        self.pending = b""  # bytes a full send buffer did not take yet
        self.closed = False
        conn.connection_made(self)  # type: ignore[arg-type]
        loop.add_reader(self.fd, self._readable)

    def _readable(self) -> None:
        """One read per wake-up (the loop calls again while bytes remain)."""
        try:
            size, anc, _, _ = self.recv(_READ_VIEWS, _ANC_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lost(exc)
            return
        if not size:
            self._lost(None)
            return
        if anc:  # the only control message asked for: SCM_TIMESTAMPNS
            sec, nsec = _TIMESPEC.unpack_from(anc[0][2])
            self.feed(_READ_VIEW[:size].tobytes(), sec - self.offset + nsec * 1e-9)
        else:
            self.feed(_READ_VIEW[:size].tobytes(), time.monotonic())

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        if self.pending:
            self.pending += data
            return
        try:
            sent = self.sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as exc:
            self._lost(exc)
            return
        if sent < len(data):
            self.pending = data[sent:]
            self.loop.add_writer(self.fd, self._writable)

    def _writable(self) -> None:
        try:
            sent = self.sock.send(self.pending)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lost(exc)
            return
        self.pending = self.pending[sent:]
        if not self.pending:
            self.loop.remove_writer(self.fd)

    def _lost(self, exc: Exception | None) -> None:
        if self._shut():
            self.conn.connection_lost(exc)

    def _shut(self) -> bool:
        if self.closed:
            return False
        self.closed = True
        self.loop.remove_reader(self.fd)
        if self.pending:
            self.loop.remove_writer(self.fd)
        self.sock.close()
        return True

    def close(self) -> None:
        self._lost(None)

    def abort(self) -> None:
        self._lost(None)


def _kernel_stamps_supported() -> bool:
    return sys.platform == "linux" and _ANC_SIZE > 0


class FastTransport:
    """Keep-alive connections to one origin; one connection per request in flight."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        connect_timeout_s: float,
        kernel_stamps: bool = True,
    ) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.tls = parts.scheme == "https"
        self.port = parts.port or (443 if self.tls else 80)
        self.connect_timeout_s = connect_timeout_s
        host_header = parts.netloc.rsplit("@", 1)[-1]
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"POST {target} HTTP/1.1", f"Host: {host_header}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        self._prefix = ("\r\n".join(lines) + "\r\n").encode("latin-1")
        self.redact = Redactor.for_headers(headers)  # for whatever the server echoes
        self._idle: list[_Conn] = []
        self._all: set[_Conn] = set()
        self._ssl = ssl.create_default_context() if self.tls else None
        self.kernel_stamps = kernel_stamps and not self.tls and _kernel_stamps_supported()
        self._offset = _realtime_offset()
        self._addresses: list[Any] | None = None

    async def _connect(self) -> _Conn:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                if self.kernel_stamps:
                    conn = await self._connect_stamped(loop)
                else:
                    _, conn = await loop.create_connection(
                        _Conn, self.host, self.port, ssl=self._ssl
                    )
        except TimeoutError:
            raise TransportError(FailureKind.CONNECT, "connect timed out") from None
        except ssl.SSLError as exc:
            raise TransportError(FailureKind.CONNECT, f"TLS: {exc.reason or exc}") from None
        except OSError as exc:  # refused, unreachable, DNS (gaierror)
            raise TransportError(
                FailureKind.CONNECT, f"{type(exc).__name__}: {exc}"[:200]
            ) from None
        self._all.add(conn)
        return conn

    async def _connect_stamped(self, loop: asyncio.AbstractEventLoop) -> _Conn:
        """A raw socket with SO_TIMESTAMPNS; each resolved address is tried in turn."""
        if self._addresses is None:  # resolved once per worker (a thread-pool call each time
            # would queue a thousand connects behind each other at the start)
            self._addresses = await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        infos = self._addresses
        error: OSError = OSError(f"no address for {self.host}")
        for family, kind, proto, _, address in infos:
            sock = socket.socket(family, kind, proto)
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
                await loop.sock_connect(sock, address)
            except OSError as exc:
                sock.close()
                error = exc
                continue
            except BaseException:
                sock.close()
                raise
            conn = _Conn()
            _StampedSocket(loop, sock, conn, self._offset)
            return conn
        raise error

    async def stream(
        self,
        body: bytes,
        request_id: str,
        state: StreamState,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> tuple[int, str]:
        """Send one request, feed its stream into `state`; (status, error-body snippet)."""
        extra = b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in headers)
        request = self._prefix + b"X-Request-Id: %s\r\n%sContent-Length: %d\r\n\r\n%s" % (
            request_id.encode(),
            extra,
            len(body),
            body,
        )
        for attempt in (0, 1):
            reused = bool(self._idle)
            conn = self._idle.pop() if reused else await self._connect()
            if conn.transport is None:
                self._all.discard(conn)
                continue
            try:
                await conn.begin(request, state)
            except ConnectionResetError as exc:
                if reused and not conn.got_bytes and attempt == 0:
                    continue  # a keep-alive connection the server had closed: retry once fresh
                kind = FailureKind.STREAM_ERROR if conn.got_bytes else FailureKind.CONNECT
                raise TransportError(kind, str(exc)) from None
            except ValueError as exc:
                raise TransportError(
                    FailureKind.STREAM_ERROR, f"bad HTTP response: {exc}"
                ) from None
            finally:
                self._settle(conn)
            return conn.status, conn.snippet.decode("utf-8", "replace").strip()
        raise TransportError(FailureKind.CONNECT, "connection closed before the response")

    def _settle(self, conn: _Conn) -> None:
        """Back to the pool if the response ended cleanly, else closed."""
        done = conn.fut is not None and conn.fut.done() and not conn.fut.cancelled()
        clean = done and conn.fut is not None and conn.fut.exception() is None
        conn.fut, conn.state = None, None
        if clean and conn.keep_alive and conn.transport is not None:
            self._idle.append(conn)
            return
        if conn.transport is not None:
            conn.transport.abort()
        self._all.discard(conn)

    async def close(self) -> None:
        for conn in list(self._all):
            if conn.transport is not None:
                conn.transport.close()
        self._all.clear()
        self._idle.clear()


class AiohttpTransport:
    """The same contract on aiohttp: one pooled connector sized to the concurrency."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        connect_timeout_s: float,
        concurrency: int,
        read_bufsize: int,
    ) -> None:
        self.url = url
        self.redact = Redactor.for_headers(headers)  # for whatever the server echoes
        connector = aiohttp.TCPConnector(limit=max(1, concurrency), limit_per_host=0)
        self.session = aiohttp.ClientSession(
            connector=connector,
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout_s),
            read_bufsize=read_bufsize,
            auto_decompress=False,
        )

    async def stream(
        self,
        body: bytes,
        request_id: str,
        state: StreamState,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> tuple[int, str]:
        got_response = False
        try:
            async with self.session.post(
                self.url, data=body, headers={"X-Request-Id": request_id, **dict(headers)}
            ) as resp:
                got_response = True
                if resp.status != 200:
                    snippet = await resp.content.read(_SNIPPET)
                    return resp.status, snippet.decode("utf-8", "replace").strip()
                content = resp.content
                while True:
                    block = await content.readany()
                    if not block:
                        return 200, ""
                    state.feed(block, time.monotonic())
        except aiohttp.ClientConnectorError as exc:  # refused, DNS, TLS
            raise TransportError(
                FailureKind.CONNECT, f"{type(exc).__name__}: {exc}"[:200]
            ) from None
        except (aiohttp.ClientError, OSError) as exc:
            kind = FailureKind.STREAM_ERROR if got_response else FailureKind.CONNECT
            raise TransportError(kind, f"{type(exc).__name__}: {exc}"[:200]) from None

    async def close(self) -> None:
        await self.session.close()
