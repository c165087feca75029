"""The srt-slurm recipe schema (what `srtctl apply -f recipe.yaml` accepts).

Unknown keys are rejected at every level except the engine flag maps, which are
free (`--kebab-case value` per key) and read through `EngineFlags`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from inferbench.config.base import FrozenModel, RuleViolation
from inferbench.config.engine_flags import EngineFlags
from inferbench.config.layout import WorkerLayout, engine_layout

BackendType = Literal["sglang", "vllm", "trtllm"]
WorkerMode = Literal["prefill", "decode", "aggregated"]
EnvValue = str | int | float | bool
_CONC_STRING = re.compile(r"\s*\d+(\s*x\s*\d+)*\s*\Z")


class ModelSpec(FrozenModel):
    path: str = Field(min_length=1)
    container: str = Field(min_length=1)
    precision: str = Field(min_length=1)


class Resources(FrozenModel):
    gpu_type: str = Field(min_length=1)
    gpus_per_node: int = Field(default=4, ge=1)
    prefill_nodes: int | None = Field(default=None, ge=0)
    decode_nodes: int | None = Field(default=None, ge=0)
    prefill_workers: int | None = Field(default=None, ge=1)
    decode_workers: int | None = Field(default=None, ge=0)
    gpus_per_prefill: int | None = Field(default=None, ge=1)
    gpus_per_decode: int | None = Field(default=None, ge=1)
    agg_nodes: int | None = Field(default=None, ge=1)
    agg_workers: int | None = Field(default=None, ge=1)
    gpus_per_agg: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _one_form(self) -> Resources:
        disagg = [self.prefill_nodes, self.decode_nodes, self.prefill_workers, self.decode_workers]
        agg = [self.agg_nodes, self.agg_workers, self.gpus_per_agg]
        if any(v is not None for v in disagg) and any(v is not None for v in agg):
            raise RuleViolation(
                "resources mixes the disaggregated (prefill_/decode_) and aggregated (agg_) forms",
                hint="keep one form",
            )
        if self.disaggregated:
            for name in ("prefill_nodes", "prefill_workers", "decode_workers"):
                if getattr(self, name) is None:
                    raise RuleViolation(f"missing {name}", at=(name,), hint=f"add {name}:")
        elif self.agg_nodes is None or self.agg_workers is None:
            raise RuleViolation(
                "resources needs prefill_/decode_ counts (disaggregated) or agg_nodes and"
                " agg_workers (aggregated)",
                hint="add prefill_nodes/decode_nodes/prefill_workers/decode_workers",
            )
        return self

    @property
    def disaggregated(self) -> bool:
        return any(
            v is not None
            for v in (
                self.prefill_nodes,
                self.decode_nodes,
                self.prefill_workers,
                self.decode_workers,
            )
        )

    @property
    def gpus_per_prefill_worker(self) -> int:
        """Explicit `gpus_per_prefill`, else prefill_nodes * gpus_per_node // prefill_workers."""
        if self.gpus_per_prefill is not None:
            return self.gpus_per_prefill
        return (self.prefill_nodes or 0) * self.gpus_per_node // max(self.prefill_workers or 1, 1)

    @property
    def gpus_per_decode_worker(self) -> int:
        """Explicit `gpus_per_decode`, else from decode nodes; `decode_nodes: 0` inherits the
        prefill size (decode workers share the prefill nodes)."""
        if self.gpus_per_decode is not None:
            return self.gpus_per_decode
        if not self.decode_nodes:
            return self.gpus_per_prefill_worker
        return self.decode_nodes * self.gpus_per_node // max(self.decode_workers or 1, 1)

    @property
    def gpus_per_agg_worker(self) -> int:
        if self.gpus_per_agg is not None:
            return self.gpus_per_agg
        return (self.agg_nodes or 0) * self.gpus_per_node // max(self.agg_workers or 1, 1)

    @property
    def total_nodes(self) -> int:
        if self.disaggregated:
            return (self.prefill_nodes or 0) + (self.decode_nodes or 0)
        return self.agg_nodes or 0

    def workers(self, mode: WorkerMode) -> int:
        if mode == "prefill":
            return self.prefill_workers or 0
        if mode == "decode":
            return self.decode_workers or 0
        return self.agg_workers or 0

    def gpus_per_worker(self, mode: WorkerMode) -> int:
        if mode == "prefill":
            return self.gpus_per_prefill_worker
        if mode == "decode":
            return self.gpus_per_decode_worker
        return self.gpus_per_agg_worker


class EngineConfigs(FrozenModel):
    """`<type>_config`: one free flag map per worker mode."""

    prefill: dict[str, Any] | None = None
    decode: dict[str, Any] | None = None
    aggregated: dict[str, Any] | None = None


class Backend(FrozenModel):
    type: BackendType = "sglang"
    prefill_environment: dict[str, EnvValue | None] = Field(default_factory=dict)
    decode_environment: dict[str, EnvValue | None] = Field(default_factory=dict)
    aggregated_environment: dict[str, EnvValue | None] = Field(default_factory=dict)
    sglang_config: EngineConfigs | None = None
    vllm_config: EngineConfigs | None = None
    trtllm_config: EngineConfigs | None = None
    connector: str | None = None

    @model_validator(mode="after")
    def _config_matches_type(self) -> Backend:
        for other in ("sglang", "vllm", "trtllm"):
            if other != self.type and getattr(self, f"{other}_config") is not None:
                raise RuleViolation(
                    f"{other}_config given but backend type is {self.type!r}",
                    at=(f"{other}_config",),
                    hint=f"rename it to {self.type}_config or set type: {other}",
                )
        if self.connector is not None and self.type != "vllm":
            raise RuleViolation("connector is vLLM only", at=("connector",))
        return self

    @property
    def engine_configs(self) -> EngineConfigs | None:
        configs: EngineConfigs | None = getattr(self, f"{self.type}_config")
        return configs

    def flags(self, mode: WorkerMode) -> EngineFlags:
        configs = self.engine_configs
        raw = getattr(configs, mode) if configs is not None else None
        return EngineFlags(self.type, raw or {})


