"""The one writer of every file inferbench writes, the outputs a user names included.

What a path is decides how it is written, and nothing is ever renamed over a non-regular file:

- a regular file or a missing path: atomically, through a temporary file in the same folder
  and a rename, so a reader sees the old file or the new one, never half of one;
- a symlink: followed; the file it points at is replaced (atomically) and the link stays;
- a FIFO, a character device (`/dev/null`), `-`, `/dev/stdout` and any other path under
  /dev or /proc (a shell's `>(jq .)` is a /dev/fd/N pipe): opened and written to;
- a directory, a block device, a socket or an empty name: refused (InputError) untouched.

Files get the mode an ordinary `open()` would give them under the user's umask (0644 under
the usual 022), not the 0600 of the temporary file they are written through, so a team can
read each other's run directories when their umask says so.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from inferbench.core.errors import InputError, Location
from inferbench.core.printable import printable

# Names that mean this process's own standard streams: written through sys.stdout/stderr so
# what was printed before stays in order (and a test's capture sees it).
_STDOUT = frozenset({"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})
_STDERR = frozenset({"/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"})
# Paths that name devices and open descriptors: a file there is reached, never replaced.
_SPECIAL_ROOTS = ("/dev/", "/proc/")


class TargetKind(enum.Enum):
    FILE = "file"  # a regular file (or none yet): temporary file + rename
    STREAM = "stream"  # a FIFO, a device, an open descriptor: opened and written
    STDOUT = "stdout"
    STDERR = "stderr"


@dataclass(frozen=True)
class OutputTarget:
    """Where bytes for a path go: `path` is the file to replace (links followed) for FILE,
    the path to open for STREAM, and what the user gave for the standard streams."""

    path: Path
    kind: TargetKind
    append: bool = False  # a regular file reached through /dev/fd or /proc: add, not replace

    @property
    def is_stream(self) -> bool:
        return self.kind is not TargetKind.FILE


def describe_file_type(mode: int) -> str:
    """`a directory`, `a FIFO`, ...: what a non-regular file is, for messages."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return name
    return "not a regular file"


class WriteFailed(InputError):
    """The OS refused a write (disk full, read-only, `ulimit -f`, ...): `errno` says which."""

    def __init__(self, error: InputError, errno_: int | None) -> None:
        super().__init__(error.message, location=error.location, hint=error.hint)
        self.errno = errno_


def _refuse(path: str, option: str | None, why: str, hint: str) -> InputError:
    if option:  # the option first: that is what the user types again
        return InputError(f"{option} {path or repr(path)}: {why}", hint=hint)
    return InputError(why, location=Location(file=Path(path)), hint=hint)


def _is_special(text: str) -> bool:
    return os.path.abspath(text).startswith(_SPECIAL_ROOTS)


def output_target(path: Path | str, option: str | None = None) -> OutputTarget:
    """How `path` is written, or an InputError (naming `option` when given) saying why not.

    Looks only (stat); opens nothing, so a FIFO without a reader does not block here.
    """
    text = os.fspath(path)
    if text == "":
        raise _refuse(text, option, "an empty name is no file", "name a file, or - for stdout")
    if text in _STDOUT:
        return OutputTarget(Path(text), TargetKind.STDOUT)
    if text in _STDERR:
        return OutputTarget(Path(text), TargetKind.STDERR)
    if printable(text) != text:  # a line break, ESC or bidi override in a file's name
        raise _refuse(
            printable(text),
            option,
            "holds a control, zero-width or bidi character",
            "name the file with printable characters",
        )
    special = _is_special(text)
    try:
        st = os.stat(text)  # follows symlinks: a link is judged by what it points at
    except FileNotFoundError:
        if special:
            raise _refuse(
                text, option, "no such device", "inferbench creates no files under /dev or /proc"
            ) from None
        # a missing file, or a symlink to one: the file is created where the link points
        return OutputTarget(Path(os.path.realpath(text)), TargetKind.FILE)
    except OSError as exc:
        raise _refuse(text, option, f"cannot use it: {exc.strerror}", _HINTS[exc.errno]) from None
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise _refuse(
            text, option, "is a directory", f"name a file inside it, e.g. {Path(text) / 'out'}"
        )
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return OutputTarget(Path(text), TargetKind.STREAM)
    if stat.S_ISREG(mode):
        if special:  # /dev/fd/N of a shell redirection: the shell holds the file open
            return OutputTarget(Path(text), TargetKind.STREAM, append=True)
        return OutputTarget(Path(os.path.realpath(text)), TargetKind.FILE)
    raise _refuse(
        text,
        option,
        f"is {describe_file_type(mode)}; inferbench writes only files, FIFOs and character devices",
        "name a regular file",
    )


def check_output_file(path: Path | str, option: str | None = None) -> OutputTarget:
    """`output_target` of a file the user named. A folder of its path that does not exist
    is made when the file is written, and said so now (on stderr), never made without a
    word: a typo in it would otherwise scatter outputs in new folders unnoticed."""
    target = output_target(path, option)
    folder = Path(os.fspath(path)).parent
    if target.kind is TargetKind.FILE and not os.path.lexists(folder):
        named = f"{option} {printable(os.fspath(path))}" if option else printable(os.fspath(path))
        sys.stderr.write(f"note: {named}: folder {printable(str(folder))} does not exist;"
                         " it is made when the file is written\n")  # fmt: skip
    return target


