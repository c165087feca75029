"""SGLang's KV admission: a new request is admitted only if the free KV holds its prompt,
its whole output and a share (`new_token_ratio`) of what every running request may
still generate; the share decays while decoding goes well and jumps after a retraction.

After SGLang's PrefillAdder (managers/schedule_policy.py) and NewTokenRatioTracker; the
constants are SGLang's defaults (srt/environ.py), held in its engine module
(`inferbench.engines.sglang`).
"""

from __future__ import annotations

from collections.abc import Iterable

from inferbench.engines.simprofile import KvAdmission

__all__ = ["KvAdmission", "NewTokenRatio"]


class NewTokenRatio:
    """The running estimate of how much of its output a running request still needs."""

    __slots__ = ("spec", "current", "floor", "decay")

    def __init__(self, spec: KvAdmission) -> None:
        self.spec = spec
        self.current = spec.init_ratio
        self.floor = spec.init_ratio * spec.min_ratio_factor
        self.decay = (spec.init_ratio - self.floor) / spec.decay_steps

    def decoded(self) -> None:
        """One decode step without a retraction: a little more confidence."""
        self.current = max(self.current - self.decay, self.floor)

    def retracted(self, remaining: Iterable[tuple[int, int]]) -> None:
        """After a retraction, from the (generated, max_new) of the requests still running."""
        done = total = count = 0
        for generated, max_new in remaining:
            done += generated
            total += max_new
            count += 1
        if total:
            self.current = min(1.0, (done + self.spec.retract_steps * count) / total)

    def charge(self, prompt: int, output: int) -> int:
        """KV tokens a new request must find free: its prompt and its (clipped) output."""
        return prompt + min(output, self.spec.clip_tokens)

    def reserve(self, remaining: Iterable[int]) -> float:
        """KV tokens held back for the running requests' remaining outputs."""
        clip = self.spec.clip_tokens
        return self.current * sum(min(r, clip) for r in remaining)
