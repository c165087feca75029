"""ATOM (AMD's inference engine, `python3 -m atom.entrypoints.openai_server`): the flags the
InferenceX tree's ATOM launch scripts write, its layout, its command line.

No flag table of an ATOM release ships yet; the flags here are the ones the tree's scripts
use (`benchmarks/single_node/*/*_atom*.sh`), with vLLM-style names (ATOM's argument parser
follows vLLM's engine arguments)."""

from __future__ import annotations

from inferbench.engines.layout import Spelling, WorkerLayout
from inferbench.engines.server import EngineArgs, ServerCommand
from inferbench.engines.simprofile import DraftFlags, SimReaders
from inferbench.engines.spec import EngineSpec, Limit, ScriptNames
from inferbench.engines.values import FlagGetter, count_flag, flag_int, switch_on


def layout(get: FlagGetter) -> WorkerLayout:
    """-tp counts the GPUs; enable-dp-attention makes each an attention rank;
    enable-expert-parallel spans them all."""
    tp = count_flag(get("tensor-parallel-size"))
    ep = tp if switch_on(get("enable-expert-parallel")) else 1
    if switch_on(get("enable-dp-attention")) and tp > 1:
        return WorkerLayout(tp, 1, tp, ep, spelling=Spelling.ENGINE_FLAGS)
    return WorkerLayout(tp, tp, 1, ep, spelling=Spelling.ENGINE_FLAGS)


def server(args: EngineArgs, *, job_file: str = "", python: str | None = None) -> ServerCommand:
    # ATOM binds all interfaces (the tree's scripts give it no host) and takes no served
    # name: staged weights are asked for by their path, as for TRT-LLM.
    argv = [python or "python3", "-m", "atom.entrypoints.openai_server", "--model", args.model]
    argv += ["--server-port", str(args.port), "--tensor-parallel-size", str(args.tp * args.dp)]
    if args.dp_attention:
        argv.append("--enable-dp-attention")
    if args.expert_parallel:
        argv.append("--enable-expert-parallel")
    argv += ["--max-model-len", str(args.max_model_len)]
    argv += ["--max-num-seqs", str(SPEC.batch_limit(args.max_num_seqs, args.dp))]
    api_model = args.model if args.served_name else None
    return ServerCommand(argv=tuple(argv), api_model=api_model)


def speculation(get: FlagGetter) -> DraftFlags | None:
    """`--method mtp --num-speculative-tokens N`, as the tree's ATOM scripts write it."""
    method = get("method")
    if not method:
        return None
    return DraftFlags(str(method).lower(), flag_int(get("num-speculative-tokens")))


def no_expert_slots(get: FlagGetter, experts: int) -> int:
    return 0  # the tree's ATOM scripts write no expert load balancing


SIM_READERS = SimReaders(speculation=speculation, expert_slots=no_expert_slots, unmodelled={})


SPEC = EngineSpec(
    key="atom",
    display="ATOM",
    aliases=("atom", "atom-disagg"),
    serve_frameworks=("atom",),
    known_flags=frozenset(
        {
            "tensor-parallel-size",
            "enable-expert-parallel",
            "enable-dp-attention",
            "max-model-len",
            "max-num-seqs",
            "max-num-batched-tokens",
            "cudagraph-capture-sizes",
            "gpu-memory-utilization",
            "kv-cache-dtype",
            "block-size",
            "method",
            "num-speculative-tokens",
        }
    ),
    flag_aliases={"tp": "tensor-parallel-size"},
    limit_flags={
        Limit.MAX_MODEL_LEN: ("max-model-len",),
        Limit.MAX_NUM_SEQS: ("max-num-seqs",),
        Limit.CUDAGRAPH: ("cudagraph-capture-sizes",),
        Limit.SPECULATIVE: ("method",),
    },
    worker_wide_batch=True,  # one scheduler per server, its DP-attention ranks share it
    flag_case="kebab",
    negated_flags=False,
    dotted_flags=False,
    exact_flags=False,
    release_images=("rocm/atom",),
    layout=layout,
    server=server,
    health_path="/health",
    sim_flags={
        "max_num_batched_tokens": "max-num-batched-tokens",
        "gpu_memory_utilization": "gpu-memory-utilization",
        "block_size": "block-size",
    },
    cache_metrics=None,
    env_prefixes=("ATOM_", "AITER_"),
    script=ScriptNames(commands=(), modules=("atom",)),
    sim_profile=None,
    sim_readers=SIM_READERS,
    not_applicable={
        "cache_metrics": "no Prometheus prefix-cache counters of ATOM are known",
        "sim_profile": "no measured memory rule or overheads of ATOM yet: the simulator costs "
        "it as vLLM, whose engine arguments its parser follows, and says so",
    },
)
