"""Did-you-mean suggestions: the known names most like a mistyped one, best first."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, known: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to `n` of `known` ranked by similarity to `word` (difflib's ratio, at least
    `cutoff`); ties keep `known`'s order."""
    return difflib.get_close_matches(word, list(dict.fromkeys(known)), n=n, cutoff=cutoff)


def did_you_mean(word: str, known: Iterable[str], n: int = 3) -> str | None:
    """`did you mean 'a', 'b' or 'c'?` with the closest of `known`, or None."""
    close = [repr(k) for k in closest(word, known, n)]
    if not close:
        return None
    names = close[0] if len(close) == 1 else ", ".join(close[:-1]) + " or " + close[-1]
    return f"did you mean {names}?"
