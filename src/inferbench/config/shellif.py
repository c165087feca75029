"""Where a launcher's if/elif/else/fi branches open and close: one reading for both
readers of launcher conditions (`launcher.py`'s model routing, `launcher_srt_ref.py`'s
srt-slurm clones), so both see the same branches around the same lines."""

from __future__ import annotations

import re

_OPEN = re.compile(r"^\s*(if|elif)\s+(.*?)\s*;\s*then\s*(?:#.*)?$")
_OPEN_ALONE = re.compile(r"^\s*(if|elif)\s+(.*?)\s*(?:\s#.*)?$")  # `then` on a later line
ELSE = re.compile(r"^\s*else\b")
FI = re.compile(r"^\s*fi\b")


def code(raw: str) -> str:
    """The line as code: a comment-only line is empty."""
    return raw.split("#", 1)[0] if raw.lstrip().startswith("#") else raw


def opens(line: str) -> tuple[str, str] | None:
    """("if" | "elif", its condition) when `line` opens a branch; None otherwise, and for a
    one-line `if ...; then cmd; fi`, which opens no block. A condition continued on the next
    lines (`if [[ a ]] &&` ... `; then`) is its first line's part."""
    found = _OPEN.match(line)
    if found is not None:
        return found.group(1), found.group(2)
    if re.search(r";\s*then\b", line):
        return None  # `then` followed by commands on the same line
    alone = _OPEN_ALONE.match(line)
    return (alone.group(1), alone.group(2)) if alone is not None else None
