"""What to simulate, as `sim estimate` and `sim serve` take it, and the deployment it names.

A request names a srt-slurm recipe, a sweep job, or an aggregated deployment from flags
(model, GPU, layout, engine limits); the overrides (GPU, lengths, concurrencies, engine,
speculation, calibration) apply to any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from inferbench.core.errors import InputError

if TYPE_CHECKING:
    from inferbench.sim.deployment import SimDeployment
    from inferbench.sim.inputs import Overrides


@dataclass(frozen=True)
class DeploymentRequest:
    recipe: str | None = None  # FILE[:selector]
    job: str | None = None  # FILE or FILE:INDEX
    model: str | None = None
    gpu: str | None = None
    model_spec: str | None = None
    isl: int | None = None
    osl: int | None = None
    concurrency: str | None = None  # 64 or 4x8x16
    num_prompts: int | None = None
    catalog: tuple[Path, ...] = ()
    precision: str = "bf16"
    tp: int = 1
    dp: int = 1
    pp: int = 1
    expert_parallel: bool = False
    workers: int = 1
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    max_model_len: int | None = None
    memory_fraction: float | None = None
    stream_interval: int | None = None
    kv_cache_dtype: str | None = None
    engine: str | None = None
    spec_draft_tokens: int | None = None
    spec_acceptance: float | None = None
    calibration: str | None = None

    @property
    def from_flags(self) -> bool:
        """No recipe and no job: the deployment is the flags' aggregated one."""
        return not (self.recipe or self.job)

    def overrides(self) -> Overrides:
        from inferbench.sim.inputs import Overrides, concurrency_list

        return Overrides(
            gpu=self.gpu,
            model_spec=self.model_spec,
            isl=self.isl,
            osl=self.osl,
            concurrency=concurrency_list(self.concurrency) if self.concurrency else None,
            num_prompts=self.num_prompts,
            stream_interval=self.stream_interval,
            catalog_files=tuple(str(p) for p in self.catalog),
            kv_cache_dtype=self.kv_cache_dtype,
            engine=self.engine,
            spec_draft_tokens=self.spec_draft_tokens,
            spec_acceptance=self.spec_acceptance,
            calibration=self.calibration,
        )

    def engine_flags(self) -> dict[str, object]:
        """The engine flags of flags mode, as a recipe spells them."""
        flags: dict[str, object] = {
            "max-num-seqs": self.max_num_seqs,
            "max-num-batched-tokens": self.max_num_batched_tokens,
        }
        if self.max_model_len:
            flags["max-model-len"] = self.max_model_len
        if self.memory_fraction is not None:
            flags["gpu-memory-utilization"] = self.memory_fraction
        return flags


def check_numbers(req: DeploymentRequest) -> None:
    """Counts must be whole numbers of at least 1; a rate a number in [0, 1]."""
    for flag, value in (
        ("--isl", req.isl),
        ("--osl", req.osl),
        ("--num-prompts", req.num_prompts),
        ("--tp", req.tp),
        ("--dp", req.dp),
        ("--pp", req.pp),
        ("--workers", req.workers),
        ("--max-num-seqs", req.max_num_seqs),
        ("--max-num-batched-tokens", req.max_num_batched_tokens),
        ("--max-model-len", req.max_model_len),
        ("--stream-interval", req.stream_interval),
        ("--spec-draft-tokens", req.spec_draft_tokens),
    ):
        if value is not None and value < 1:
            raise InputError(
                f"{flag} must be at least 1, got {value}", hint=f"give {flag} 1 or more"
            )
    frac = req.memory_fraction
    if frac is not None and not 0 < frac <= 1:
        raise InputError(f"--memory-fraction must be in (0, 1], got {frac}")
    acc = req.spec_acceptance
    if acc is not None and not 0 <= acc <= 1:  # also refuses nan
        raise InputError(f"--spec-acceptance must be in [0, 1], got {acc}")


def build_deployment(
    req: DeploymentRequest, *, serving: bool = False, sweeping: bool = False
) -> SimDeployment:
    """The deployment a request names. `serving`: for `sim serve`, whose context is never
    isl + osl and which needs no --isl/--osl. `sweeping`: for a topology sweep, which tries
    its own layouts (the flags' is not checked, so no base topology is needed)."""
    from inferbench.sim.inputs import for_serving, from_flags, from_job, from_recipe

    overrides = req.overrides()
    check_numbers(req)
    if req.recipe and req.job:
        raise InputError("give either --recipe or --job, not both")
    if req.recipe:
        dep = from_recipe(req.recipe, overrides)
    elif req.job:
        dep = from_job(req.job, overrides)
    else:
        isl, osl = _lengths(req, overrides, serving)
        assert req.model is not None and req.gpu is not None  # _lengths refuses them missing
        dep = from_flags(
            model=req.model,
            gpu=req.gpu,
            precision=req.precision,
            tp=req.tp,
            dp=req.dp,
            pp=req.pp,
            expert_parallel=req.expert_parallel,
            workers=req.workers,
            engine=req.engine_flags(),
            isl=isl,
            osl=osl,
            concurrency=overrides.concurrency or (1,),
            overrides=overrides,
            check=not sweeping,
        )
    return for_serving(dep) if serving else dep


def _lengths(req: DeploymentRequest, overrides: Overrides, serving: bool) -> tuple[int, int]:
    """Flags mode's isl and osl; `sim serve` sizes them by the served context instead."""
    from inferbench.sim.inputs import model_context, serve_lengths

    isl, osl = req.isl, req.osl
    if serving and req.model and req.gpu and (isl is None or osl is None):
        context = req.max_model_len or model_context(req.model, overrides)
        isl, osl = serve_lengths(context)
    if not req.model or not req.gpu or isl is None or osl is None:
        raise InputError(
            "no deployment given",
            hint="pass --recipe FILE, --job FILE, or --model, --gpu"
            + ("" if serving else ", --isl and --osl")
            + " (with --tp/--dp/--pp/--expert-parallel)",
        )
    return isl, osl


def sweep_budget(req: DeploymentRequest, dep: SimDeployment, gpu_budget: int | None) -> int:
    """The GPUs a topology sweep lays out: `gpu_budget`, else the deployment's; in flags
    mode at least one node (its layout flags are only a start)."""
    if gpu_budget:
        return gpu_budget
    return max(dep.total_gpus, dep.gpus_per_node) if req.from_flags else dep.total_gpus
