"""Every engine inferbench knows, and the lookups the other stages use instead of tables."""

from __future__ import annotations

import functools
from collections.abc import Mapping

from inferbench.engines import atom, sglang, sim, trtllm, vllm
from inferbench.engines.spec import EngineSpec

# in lookup order: a name two engines claimed would go to the first (the contract test
# holds aliases unique)
ENGINES: tuple[EngineSpec, ...] = (vllm.SPEC, sglang.SPEC, trtllm.SPEC, atom.SPEC, sim.SPEC)


@functools.cache
def _by_key() -> Mapping[str, EngineSpec]:
    return {spec.key: spec for spec in ENGINES}


@functools.cache
def _by_alias() -> Mapping[str, EngineSpec]:
    out: dict[str, EngineSpec] = {}
    for spec in ENGINES:
        for name in (spec.key, *spec.aliases):
            out.setdefault(name, spec)
    return out


def engine(key: str) -> EngineSpec:
    """The engine of this key (`vllm`); KeyError for a key no engine has."""
    return _by_key()[key]


def find_engine(name: str) -> EngineSpec | None:
    """The engine whose kernels a framework or recipe backend type (`dynamo-trt`) runs."""
    return _by_alias().get(name.strip().lower())


def serving_engine(framework: str) -> EngineSpec | None:
    """The engine whose single-node server inferbench starts for a master `framework`."""
    for spec in ENGINES:
        if framework in spec.serve_frameworks:
            return spec
    return None


def flag_engines() -> tuple[EngineSpec, ...]:
    """The engines whose own flags a recipe or script writes (not the simulator)."""
    return tuple(spec for spec in ENGINES if spec.known_flags)


def env_prefixes() -> tuple[str, ...]:
    """The environment-variable prefixes of every engine."""
    return tuple(prefix for spec in ENGINES for prefix in spec.env_prefixes)
