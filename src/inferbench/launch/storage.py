"""A run directory that cannot be written (read-only, disk full, `ulimit -f`): a clear error
that says what happened and how to go on, never an internal error. Every point finished
before it is kept (results and state.json are written atomically), so a resume recovers."""

from __future__ import annotations

import errno
import shlex
from pathlib import Path

from inferbench.core.errors import InputError, Location
from inferbench.core.fsio import WriteFailed

# errors of the storage, not of inferbench: the user frees space or fixes the mount, then resumes
STORAGE_ERRNOS = frozenset(
    {errno.EROFS, errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EACCES, errno.EPERM}
)


def is_storage_error(exc: Exception) -> bool:
    return isinstance(exc, OSError | WriteFailed) and exc.errno in STORAGE_ERRNOS


def storage_error(exc: OSError | WriteFailed, runs_dir: Path, run_id: str | None) -> InputError:
    """The InputError for `exc`, with the command that resumes `run_id` (None: no run yet)."""
    if isinstance(exc, WriteFailed):
        where = exc.location.file or runs_dir
        why = exc.message.removeprefix("cannot write it: ")
    else:
        where = Path(exc.filename) if isinstance(exc.filename, str) else runs_dir
        why = exc.strerror or str(exc)
    if run_id is None:
        return InputError(
            f"cannot write the run directory: {why}",
            location=Location(file=where),
            hint=f"make {runs_dir} writable (or free space) and run again, or pass another "
            "--runs-dir",
        )
    command = f"inferbench run --resume {run_id}"
    if runs_dir != Path("runs"):
        command += f" --runs-dir {shlex.quote(str(runs_dir))}"
    return InputError(
        f"run {run_id} stopped: cannot write its directory: {why}",
        location=Location(file=where),
        hint=f"free space or make it writable, then resume it with: {command} "
        "(finished points are kept)",
    )