def check_output_folder(path: Path | str, option: str | None = None) -> Path:
    """`path` as a folder to write files into: missing (made later) or a directory (a symlink
    to one is followed); anything else is an InputError naming `option`."""
    text = os.fspath(path)
    if text == "":
        raise _refuse(text, option, "an empty name is no folder", "name a folder, e.g. out")
    try:
        st = os.stat(text)
    except FileNotFoundError:
        return Path(text)
    except OSError as exc:
        raise _refuse(text, option, f"cannot use it: {exc.strerror}", _HINTS[exc.errno]) from None
    if not stat.S_ISDIR(st.st_mode):
        kind = "a file" if stat.S_ISREG(st.st_mode) else describe_file_type(st.st_mode)
        raise _refuse(text, option, f"is {kind}, not a folder", "name a new or existing folder")
    return Path(text)


class _Hints(dict[int | None, str]):
    def __missing__(self, key: int | None) -> str:
        return "check the path and its permissions"


_HINTS = _Hints(
    {
        errno.ENOSPC: "free some space on that disk, or write elsewhere",
        errno.EDQUOT: "free some space (quota), or write elsewhere",
        errno.EROFS: "the file system is read-only: write elsewhere",
        errno.EACCES: "check the permissions, or write elsewhere",
        errno.EPERM: "check the permissions, or write elsewhere",
        errno.EFBIG: "the file is over the size limit (ulimit -f): raise it or write elsewhere",
        errno.EPIPE: "the reader of the pipe went away before everything was written",
        errno.ENOTDIR: "a folder on the path is a file: fix the path",
        errno.ELOOP: "the symlinks loop: fix the link",
        errno.ENAMETOOLONG: "use a shorter name",
        errno.ENXIO: "nothing is reading that FIFO or device",
    }
)


def write_output(path: Path | str, data: bytes, option: str | None = None) -> Path:
    """Write `data` to `path` as the module docstring says; returns the path written.

    An OS error (disk full, read-only, no permission, a closed pipe) is an InputError naming
    the file (and `option`) and what to do, never a traceback.
    """
    return write_output_chunks(path, (data,), option)


def write_output_chunks(
    path: Path | str, chunks: Iterable[bytes], option: str | None = None
) -> Path:
    """`write_output` of the concatenated `chunks`, written as they come (a large export
    never sits whole in memory); a regular file is still replaced atomically, at the end,
    and an error while the chunks are made leaves it as it was."""
    target = output_target(path, option)
    try:
        if target.kind is TargetKind.FILE:
            _replace_atomically(target.path, chunks)
        elif target.kind is TargetKind.STREAM:
            _stream(target, chunks)
        else:
            stream = sys.stdout if target.kind is TargetKind.STDOUT else sys.stderr
            for data in chunks:
                _std_stream(stream, data)
    except OSError as exc:
        shown = os.fspath(path)
        why = f"cannot write it: {exc.strerror or exc}"
        raise WriteFailed(_refuse(shown, option, why, _HINTS[exc.errno]), exc.errno) from None
    return target.path


def _replace_atomically(path: Path, chunks: Iterable[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as handle:
            for data in chunks:
                handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # What is there now may have changed since output_target looked: rename over a
        # regular file or nothing, never over a FIFO or device created meanwhile.
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISREG(os.lstat(path).st_mode):
                raise OSError(errno.EEXIST, f"{path} is no longer a regular file")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _stream(target: OutputTarget, chunks: Iterable[bytes]) -> None:
    flags = os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC | (os.O_APPEND if target.append else 0)
    fd = os.open(target.path, flags)  # never O_CREAT/O_TRUNC: it exists and is not ours
    try:
        for data in chunks:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _std_stream(stream: object, data: bytes) -> None:
    flush = getattr(stream, "flush", None)
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        if callable(flush):
            flush()  # what was printed as text first stays first
        buffer.write(data)
        buffer.flush()
    else:  # a text-only stream (a test's capture): binary data goes through as UTF-8 text
        write = getattr(stream, "write")  # noqa: B009 - any object with write()
        write(data.decode("utf-8", errors="replace"))
        if callable(flush):
            flush()


def is_stream(path: Path | str) -> bool:
    """Whether `path` is written as a stream (one write; no per-point file names from it)."""
    try:
        return output_target(path).is_stream
    except InputError:
        return False


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` (see `write_output`: atomic for a regular file)."""
    write_output(path, data)


def atomic_write_text(path: Path, text: str) -> None:
    write_output(path, text.encode("utf-8"))


def current_umask() -> int:
    """The process's umask, read without changing it (Linux: /proc), else set-and-restore."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def make_executable(path: Path) -> None:
    """chmod +x as far as the umask allows (0755 under 022)."""
    path.chmod(0o777 & ~current_umask())
