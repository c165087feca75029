"""What to simulate, as `sim estimate` and `sim serve` take it, and the deployment it names.

A request names a srt-slurm recipe, a sweep job, or an aggregated deployment from flags
(model, GPU, layout, engine limits); the overrides (GPU, lengths, concurrencies, engine,
speculation, calibration) apply to any of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ConfigDict, Field

from inferbench.core.errors import InputError
from inferbench.core.limits import MAX_PROMPTS, MAX_TOKENS
from inferbench.core.model import FrozenModel

if TYPE_CHECKING:
    from inferbench.sim.deployment import SimDeployment
    from inferbench.sim.inputs import Overrides


class DeploymentRequest(FrozenModel):
    """`sim estimate`'s and `sim serve`'s deployment options (each field's description is
    its `--help`; `inferbench.cli.options` makes the options)."""

    model_config = ConfigDict(protected_namespaces=())  # `model_spec` is a field

    recipe: str | None = Field(None, description="srt-slurm recipe FILE[:selector].")
    job: str | None = Field(None, description="Sweep job JSON (FILE, or FILE:INDEX for a list).")
    model: str | None = Field(None, description="Model id (flags mode).")
    gpu: str | None = Field(None, description="GPU catalog name or runner label (overrides).")
    model_spec: str | None = Field(None, description="Catalog model to simulate (overrides).")
    isl: int | None = Field(None, le=MAX_TOKENS, description="Input length (overrides).")
    osl: int | None = Field(None, le=MAX_TOKENS, description="Output length (overrides).")
    concurrency: str | None = Field(
        None, description="Concurrencies, e.g. 64 or 4x8x16 (overrides)."
    )
    num_prompts: int | None = Field(
        None,
        le=MAX_PROMPTS,
        description=f"Requests per concurrency (overrides; at most {MAX_PROMPTS:,}).",
    )
    catalog: tuple[Path, ...] = Field((), description="Extra catalog YAML (repeatable).")
    precision: str = Field("bf16", description="Weight precision (flags mode).")
    tp: int = Field(1, description="Tensor parallel size (flags mode).")
    dp: int = Field(1, description="Data parallel (attention) size (flags mode).")
    pp: int = Field(1, description="Pipeline parallel size (flags mode).")
    expert_parallel: bool = Field(False, description="Enable expert parallel (flags mode).")
    workers: int = Field(1, description="Aggregated workers (flags mode).")
    max_num_seqs: int = Field(256, description="Engine max-num-seqs (flags mode).")
    max_num_batched_tokens: int = Field(8192, description="Engine token budget (flags mode).")
    max_model_len: int | None = Field(
        None,
        le=MAX_TOKENS,
        description="Engine max-model-len (flags mode; sim serve's default: the model's "
        "context from the catalog, never isl + osl).",
    )
    memory_fraction: float | None = Field(
        None,
        description="Engine memory fraction: vLLM gpu-memory-utilization, SGLang "
        "mem-fraction-static, TRT-LLM free_gpu_memory_fraction (flags mode).",
    )
    stream_interval: int | None = Field(None, description="Tokens per streamed chunk (overrides).")
    kv_cache_dtype: str | None = Field(
        None, description="KV-cache dtype: bf16, fp8, fp4 (overrides)."
    )
    engine: str | None = Field(
        None, description="Engine to cost: vllm, sglang, trtllm (overrides)."
    )
    spec_draft_tokens: int | None = Field(
        None, description="Speculative (MTP) draft tokens per step (overrides)."
    )
    spec_acceptance: float | None = Field(
        None,
        description="Acceptance rate of every draft position, 0..1 (default: 0.85 for the "
        "first, 0.84x less per later position; docs/simulator.md).",
    )
    calibration: str | None = Field(
        None,
        description="Calibration file from `sim calibrate`; 'none' for uncalibrated physics "
        "(default: the packaged calibration).",
    )

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