class Frontend(FrozenModel):
    type: Literal["dynamo", "sglang", "vllm", "trtllm_serve"] = "dynamo"
    enable_multiple_frontends: bool = False
    num_additional_frontends: int = Field(default=0, ge=0)


class Dynamo(FrozenModel):
    install: bool = True
    version: str | None = None
    hash: str | None = None
    top_of_tree: bool | None = None
    wheel: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Dynamo:
        given = [n for n in ("version", "hash", "top_of_tree", "wheel") if getattr(self, n)]
        if len(given) > 1:
            raise RuleViolation(
                f"dynamo: give one of version, hash, top_of_tree, wheel (got {', '.join(given)})",
                at=(given[1],),
            )
        return self


def parse_concurrencies(value: Any) -> Any:
    """`"4x8x16"` -> [4, 8, 16]; `"2048"` -> [2048]; an int -> [int]; lists as given."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return [value]
    if isinstance(value, str):
        if not _CONC_STRING.match(value):
            raise ValueError(f"concurrencies {value!r} is not a list or an 'AxBxC' string")
        return [int(part) for part in value.split("x")]
    return value


class Benchmark(FrozenModel):
    type: Literal[
        "sa-bench", "custom", "router", "trace-replay", "gsm8k", "mmlu", "gpqa", "lm-eval", "manual"
    ]
    isl: int | None = Field(default=None, ge=1)
    osl: int | None = Field(default=None, ge=1)
    concurrencies: tuple[int, ...] | None = None
    req_rate: str | float = "inf"
    random_range_ratio: float = Field(default=0.8, ge=0, le=1)
    num_prompts_mult: int = Field(default=10, ge=1)
    num_warmup_mult: int = Field(default=2, ge=0)
    command: str | None = None

    @field_validator("concurrencies", mode="before")
    @classmethod
    def _parse_concurrencies(cls, value: Any) -> Any:
        return parse_concurrencies(value)

    @field_validator("concurrencies")
    @classmethod
    def _positive(cls, value: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if value is not None and any(c < 1 for c in value):
            raise ValueError("concurrencies must be positive")
        return value


class HealthCheck(FrozenModel):
    max_attempts: int = Field(default=180, ge=1)
    interval_seconds: float = Field(default=10, gt=0)


class Slurm(FrozenModel):
    account: str | None = None
    partition: str | None = None
    time_limit: str | None = None


class Recipe(FrozenModel):
    """One concrete recipe (a plain file, or one variant of an override file)."""

    name: str = Field(min_length=1)
    model: ModelSpec
    resources: Resources
    backend: Backend = Field(default_factory=Backend)
    frontend: Frontend = Field(default_factory=Frontend)
    dynamo: Dynamo | None = None
    benchmark: Benchmark | None = None
    health_check: HealthCheck = Field(default_factory=HealthCheck)
    slurm: Slurm | None = None
    sbatch_directives: dict[str, EnvValue | None] = Field(default_factory=dict)
    srun_options: dict[str, EnvValue | None] = Field(default_factory=dict)
    environment: dict[str, EnvValue | None] = Field(default_factory=dict)
    container_mounts: dict[str, str] | tuple[str, ...] | None = None
    setup_script: str | None = None
    infra: dict[str, Any] | None = None
    profiling: dict[str, Any] | None = None
    sweep: dict[str, Any] | None = None

    _source: Any = PrivateAttr(default=None)
    # flags and layouts are derived on every check; the recipe is frozen, so derive once
    _derived: dict[tuple[str, str], Any] = PrivateAttr(default_factory=dict)

    @property
    def source(self) -> Any:
        """The `RecipeSource` this recipe was loaded from (None when built in code)."""
        return self._source

    @property
    def disaggregated(self) -> bool:
        return self.resources.disaggregated

    @property
    def modes(self) -> tuple[WorkerMode, ...]:
        return ("prefill", "decode") if self.disaggregated else ("aggregated",)

    def flags(self, mode: WorkerMode) -> EngineFlags:
        cached: EngineFlags | None = self._derived.get(("flags", mode))
        if cached is None:
            cached = self._derived[("flags", mode)] = self.backend.flags(mode)
        return cached

    def layout(self, mode: WorkerMode) -> WorkerLayout:
        """The engine layout the flags of `mode` describe."""
        cached: WorkerLayout | None = self._derived.get(("layout", mode))
        if cached is None:
            cached = engine_layout(self.backend.type, self.flags(mode).get)
            self._derived[("layout", mode)] = cached
        return cached

    def flags_path(self, mode: WorkerMode) -> tuple[str, ...]:
        """The key path of the flag map of `mode` (for locating it)."""
        return ("backend", f"{self.backend.type}_config", mode)

    def flag_path(self, mode: WorkerMode, name: str) -> tuple[str, ...] | None:
        """The key path of flag `name` of `mode` as written (for locating it)."""
        hit = self.flags(mode).find(name)
        if hit is None:
            return None
        return (*self.flags_path(mode), hit.written)
