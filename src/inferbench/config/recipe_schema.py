"""The typed view of an srt-slurm recipe: the fields inferbench's rules and backends read.

Which keys a recipe may have, and what srtctl rejects, is srtctl's schema
(`srtctl_schema.py`, checked against the real srtctl); these models only type what
inferbench reads, ignore every other key, and are never stricter than srtctl: their
derived sizes (`gpus_per_prefill_worker`, ...) follow srtctl's `ResourceConfig`.
Engine flag maps are free (`--kebab-case value` per key), read through `EngineFlags`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from inferbench.config.base import RuleViolation
from inferbench.config.recipe_values import RESOURCE_COUNTS
from inferbench.core.concurrency import parse_concurrency_list
from inferbench.core.errors import Location
from inferbench.core.model import LenientModel
from inferbench.engines.flags import EngineFlags, engine_layout
from inferbench.engines.layout import WorkerLayout

BackendType = Literal["sglang", "vllm", "trtllm"]
WorkerMode = Literal["prefill", "decode", "aggregated"]
EnvValue = str | int | float | bool


@dataclass(frozen=True)
class RecipeProblem:
    """One reason a recipe is invalid: the message, where, and how to fix it."""

    message: str
    location: Location
    hint: str | None = None


class RecipeModel(LenientModel):
    """Immutable; keys it does not name are ignored here (srtctl's schema judges them)."""


class RecipeModelSpec(RecipeModel):
    path: str
    container: str
    precision: str


class Resources(RecipeModel):
    gpu_type: str
    gpus_per_node: int = 4
    prefill_nodes: int | None = None
    decode_nodes: int | None = None
    prefill_workers: int | None = None
    decode_workers: int | None = None
    gpus_per_prefill: int | None = None
    gpus_per_decode: int | None = None
    agg_nodes: int | None = None
    agg_workers: int | None = None
    gpus_per_agg: int | None = None
    # srtctl places each worker smaller than a node on a node of its own
    spread_workers: bool = False

    @field_validator(*RESOURCE_COUNTS, mode="before")
    @classmethod
    def _as_srtctl_loads_it(cls, value: Any) -> Any:
        """marshmallow's Integer, as srtctl loads counts: 1.5 is 1 (`recipe_values` reports it)."""
        if isinstance(value, float) and math.isfinite(value):
            return int(value)
        return value

    @property
    def disaggregated(self) -> bool:
        """srtctl's rule: disaggregated when prefill or decode nodes are given."""
        return self.prefill_nodes is not None or self.decode_nodes is not None

    @property
    def gpus_per_prefill_worker(self) -> int:
        """Explicit `gpus_per_prefill`, else prefill_nodes * gpus_per_node // prefill_workers,
        else a whole node (srtctl's ResourceConfig.gpus_per_prefill)."""
        if self.gpus_per_prefill is not None:
            return self.gpus_per_prefill
        if self.prefill_nodes and self.prefill_workers:
            return self.prefill_nodes * self.gpus_per_node // self.prefill_workers
        return self.gpus_per_node

    @property
    def gpus_per_decode_worker(self) -> int:
        """Explicit `gpus_per_decode`, else from decode nodes; `decode_nodes: 0` with decode
        workers inherits the prefill size (they share the prefill nodes); else a node."""
        if self.gpus_per_decode is not None:
            return self.gpus_per_decode
        if self.decode_nodes and self.decode_workers:
            return self.decode_nodes * self.gpus_per_node // self.decode_workers
        if self.decode_nodes == 0 and self.decode_workers:
            return self.gpus_per_prefill_worker
        return self.gpus_per_node

    @property
    def gpus_per_agg_worker(self) -> int:
        if self.gpus_per_agg is not None:
            return self.gpus_per_agg
        if self.agg_nodes and self.agg_workers:
            return self.agg_nodes * self.gpus_per_node // self.agg_workers
        return self.gpus_per_node

    @property
    def total_nodes(self) -> int:
        if self.disaggregated:
            return (self.prefill_nodes or 0) + (self.decode_nodes or 0)
        return self.agg_nodes or 1

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


class EngineConfigs(RecipeModel):
    """`<type>_config`: one free flag map per worker mode."""

    prefill: dict[str, Any] | None = None
    decode: dict[str, Any] | None = None
    aggregated: dict[str, Any] | None = None


class RecipeBackend(RecipeModel):
    type: BackendType = "sglang"
    prefill_environment: dict[str, Any] = Field(default_factory=dict)
    decode_environment: dict[str, Any] = Field(default_factory=dict)
    aggregated_environment: dict[str, Any] = Field(default_factory=dict)
    sglang_config: EngineConfigs | None = None
    vllm_config: EngineConfigs | None = None
    trtllm_config: EngineConfigs | None = None
    connector: str | None = None
    # vLLM: pack prefill and decode workers onto shared nodes (srtctl's VLLMProtocol)
    allow_prefill_decode_colocation: bool = False
    allow_prefill_decode_colocation_across_nodes: bool = False

    def colocates(self, total_gpus: int, gpus_per_node: int) -> bool:
        """srtctl packs P/D workers contiguously instead of separate node pools."""
        if self.type != "vllm" or not self.allow_prefill_decode_colocation:
            return False
        return total_gpus <= gpus_per_node or self.allow_prefill_decode_colocation_across_nodes

    @property
    def engine_configs(self) -> EngineConfigs | None:
        configs: EngineConfigs | None = getattr(self, f"{self.type}_config")
        return configs

    def flags(self, mode: WorkerMode) -> EngineFlags:
        configs = self.engine_configs
        raw = getattr(configs, mode) if configs is not None else None
        return EngineFlags(self.type, raw or {})


class Frontend(RecipeModel):
    type: str = "dynamo"
    enable_multiple_frontends: bool = False
    num_additional_frontends: int = 0


class Dynamo(RecipeModel):
    install: bool = True
    version: str | None = None
    hash: str | None = None
    top_of_tree: bool | None = None
    wheel: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Dynamo:
        """srtctl's DynamoConfig: one of hash, top_of_tree, wheel (any of them clears
        `version`)."""
        given = [n for n in ("hash", "top_of_tree", "wheel") if getattr(self, n)]
        if len(given) > 1:
            raise RuleViolation(
                f"Cannot specify both Dynamo install sources: {', '.join(given)}",
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
        try:
            return list(parse_concurrency_list(value, separators="x"))
        except ValueError as exc:
            raise ValueError(f"concurrencies: {exc} (srt-slurm's 'AxBxC' form)") from None
    return value


class Benchmark(RecipeModel):
    type: str = "manual"
    isl: int | None = None
    osl: int | None = None
    concurrencies: tuple[int, ...] | None = None
    req_rate: str | float | None = "inf"
    random_range_ratio: float = 0.8
    num_prompts_mult: int = 10
    num_warmup_mult: int = 2
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


class HealthCheck(RecipeModel):
    max_attempts: int = 180
    interval_seconds: float = 10


class Slurm(RecipeModel):
    account: str | None = None
    partition: str | None = None
    time_limit: str | None = None


class Recipe(RecipeModel):
    """One concrete recipe (a plain file, or one variant of an override file)."""

    name: str
    model: RecipeModelSpec
    resources: Resources
    backend: RecipeBackend = Field(default_factory=RecipeBackend)
    frontend: Frontend = Field(default_factory=Frontend)
    dynamo: Dynamo | None = None
    benchmark: Benchmark | None = None
    health_check: HealthCheck = Field(default_factory=HealthCheck)
    slurm: Slurm | None = None
    sbatch_directives: dict[str, Any] = Field(default_factory=dict)
    srun_options: dict[str, Any] = Field(default_factory=dict)
    environment: dict[str, Any] = Field(default_factory=dict)
    container_mounts: Any = None
    setup_script: str | None = None

    _source: Any = PrivateAttr(default=None)
    _problems: tuple[RecipeProblem, ...] = PrivateAttr(default=())
    _unusable: tuple[RecipeProblem, ...] = PrivateAttr(default=())
    # flags and layouts are derived on every check; the recipe is frozen, so derive once
    _derived: dict[tuple[str, str], Any] = PrivateAttr(default_factory=dict)

    @property
    def problems(self) -> tuple[RecipeProblem, ...]:
        """Why srtctl would reject this recipe (empty: it accepts it, as far as inferbench's
        copy of srtctl's schema can tell)."""
        problems: tuple[RecipeProblem, ...] = self.__pydantic_private__["_problems"]  # type: ignore[index]
        return problems

    @property
    def unusable(self) -> tuple[RecipeProblem, ...]:
        """Values srtctl accepts but a benchmark cannot run (`recipe_values`)."""
        unusable: tuple[RecipeProblem, ...] = self.__pydantic_private__["_unusable"]  # type: ignore[index]
        return unusable

    @property
    def source(self) -> Any:
        """The `RecipeSource` this recipe was loaded from (None when built in code)."""
        return self.__pydantic_private__["_source"]  # type: ignore[index]

    @property
    def disaggregated(self) -> bool:
        return self.resources.disaggregated

    @property
    def modes(self) -> tuple[WorkerMode, ...]:
        return ("prefill", "decode") if self.disaggregated else ("aggregated",)

    def flags(self, mode: WorkerMode) -> EngineFlags:
        # the private dict directly: pydantic's __getattr__ for private attributes is slow,
        # and rules ask for flags tens of thousands of times on a real tree
        derived = self.__pydantic_private__["_derived"]  # type: ignore[index]
        cached: EngineFlags | None = derived.get(("flags", mode))
        if cached is None:
            cached = derived[("flags", mode)] = self.backend.flags(mode)
        return cached

    def layout(self, mode: WorkerMode) -> WorkerLayout:
        """The engine layout the flags of `mode` describe."""
        derived = self.__pydantic_private__["_derived"]  # type: ignore[index]
        cached: WorkerLayout | None = derived.get(("layout", mode))
        if cached is None:
            cached = engine_layout(self.backend.type, self.flags(mode).get)
            derived[("layout", mode)] = cached
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
