"""Text from files and stores, made safe to print on one line.

A result file or a store can carry any text (an engine's error, a label); printed raw, an
ESC sequence retitles or clears the terminal and a bidi override reorders what a reader
sees. Control, zero-width and bidi characters are shown as escapes instead.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def printable(text: str) -> str:
    """`text` with every control, zero-width and bidi character written as its escape."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
