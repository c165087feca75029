"""A capacity question and its answer, per deployment, per GPU and per MW."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from inferbench.capacity.search import CapacityResult
from inferbench.core.model import FrozenModel

SCHEMA = "inferbench.capacity/1"
DEFAULT_GRID = "1,2,4,8,16,32,64,128,256,512"


class CapacityRequest(FrozenModel):
    """What to search: a server (`base_url`) and/or a simulated job (`job`), the workload,
    the targets and the grid of concurrencies."""

    slo: str = Field(description="targets, e.g. ttft_p90<=2s,tpot_p90<=50ms")
    base_url: str | None = Field(default=None, description="server to measure")
    model: str | None = Field(default=None, description="model the server serves")
    job: str | None = Field(
        default=None, description="sweep job (jobs.json:N): simulated first, or alone"
    )
    isl: int | None = Field(default=None, gt=0, description="input length (default: the job's)")
    osl: int | None = Field(default=None, gt=0, description="output length (default: the job's)")
    grid: str = Field(default=DEFAULT_GRID, description="concurrencies to choose from")
    repeats: int = Field(default=3, ge=1, le=20, description="measurements near a bound")
    noise: float = Field(
        default=0.05, ge=0, le=0.5, description="within this of a bound, measure again"
    )
    prompts_per_load: int = Field(default=10, ge=1, le=1000, description="prompts per stream")
    gpus: int | None = Field(default=None, ge=1, description="GPUs of the deployment")
    gpu_kw: float | None = Field(
        default=None,
        gt=0,
        le=100,
        description="provisioned kW per GPU, for per-MW figures (default: the catalog's)",
    )
    result_dir: Path | None = Field(default=None, description="folder for measured points")
    # agent sessions instead of sa-bench requests: the load is lanes replaying the traces
    trace: Path | None = Field(default=None, description="agentic: trace file or folder")
    synth: str | None = Field(default=None, description="agentic: synthetic sessions, k=v,...")
    duration: float = Field(
        default=60.0, gt=0, le=86_400, description="agentic: seconds each load is replayed"
    )

    @property
    def agentic(self) -> bool:
        return self.trace is not None or self.synth is not None


class CapacityAnswer(FrozenModel):
    """One search's answer with the per-GPU and per-MW figures at the capacity."""

    kind: str  # "measured" or "predicted" (the simulator's)
    unit: str  # what a unit of load is: "users" (request streams) or "agents" (sessions)
    result: CapacityResult
    gpus: int | None
    kw_per_gpu: float | None  # provisioned, all-in: --gpu-kw or the catalog's
    users_per_gpu: float | None
    tok_s_per_gpu: float | None
    users_per_mw: float | None
    tok_s_per_mw: float | None


class CapacityReport(FrozenModel):
    schema_: str = Field(default=SCHEMA, alias="schema")
    request: CapacityRequest
    predicted: CapacityAnswer | None = None
    measured: CapacityAnswer | None = None
