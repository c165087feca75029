"""When a written topology token (`DEP8`, `2P1D`, `8k1k`) agrees with a deployment.

The words themselves come from `inferbench.config.topology`. Matching is tolerant where usage
is: `DP8` and `DEP8` are both attention-data-parallel over 8 GPUs, `TP8` is often written for
`TEP8`, and `EP8` names only the expert width.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from inferbench.config.topology import TokenKind, TopologyToken, parse_tokens
from inferbench.engines.layout import WorkerLayout

_FAMILY = {"DEP": "dp", "DP": "dp", "TEP": "tp", "TP": "tp", "EP": "ep"}
_NAME = re.compile(r"[A-Z]+")


def worker_family(token: TopologyToken) -> str:
    match = _NAME.match(token.word)
    return _FAMILY.get(match.group(0) if match else "", "")


def worker_matches(token: TopologyToken, layout: WorkerLayout) -> bool:
    """A WORKER token against an engine layout: same family and width, same PP."""
    family, size, pp = worker_family(token), token.first, token.second or 1
    if pp != layout.pp:
        return False
    if size == 1 and layout.gpus == pp:  # DEP1, TEP1, TP1: one GPU, whatever the family
        return True
    if family == "ep":
        return layout.ep == size
    if family == "dp":
        return layout.dp > 1 and layout.dp * layout.tp == size
    return layout.dp == 1 and layout.tp == size


def same_token(written: TopologyToken, canonical: TopologyToken) -> bool:
    """Two tokens of the same kind that name the same thing (tolerant for workers)."""
    if written.kind is not canonical.kind:
        return False
    if written.kind is not TokenKind.WORKER:
        return (written.first, written.second) == (canonical.first, canonical.second)
    fam_w, fam_c = worker_family(written), worker_family(canonical)
    if (written.first, written.second or 1) != (canonical.first, canonical.second or 1):
        return False
    return fam_w == fam_c or "ep" in (fam_w, fam_c)


def tokens_of(words: Iterable[str]) -> list[TopologyToken]:
    """Canonical words (`2P1D`, `DEP8`, `8k1k`) parsed back into tokens."""
    return parse_tokens(" ".join(words))
