"""Points whose latency is dominated by queueing: drawn, never crowned.

A closed-loop point far past a server's capacity still reports a high throughput per
GPU, but its requests spent most of their life waiting for a first token (a simulated
point at 154 s TTFT p50 topped its frontier). Such a point is kept off every Pareto
frontier and interpolation and drawn apart, with the reason.

The rule: TTFT p50 is at least `QUEUEING_SHARE` of E2E latency p50. Prefill of even an
8k prompt is a small part of a request that then decodes hundreds of tokens, so a
request that spends over half of its median latency before its first token was queued.
"""

from __future__ import annotations

from inferbench.results.record import Record

QUEUEING_SHARE = 0.5


def queueing_reason(r: Record) -> str | None:
    """Why `r`'s latency is dominated by queueing, or None when it is not (or unknown)."""
    ttft, e2el = r.metrics.ttft_ms.median, r.metrics.e2el_ms.median
    if ttft is None or not e2el or e2el <= 0:
        return None
    share = ttft / e2el
    if share < QUEUEING_SHARE:
        return None
    return (
        f"queueing: TTFT p50 {ttft / 1000:.3g} s is {share:.0%} of E2E latency p50"
        f" {e2el / 1000:.3g} s (at least {QUEUEING_SHARE:.0%}): not on the frontier"
    )
