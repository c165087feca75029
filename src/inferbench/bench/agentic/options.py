"""How a replay runs: lanes, its length, warm-up, idle-gap cap, cache-bust (all recorded)."""

from __future__ import annotations

from pydantic import Field, model_validator

from inferbench.core.limits import MAX_DURATION_S, MAX_SEED
from inferbench.core.model import FrozenModel


class ReplayOptions(FrozenModel):
    lanes: int = Field(gt=0, description="concurrent trajectory lanes")
    duration_s: float | None = Field(
        default=None,
        gt=0,
        le=MAX_DURATION_S,
        allow_inf_nan=False,
        description="stop starting requests after this (measured window)",
    )
    sessions: int | None = Field(
        default=None, gt=0, description="measured sessions over all lanes; None = until the end"
    )
    warmup_sessions: int = Field(
        default=0, ge=0, description="per lane, before the window; not recorded"
    )
    max_idle_s: float = Field(
        default=300.0, ge=0, description="cap on each recorded idle gap (InferenceX: 300 s)"
    )
    delay_scale: float = Field(default=1.0, ge=0, description="multiplies every recorded gap")
    cache_bust: bool = Field(
        default=True, description="fresh tokens per session instance and run (no shared cache)"
    )
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    id_low: int = Field(default=1000, ge=0)
    id_high: int = Field(default=30000, gt=1)
    scrape_metrics: bool = Field(
        default=True, description="read the server's /metrics before and after the window"
    )

    @model_validator(mode="after")
    def _ends(self) -> ReplayOptions:
        if self.id_high <= self.id_low:
            raise ValueError("id_high must be above id_low")
        return self

    def gap(self, recorded: float) -> float:
        return min(recorded * self.delay_scale, self.max_idle_s)
