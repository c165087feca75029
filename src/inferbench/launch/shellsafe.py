"""Catalog values that reach a shell: quoted where they are words, refused where a line break
would end the line they sit on.

Engine command lines are argv lists (no shell), and printed or scripted with `shlex`. What
quoting cannot make safe is a line break in a line that is a comment to bash: an `#SBATCH`
directive ends at the newline and the rest becomes a top-level command of the script. srtctl
writes the same catalog values (account, partition, time limit, directives, mounts) into its
own sbatch script. So a cluster catalog value with a control character is an input error
naming the file, line and key, before anything is rendered.
"""

from __future__ import annotations

from inferbench.config.cluster import CONTROL as _CONTROL
from inferbench.config.cluster import ONE_LINE_HINT, ClusterFile, refuse_control
from inferbench.core.errors import InputError, Location

_HINT = ONE_LINE_HINT


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def single_line(value: str, what: str, location: Location | None = None) -> str:
    """`value` if it has no line break or other control character, else InputError."""
    if has_control(value):
        raise InputError(
            f"{what} {value!r} contains a line break or control character (it would reach a "
            "shell script as a line of its own)",
            location=location,
            hint=_HINT,
        )
    return value


def check_cluster(entry: ClusterFile) -> None:
    """Refuse a cluster whose rendered values carry a control character (see
    `inferbench.config.cluster.refuse_control`; `load_cluster` already does)."""
    refuse_control(entry)
