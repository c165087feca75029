"""Serving engines as the simulator costs them (engines.yaml): memory rule and overheads."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import Field
from ruamel.yaml import YAML

from inferbench.core.errors import InputError
from inferbench.core.model import FrozenModel
from inferbench.engines.registry import find_engine
from inferbench.sim.admission import KvAdmission


class EngineProfile(FrozenModel):
    """One engine: how it reads its memory fraction, and its overheads before calibration."""

    key: str  # the engine's registry key (inferbench.engines)
    memory: Literal["total", "after_weights"]
    memory_flag: str
    default_memory_fraction: float = Field(gt=0, le=1)
    activation_reserve_gb: float = Field(ge=0)
    step_overhead_s: float = Field(ge=0)
    layer_overhead_s: float = Field(ge=0)
    chunked_prefill: bool = True  # whether a prompt may be split over steps by default
    kv_admission: KvAdmission | None = None  # SGLang's reservation; None: blocks for the chunk
    sources: dict[str, str]


@lru_cache(maxsize=1)
def engine_profiles() -> dict[str, EngineProfile]:
    text = resources.files("inferbench.sim").joinpath("engines.yaml").read_text("utf-8")
    data = YAML(typ="safe").load(text)["engines"]
    return {key: EngineProfile.model_validate({"key": key, **body}) for key, body in data.items()}


def engine_profile(name: str) -> EngineProfile:
    """The engine a framework name (`sglang`, `dynamo-trt`, `vllm`, ...) runs."""
    spec = find_engine(name)
    profile = engine_profiles().get(spec.key) if spec is not None else None
    if profile is not None:
        return profile
    raise InputError(
        f"unknown engine {name!r}",
        hint=f"use one of {', '.join(sorted(engine_profiles()))} (or a Dynamo front of one)",
    )


def known_engine(name: str) -> str | None:
    """The engine key for `name`, or None when the simulator does not know it."""
    try:
        return engine_profile(name).key
    except InputError:
        return None
