"""How `sim serve` listens and which faults it injects: the one list of its server options.

Each field's description is its `--help` and its `Flag` its spelling where that is not
`--field-name` (`inferbench.cli.options` makes the options); kept apart from `sim.server`
so that reading the options does not load the HTTP server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from inferbench.core.flags import Flag
from inferbench.core.limits import MAX_SEED
from inferbench.core.model import FrozenModel


class ServeOptions(FrozenModel):
    """How the simulated server listens and which faults it injects."""

    host: str = Field("127.0.0.1", description="Address to bind.")
    port: int = Field(8000, ge=0, le=65535, description="Port (0 picks a free one and prints it).")
    record_sends: Annotated[Path | None, Flag("--record-sends", writes="file")] = Field(
        None, description="JSONL of chunk send times."
    )
    fault_error_rate: float = Field(  # answer 500 at once
        0.0, ge=0, le=1, description="Share of requests answered 500."
    )
    fault_stall_rate: float = Field(  # stop sending after the first chunk
        0.0, ge=0, le=1, description="Share of streams that stall."
    )
    fault_drop_rate: float = Field(  # close the connection mid-stream
        0.0, ge=0, le=1, description="Share of streams dropped mid-way."
    )
    # answer at once, successfully, with no generated token (a disaggregated deployment
    # whose KV transfer failed looks like this to a client: NVIDIA/srt-slurm#429)
    fault_empty_rate: float = Field(
        0.0, ge=0, le=1, description="Share of requests answered with no generated token."
    )
    slow_start_s: Annotated[float, Flag("--slow-start")] = Field(  # /health 503 until then
        0.0, ge=0, description="Seconds before /health answers 200."
    )
    crash_after: int | None = Field(  # exit the process after N finished requests
        None, ge=1, description="Exit after N finished requests."
    )
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed of the fault draws.")
    step_time_factor: float = Field(  # every engine step this times as long
        1.0,
        ge=0.01,
        le=100.0,
        description="Every engine step takes this times as long (1.1: a 10% slower engine).",
    )
