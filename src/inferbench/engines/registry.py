"""Every engine inferbench knows, and the lookups the other stages use instead of tables.

The engines of this package are listed in `BUILTIN`. Another package adds one without
touching inferbench: an `EngineSpec` named by an entry point of the `inferbench.engines` group
(`toy = "toy_engine:SPEC"` under `[project.entry-points."inferbench.engines"]`) is found the
first time the registry is asked, or `register(spec)` adds one at run time.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from importlib import metadata

from inferbench.core.errors import InputError
from inferbench.engines import atom, sglang, sim, trtllm, vllm
from inferbench.engines.spec import EngineSpec

ENTRY_POINT_GROUP = "inferbench.engines"
# in lookup order: a name two engines claimed would go to the first (the contract test
# holds aliases unique)
BUILTIN: tuple[EngineSpec, ...] = (vllm.SPEC, sglang.SPEC, trtllm.SPEC, atom.SPEC, sim.SPEC)
# the engine whose simulator profile costs an engine that has none (said wherever it happens)
SIM_STAND_IN = "vllm"

_lock = threading.Lock()
_added: list[EngineSpec] = []  # registered at run time, in order
_found: tuple[EngineSpec, ...] | None = None  # from entry points, read once (`discover`)


class EngineConflict(InputError):
    """A registered engine claims a key or a name another engine has."""


def _entry_point_specs() -> tuple[EngineSpec, ...]:
    found: list[EngineSpec] = []
    for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {point.name} = {point.value} ({ENTRY_POINT_GROUP})"
        hint = "fix or uninstall the package that declares it"
        try:
            spec = point.load()
        except Exception as exc:  # a plugin's own import error, whatever it is
            raise InputError(f"{where} cannot be loaded: {exc}", hint=hint) from None
        if not isinstance(spec, EngineSpec):
            raise InputError(f"{where} is not an EngineSpec", hint=hint)
        found.append(spec)
    return tuple(found)


def discover() -> None:
    """Read the `inferbench.engines` entry points again (a package installed since)."""
    global _found
    specs = _entry_point_specs()
    with _lock:
        _found = ()
        for spec in specs:
            _check_new(spec)
            _found = (*_found, spec)


def _check_new(spec: EngineSpec) -> None:
    """An engine may not take a key or a name an engine already has (it would never be
    found by it, or would change what an existing name runs)."""
    for other in (*BUILTIN, *(_found or ()), *_added):
        if other.key == spec.key:
            if other is spec:
                continue
            raise EngineConflict(f"engine {spec.key!r} is registered twice")
        taken = {other.key, *other.aliases} & {spec.key, *spec.aliases}
        if taken:
            raise EngineConflict(
                f"engine {spec.key!r} claims {', '.join(sorted(taken))} of engine {other.key!r}"
            )


def register(spec: EngineSpec) -> EngineSpec:
    """Add an engine for this process (what an entry point does at first use); registering
    the same spec again is a no-op."""
    engines()  # entry points first, so a conflict with one is found here
    with _lock:
        if any(other is spec for other in (*(_found or ()), *_added)):
            return spec
        _check_new(spec)
        _added.append(spec)
    return spec


def unregister(key: str) -> None:
    """Drop an engine `register` added (tests that add a throwaway engine)."""
    with _lock:
        _added[:] = [spec for spec in _added if spec.key != key]


def engines() -> tuple[EngineSpec, ...]:
    """Every engine, in lookup order: this package's, then entry points', then registered."""
    if _found is None:
        discover()
    return (*BUILTIN, *(_found or ()), *_added)


def _by_key() -> Mapping[str, EngineSpec]:
    return {spec.key: spec for spec in engines()}


def engine(key: str) -> EngineSpec:
    """The engine of this key (`vllm`); KeyError for a key no engine has."""
    return _by_key()[key]


def engine_keys() -> tuple[str, ...]:
    """Every engine's key, in lookup order (`--engine`'s choices)."""
    return tuple(spec.key for spec in engines())


def find_engine(name: str) -> EngineSpec | None:
    """The engine whose kernels a framework or recipe backend type (`dynamo-trt`) runs."""
    wanted = name.strip().lower()
    for spec in engines():
        if wanted == spec.key or wanted in spec.aliases:
            return spec
    return None


def serving_engine(framework: str) -> EngineSpec | None:
    """The engine whose single-node server inferbench starts for a master `framework`."""
    for spec in engines():
        if framework in spec.serve_frameworks:
            return spec
    return None


def sim_costing(name: str) -> tuple[EngineSpec, str | None]:
    """The engine whose simulator profile costs what `name` (a framework or recipe backend
    type) runs, and when that is not its own engine, the sentence that says so."""
    spec = find_engine(name)
    if spec is not None and spec.sim_profile is not None:
        return spec, None
    stand_in = engine(SIM_STAND_IN)
    what = f"engine {name!r} is not modelled"
    if spec is not None:
        what = f"{spec.display} has no simulator profile"
    return stand_in, f"{what}: costed as {stand_in.display}"


def flag_engines() -> tuple[EngineSpec, ...]:
    """The engines whose own flags a recipe or script writes (not the simulator)."""
    return tuple(spec for spec in engines() if spec.known_flags)


def env_prefixes() -> tuple[str, ...]:
    """The environment-variable prefixes of every engine."""
    return tuple(prefix for spec in engines() for prefix in spec.env_prefixes)
