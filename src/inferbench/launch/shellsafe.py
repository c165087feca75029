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

import re
from collections.abc import Iterator
from typing import Any

from inferbench.config.cluster import ClusterFile
from inferbench.errors import ConfigError, InputError, Location

# C0 and C1 controls and the Unicode line/paragraph separators: YAML reads NEL (U+0085),
# U+2028 and U+2029 as line breaks too, so srtctl would get another value than written.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_HINT = "write the value on one line, without control characters"
# The parts of a cluster file that reach sbatch scripts (ours and srtctl's) and srtslurm.yaml.
_RENDERED = ("scheduler", "models", "containers")


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


def _strings(
    data: Any, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield (*path, key), str(key)
            yield from _strings(value, (*path, key))
    elif isinstance(data, list | tuple):
        for i, value in enumerate(data):
            yield from _strings(value, (*path, i))
    elif isinstance(data, str):
        yield path, data


def check_cluster(entry: ClusterFile) -> None:
    """Refuse a cluster whose rendered values (scheduler, models, containers) carry a control
    character: ConfigError at the file, line and key."""
    data = entry.cluster.model_dump(mode="json", by_alias=True, include=set(_RENDERED))
    for path, text in _strings(data):
        if has_control(text):
            raise ConfigError(
                f"cluster {entry.cluster.name}: {text!r} contains a line break or control "
                "character (it would reach an sbatch script as a line of its own)",
                location=entry.doc.locate_value(path),
                hint=_HINT,
            )
