"""Engine flag maps of a recipe (`vllm_config.decode: {...}`), looked up as the engine would.

Engines parse their flags with argparse, which accepts a unique prefix of a long flag
(`--speculative-algo` for `--speculative-algorithm`) and, in YAML configs, both
`max-model-len` and `max_model_len`. `EngineFlags.get` applies the same rules, so a check asks
for the full flag name and finds the abbreviated one. Which flags exist and set which limit
is each engine's own knowledge (`EngineSpec.known_flags`, `.flag_aliases`, `.limit_flags`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from inferbench.engines.layout import WorkerLayout
from inferbench.engines.registry import find_engine
from inferbench.engines.spec import Limit
from inferbench.engines.values import FlagGetter, normalize_flag

_MIN_PREFIX = 3


@functools.cache
def _known(engine: str) -> frozenset[str]:
    spec = find_engine(engine)
    return spec.known_flags if spec is not None else frozenset()


@functools.cache
def _aliases(engine: str) -> Mapping[str, str]:
    spec = find_engine(engine)
    return spec.flag_aliases if spec is not None else {}


def limit_flags(engine: str, limit: Limit) -> tuple[str, ...]:
    """The flags that set `limit` for `engine`, in lookup order (the first given wins)."""
    spec = find_engine(engine)
    return spec.limit_flags.get(limit, ()) if spec is not None else ()


@dataclass(frozen=True)
class FlagHit:
    """A flag found in the map: the key as written, its canonical name, its value."""

    written: str
    name: str
    value: Any


@functools.lru_cache(maxsize=4096)
def _known_with_prefix(engine: str, prefix: str) -> int:
    """How many of the engine's known flags start with `prefix` (abbreviation lookups repeat
    the same few prefixes thousands of times on a real tree)."""
    return sum(1 for flag in _known(engine) if flag.startswith(prefix))


@dataclass(frozen=True)
class EngineFlags:
    """A read-only engine flag map (one of prefill / decode / aggregated)."""

    engine: str
    flags: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        canon: dict[str, str] = {}
        aliases = _aliases(self.engine)
        for written in self.flags:
            name = normalize_flag(str(written))
            canon.setdefault(aliases.get(name, name), str(written))
        object.__setattr__(self, "_canon", canon)
        # find's answers: the rules ask each map for the same few dozen names many times
        object.__setattr__(self, "_found", {})

    def find(self, name: str) -> FlagHit | None:
        """The flag `name` (full name, any spelling), or a unique abbreviation of it."""
        found: dict[str, FlagHit | None] = self.__dict__["_found"]
        if name in found:
            return found[name]
        hit = found[name] = self._find(name)
        return hit

    def _find(self, name: str) -> FlagHit | None:
        canon: dict[str, str] = self.__dict__["_canon"]
        wanted = normalize_flag(name)
        wanted = _aliases(self.engine).get(wanted, wanted)
        written = canon.get(wanted)
        if written is None:
            written = self._abbreviation(wanted, canon)
        if written is None:
            return None
        return FlagHit(written, wanted, self.flags[written])

    def first(self, names: Iterable[str]) -> FlagHit | None:
        """The first of `names` that is given a value (not null)."""
        for name in names:
            hit = self.find(name)
            if hit is not None and hit.value is not None:
                return hit
        return None

    def limit(self, limit: Limit) -> FlagHit | None:
        """The flag that sets `limit` for this engine, when one is given."""
        return self.first(limit_flags(self.engine, limit))

    def get(self, name: str, default: Any = None) -> Any:
        hit = self.find(name)
        return default if hit is None else hit.value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.flags)

    def __len__(self) -> int:
        return len(self.flags)

    def _abbreviation(self, wanted: str, canon: dict[str, str]) -> str | None:
        known = _known(self.engine)
        extra = 0 if wanted in known else 1  # `wanted` itself is one flag with the prefix
        hits = [
            written
            for name, written in canon.items()
            if len(name) >= _MIN_PREFIX
            and wanted.startswith(name)
            and name != wanted
            and name not in known
            and _known_with_prefix(self.engine, name) + extra == 1
        ]
        return hits[0] if len(hits) == 1 else None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.flags)


def engine_layout(engine: str, get: FlagGetter) -> WorkerLayout:
    """The layout an engine's flags describe; `engine` is a recipe `backend.type`."""
    spec = find_engine(engine)
    if spec is None or not spec.known_flags:
        raise ValueError(f"unknown backend type {engine!r}")
    return spec.layout(get)


def batch_schedulers(engine: str, dp: int) -> int:
    """Schedulers in one worker of `dp` attention-DP ranks that each admit the batch limit."""
    spec = find_engine(engine)
    return spec.batch_schedulers(dp) if spec is not None else dp


def display_name(engine: str) -> str:
    spec = find_engine(engine)
    return spec.display if spec is not None else engine


def snake_case(engine: str) -> bool:
    """Whether the engine's config files write flags as snake_case keys (TRT-LLM's YAML)."""
    spec = find_engine(engine)
    return spec is not None and spec.flag_case == "snake"
