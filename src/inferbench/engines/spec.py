"""What inferbench knows about one serving engine: the contract each engine module fills.

One module per engine (`vllm.py`, `sglang.py`, `trtllm.py`, `atom.py`, `sim.py`, or one of
another package that registers its own) defines one `EngineSpec`; everything else asks the
registry (`inferbench.engines.registry`) instead of keeping a table keyed by engine name. A
field that does not apply to an engine is named in its `not_applicable` with the reason; the
contract test holds every engine to this.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, Protocol

from inferbench.engines.layout import WorkerLayout
from inferbench.engines.server import EngineArgs, ServerCommand
from inferbench.engines.simprofile import SimProfile, SimReaders
from inferbench.engines.values import FlagGetter

_SCRIPT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


class Limit(StrEnum):
    """A limit of one worker that the checks compare with the workload it serves."""

    MAX_MODEL_LEN = "max-model-len"  # longest sequence, prompt + output
    MAX_NUM_SEQS = "max-num-seqs"  # requests one scheduler runs at once
    CUDAGRAPH = "cudagraph"  # largest batch captured in a CUDA graph
    SPECULATIVE = "speculative"  # speculative decoding


class ServerBuilder(Protocol):
    """The argv (plus env and files) of one single-node server for `args`. `job_file` and
    `python` serve the simulator, which runs inferbench itself."""

    def __call__(self, args: EngineArgs, *, job_file: str, python: str | None) -> ServerCommand: ...


@dataclass(frozen=True)
class CacheTiers:
    """One counter family that splits prompt tokens by where their KV came from."""

    metric: str
    label: str
    gpu: str  # the label value of hits in the GPU cache
    external: str  # ... of hits in the host tier or a KV connector
    computed: str | None = None  # ... of tokens prefilled (None: the family counts hits only)


@dataclass(frozen=True)
class CacheMetricNames:
    """The engine's Prometheus names for its prefix cache (`/metrics`), as its exporter writes
    them; `None`: the engine does not export that series. Counters are named without
    `_total`."""

    prefix: str  # every metric of the engine starts with it (`vllm:`): how a scrape is told
    prompt_tokens: str
    queried_tokens: str | None  # prompt tokens looked up in the GPU cache (None: all prompts)
    hit_tokens: str  # GPU-cache hits (vLLM), or hits of every tier (SGLang's family)
    tiers: CacheTiers
    external_queries: str | None  # a KV connector's lookups (vLLM)
    external_hits: str | None
    hit_rate_gauge: str | None  # the engine's own hit-rate gauge
    offload_bytes_gpu_to_cpu: str | None
    offload_bytes_cpu_to_gpu: str | None
    gpu_kv_usage: tuple[str, ...]  # gauges, in lookup order (a fraction of the KV pool)
    cpu_kv_usage: str | None  # a fraction gauge
    cpu_kv_tokens: tuple[str, str] | None  # (used, total) token gauges of the host tier


@dataclass(frozen=True)
class ScriptNames:
    """How a benchmark script starts the engine: the commands the tree-script stubs stand in
    for while `plan` and `run` read what the script would start."""

    commands: tuple[str, ...]  # executables that start its server (`vllm`, `trtllm-serve`)
    modules: tuple[str, ...]  # `python3 -m <package>[.<module>]` packages that start a server
    # servers a script starts beside the engine (its router): recorded as tools, kept up
    services: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # each name becomes a stub's file name and a `case` pattern of a shell script
        for name in (*self.commands, *self.modules, *self.services):
            if not _SCRIPT_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is no plain command or package name")


@dataclass(frozen=True)
class EngineSpec:
    """One serving engine, as every stage of inferbench sees it."""

    key: str  # `--engine` value, flag-table file prefix, the simulator's engine key
    display: str  # how messages name it
    # every `framework` / recipe `backend.type` that runs this engine's kernels (Dynamo and
    # llm-d fronts included); the simulator and the checks read these
    aliases: tuple[str, ...]
    # the master `framework` values whose single-node server inferbench starts as this engine
    serve_frameworks: tuple[str, ...]
    # long flags a check may ask about: a written prefix of more than one of these is
    # ambiguous (argparse would refuse it) and never matches
    known_flags: frozenset[str]
    flag_aliases: Mapping[str, str]  # other spellings the engine accepts -> the known flag
    limit_flags: Mapping[Limit, tuple[str, ...]]  # the flags that set each limit, in order
    # the batch limit is the whole worker's, shared by its attention-DP ranks (SGLang); else
    # each DP rank's scheduler admits the full limit (vLLM, TRT-LLM)
    worker_wide_batch: bool
    flag_case: Literal["kebab", "snake"]  # how its config files write flags
    # flags matched exactly as declared (pydantic fields, click options), no argparse prefixes
    exact_flags: bool
    # argparse extras the engine's parser has: `--no-<flag>` for a boolean (vLLM's
    # BooleanOptionalAction) and `--<flag>.<key>` for a field of a JSON-valued flag
    negated_flags: bool
    dotted_flags: bool
    release_images: tuple[str, ...]  # image repositories its own releases are published under
    layout: Callable[[FlagGetter], WorkerLayout]  # its flags -> the worker's layout
    server: ServerBuilder  # the single-node server's command line
    health_path: str  # where the server says it is ready
    sim_flags: Mapping[str, str]  # simulator pool field -> the flag that sets it
    cache_metrics: CacheMetricNames | None
    env_prefixes: tuple[str, ...]  # environment variables the engine reads (kept in env.json)
    script: ScriptNames | None  # how a tree's benchmark script starts it
    # how the simulator costs it (None: costed as `registry.SIM_STAND_IN`, said in the plan,
    # the summary and outcome.json) and what it reads from its flags beyond `sim_flags`
    sim_profile: SimProfile | None
    sim_readers: SimReaders | None
    not_applicable: Mapping[str, str] = field(default_factory=dict)  # field -> why not

    def spelled(self, name: str) -> str:
        """A flag as the engine's config files write it: `speculative_config` for TRT-LLM."""
        from inferbench.engines.values import normalize_flag

        flag = normalize_flag(name)
        return flag.replace("-", "_") if self.flag_case == "snake" else flag

    def batch_schedulers(self, dp: int) -> int:
        """Schedulers in one worker of `dp` attention-DP ranks that each admit the limit."""
        return 1 if self.worker_wide_batch else dp

    def batch_limit(self, per_rank: int, dp: int) -> int:
        """The batch-limit flag value that lets each of `dp` attention-DP ranks run
        `per_rank`."""
        return per_rank * dp // self.batch_schedulers(dp)
