"""Minimal local stand-ins for conventions the config engineer owns.

TO BE REPLACED by `inferbench.config.layout` (WorkerLayout) and
`inferbench.config.images.normalize_image` once they land: these exist only so the
results store can be built and tested before them, and are used only as fallbacks.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LocalLayout:
    """Engine layout of one worker: GPUs, TP, DP, EP, PP, PCP, and the DEP spelling seen."""

    gpus: int
    tp: int
    dp: int
    ep: int
    pp: int
    pcp: int
    dp_attn: bool
    note: str | None


def worker_layout(*, tp: int, ep: int, dp_attn: bool, pp: int = 1, pcp: int = 1) -> LocalLayout:
    """Normalise the two DEP spellings to an explicit layout.

    `tp: N, ep: N, dp-attn: true` (tp = GPUs of the worker) and `tp: 1, ep: N,
    dp-attn: true` (engine TP) both mean N GPUs, attention DP N, expert parallel N.
    """
    if dp_attn and tp == 1 and ep > 1:
        return LocalLayout(ep * pp * pcp, 1, ep, ep, pp, pcp, True, "DEP written as tp=1 ep=N")
    if dp_attn and tp > 1:
        return LocalLayout(tp * pp * pcp, 1, tp, ep, pp, pcp, True, "DEP written as tp=N ep=N")
    return LocalLayout(tp * pp * pcp, tp, 1, ep, pp, pcp, dp_attn, None)


def normalize_image(image: str) -> str:
    """`docker.io/library/x` -> `x:latest`-style canonical reference (lower-case repo)."""
    ref = image.strip()
    for prefix in ("docker://", "docker.io/", "index.docker.io/"):
        ref = ref.removeprefix(prefix)
    ref = ref.removeprefix("library/")
    name, at, digest = ref.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" not in last and not at:
        name += ":latest"
    repo, colon, tag = name.rpartition(":") if ":" in last else (name, "", "")
    return f"{repo.lower()}{colon}{tag}{at}{digest}"
