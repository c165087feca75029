"""Topology words (`2P1D`, `DEP8`, `TEP4`, `TP4`, `8k1k`, `c2048`): one definition.

`worker_word` and `deployment_words` produce the canonical words for a
deployment, and `topology_label` the one label every command prints (sweep's table,
`sim estimate`, results, the report): `TP8`, `2xTEP4`, `2P1D DEP2/DEP8`;
`parse_tokens` finds such tokens in free text (changelog prose) or a
file name (`2p1d-dep2-dep8-8k1k.yaml`, `ctx1_gen4_tep8_batch1_mtp3.yaml`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from inferbench.engines.layout import WorkerLayout


class TokenKind(StrEnum):
    PD = "pd"  # prefill/decode worker counts: 2P1D, ctx1_gen4
    WORKER = "worker"  # DEP8, TEP4, TP4, DP8, PP2 (`word` holds the kind)
    SEQ = "seq"  # 8k1k
    CONC = "conc"  # c2048
    BATCH = "batch"  # batch64


@dataclass(frozen=True)
class TopologyToken:
    kind: TokenKind
    text: str  # as written
    start: int  # offset in the parsed text
    word: str = ""  # canonical spelling, upper case for PD/WORKER: "2P1D", "DEP8"
    first: int = 0  # PD: prefill workers; WORKER: size; SEQ: isl k; CONC/BATCH: value
    second: int = 0  # PD: decode workers; SEQ: osl k


@dataclass(frozen=True)
class DeploymentWords:
    """Canonical words for one deployment: `2P1D`, prefill `DEP2`, decode `DEP8`."""

    pd: str | None  # None for aggregated / single-node
    prefill: str | None
    decode: str

    def all(self) -> tuple[str, ...]:
        return tuple(w for w in (self.pd, self.prefill, self.decode) if w)

    def __str__(self) -> str:
        if self.pd and self.prefill:
            return f"{self.pd} {self.prefill}/{self.decode}"
        return self.decode


def worker_word(layout: WorkerLayout) -> str:
    """`DEP8` (DP attention + EP), `TEP4` (TP + EP), `DP8` (DP attention, no EP), `TP4`."""
    if layout.dp > 1:
        word = f"{'DEP' if layout.ep > 1 else 'DP'}{layout.dp * layout.tp}"
    elif layout.ep > 1:
        word = f"TEP{layout.tp}"
    else:
        word = f"TP{layout.tp}"
    return word + (f"PP{layout.pp}" if layout.pp > 1 else "")


def topology_label(
    decode: WorkerLayout,
    *,
    prefill: WorkerLayout | None = None,
    prefill_workers: int = 0,
    decode_workers: int = 1,
) -> str:
    """`TP8` (one worker), `2xTP8` (two aggregated workers), `2P1D DEP2/DEP8`."""
    if prefill is not None:
        words = deployment_words(
            decode,
            prefill=prefill,
            prefill_workers=prefill_workers,
            decode_workers=decode_workers,
        )
        return str(words)
    word = worker_word(decode)
    return word if decode_workers == 1 else f"{decode_workers}x{word}"


def pd_word(prefill_workers: int, decode_workers: int) -> str:
    return f"{prefill_workers}P{decode_workers}D"


def deployment_words(
    decode: WorkerLayout,
    *,
    prefill: WorkerLayout | None = None,
    prefill_workers: int = 0,
    decode_workers: int = 0,
) -> DeploymentWords:
    """Words for a disaggregated deployment (pass `prefill`) or an aggregated one."""
    if prefill is None:
        return DeploymentWords(None, None, worker_word(decode))
    return DeploymentWords(
        pd_word(prefill_workers, decode_workers), worker_word(prefill), worker_word(decode)
    )


_EDGE_L = r"(?<![A-Za-z0-9])"
_EDGE_R = r"(?![A-Za-z0-9])"
_PATTERNS: tuple[tuple[TokenKind, re.Pattern[str]], ...] = (
    (TokenKind.PD, re.compile(_EDGE_L + r"(\d+)[pP](\d+)[dD]" + _EDGE_R)),
    (TokenKind.PD, re.compile(_EDGE_L + r"ctx(\d+)_gen(\d+)" + r"(?![A-Za-z0-9])", re.I)),
    (
        TokenKind.WORKER,
        re.compile(_EDGE_L + r"(DEP|TEP|TP|DP|EP)(\d+)(?:(PP)(\d+))?" + _EDGE_R, re.I),
    ),
    (TokenKind.SEQ, re.compile(_EDGE_L + r"(\d+)[kK](\d+)[kK]" + _EDGE_R)),
    (TokenKind.CONC, re.compile(_EDGE_L + r"c(\d+)" + _EDGE_R)),
    (TokenKind.BATCH, re.compile(_EDGE_L + r"batch(\d+)" + _EDGE_R, re.I)),
)


def parse_tokens(text: str) -> list[TopologyToken]:
    """All topology tokens in `text`, in order. Separators: anything not a letter or digit
    (so `_`, `-`, `/`, `.` and spaces all split)."""
    found: list[TopologyToken] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            found.append(_token(kind, match))
    found.sort(key=lambda t: t.start)
    return found


def _token(kind: TokenKind, match: re.Match[str]) -> TopologyToken:
    text, start = match.group(0), match.start()
    if kind is TokenKind.PD:
        p, d = int(match.group(1)), int(match.group(2))
        return TopologyToken(kind, text, start, pd_word(p, d), p, d)
    if kind is TokenKind.WORKER:
        name, size = match.group(1).upper(), int(match.group(2))
        word = f"{name}{size}" + (f"PP{match.group(4)}" if match.group(3) else "")
        return TopologyToken(kind, text, start, word, size, int(match.group(4) or 1))
    if kind is TokenKind.SEQ:
        i, o = int(match.group(1)), int(match.group(2))
        return TopologyToken(kind, text, start, f"{i}k{o}k", i, o)
    value = int(match.group(1))
    return TopologyToken(kind, text, start, f"{kind.value}{value}", value)
