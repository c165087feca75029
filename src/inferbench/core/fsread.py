"""Reading an input file: a regular file only, and never more than a cap.

A size cap that looks at `st_size` lets `/dev/zero` through (its size is 0) and a FIFO
blocks whoever opens it, so every file a command reads comes through `read_file`: it refuses
a FIFO, a device or a directory by name without reading it (the open is non-blocking, and
what was opened is checked again, so a file swapped in between is caught too), then reads
at most `limit` bytes and refuses a file that has more.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from inferbench.core.errors import InputError, Location
from inferbench.core.fsio import describe_file_type

MiB = 2**20
# Caps by kind of file: far above any real one, far below what would exhaust memory.
MAX_CONFIG_BYTES = 16 * MiB  # YAML/TOML/JSON settings: a master config is ~1 MiB
MAX_RESULT_BYTES = 256 * MiB  # one result file (with --detail: every request's ttft/itls)
MAX_RUN_FILE_BYTES = 64 * MiB  # run.json, state.json, jobs.json of a run directory
MAX_DATA_BYTES = 1024 * MiB  # datasets and traces (ShareGPT's JSON is ~650 MiB)


def _size(limit: int) -> str:
    return f"{limit // MiB} MiB" if limit >= MiB else f"{limit:,} bytes"


def not_regular(
    path: Path, mode: int, error: type[InputError] = InputError, option: str | None = None
) -> InputError:
    """The refusal of a path that is not a regular file (a FIFO, a device, a directory)."""
    kind = describe_file_type(mode)
    hint = "give a file inside it" if stat.S_ISDIR(mode) else "use a regular file in its place"
    return error(f"is {kind}, not a regular file", location=Location(path, key=option), hint=hint)


def check_regular(
    path: Path | str, error: type[InputError] = InputError, option: str | None = None
) -> os.stat_result:
    """`stat` of `path` when it is a regular file (a symlink to one included), else `error`
    (located at `option` when the file came from one)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        where = Location(Path(path), key=option)
        raise error("file not found", location=where, hint="check the path") from None
    except OSError as exc:
        raise _unreadable(path, exc, error, option) from None
    if not stat.S_ISREG(st.st_mode):
        raise not_regular(Path(path), st.st_mode, error, option)
    return st


def present(path: Path | str, error: type[InputError] = InputError) -> bool:
    """Whether an optional input exists (it is read then, and refused there if it is no
    regular file). `Path.is_file` answers False for a file it may not stat (permissions, a
    link loop): an optional file, such as runners.yaml or the changelog, would then be
    ignored without a word. Only a name that is not there at all is absent."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        if os.path.islink(path):  # a link to nothing: the file was meant to be there
            raise error(
                f"is a link to {os.readlink(path)}, which does not exist",
                location=Location(Path(path)),
                hint="point the link at the file, or remove it",
            ) from None
        return False
    except OSError as exc:
        raise error(
            f"cannot read file: {exc.strerror}",
            location=Location(Path(path)),
            hint="check the path and its permissions (a link loop, a folder it may not enter)",
        ) from None
    return True


def read_file(
    path: Path | str,
    limit: int,
    *,
    error: type[InputError] = InputError,
    what: str = "file",
    option: str | None = None,
) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them, else `error` saying why
    (located at `option` when the file came from one)."""
    # An ingest reads every result file through here: no Path or Location is built unless
    # something is wrong, and a regular file is read in one call (its size is known).
    check_regular(path, error, option)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise _unreadable(path, exc, error, option) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped for a FIFO or device since the stat above
            raise not_regular(Path(path), st.st_mode, error, option)
        if st.st_size > limit:  # refused unread (a 1 GB dataset was read whole before)
            raise _too_large(path, limit, error, what, option)
        chunks: list[bytes] = []
        total = 0
        # one byte more than the size: a file that has not grown is read in one call
        ask = min(limit + 1, st.st_size + 1, 8 * MiB)
        while total <= limit:
            chunk = os.read(fd, ask)
            chunks.append(chunk)
            total += len(chunk)
            if len(chunk) < ask:  # a short read of a regular file: its end
                break
            ask = min(limit + 1 - total, 8 * MiB)
    except OSError as exc:
        raise _unreadable(path, exc, error, option) from None
    finally:
        os.close(fd)
    if total > limit:  # it grew while read, or its size said less (a /proc file)
        raise _too_large(path, limit, error, what, option)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _too_large(
    path: Path | str, limit: int, error: type[InputError], what: str, option: str | None
) -> InputError:
    return error(
        f"{what} is larger than the {_size(limit)} inferbench reads",
        location=Location(Path(path), key=option),
        hint="check that this is the file you meant",
    )


def iter_lines(
    path: Path | str,
    limit: int,
    *,
    error: type[InputError] = InputError,
    what: str = "file",
    option: str | None = None,
) -> Iterator[tuple[int, bytes]]:
    """The lines of the regular file `path` (numbered from 1, line ends kept), read a buffer
    at a time: a reader that refuses line 1 has read little more than line 1. Refused as
    `read_file` refuses (not a regular file, more than `limit` bytes)."""
    check_regular(path, error, option)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise _unreadable(path, exc, error, option) from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(Path(path), st.st_mode, error, option)
        if st.st_size > limit:
            raise _too_large(path, limit, error, what, option)
        total = 0
        try:
            for number, line in enumerate(handle, start=1):
                total += len(line)
                if total > limit:  # it grew while read
                    raise _too_large(path, limit, error, what, option)
                yield number, line
        except OSError as exc:
            raise _unreadable(path, exc, error, option) from None


def _unreadable(
    path: Path | str, exc: OSError, error: type[InputError], option: str | None
) -> InputError:
    return error(
        f"cannot read file: {exc.strerror}",
        location=Location(Path(path), key=option),
        hint="check the path and its permissions",
    )


def read_text_file(
    path: Path | str,
    limit: int,
    *,
    error: type[InputError] = InputError,
    what: str = "file",
    option: str | None = None,
    errors: str = "strict",
) -> str:
    """`read_file` decoded as UTF-8; text that is not UTF-8 is `error` with a fix."""
    raw = read_file(path, limit, error=error, what=what, option=option)
    try:
        return raw.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise error(
            f"cannot read file: not UTF-8 text ({exc.reason} at byte {exc.start})",
            location=Location(Path(path), key=option),
            hint="save the file as UTF-8 text",
        ) from None
