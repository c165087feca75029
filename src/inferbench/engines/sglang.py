"""SGLang: `python -m sglang.launch_server`, its flags, its layout, its metrics."""

from __future__ import annotations

from inferbench.engines.layout import Spelling, WorkerLayout
from inferbench.engines.offload import sglang_offload
from inferbench.engines.server import EngineArgs, ServerCommand
from inferbench.engines.simprofile import DraftFlags, KvAdmission, SimProfile, SimReaders
from inferbench.engines.spec import CacheMetricNames, CacheTiers, EngineSpec, Limit, ScriptNames
from inferbench.engines.values import FlagGetter, count_flag, flag_int, switch_on


def layout(get: FlagGetter) -> WorkerLayout:
    """tp-size is the worker's GPUs; dp-size with enable-dp-attention splits attention."""
    tp_size = count_flag(get("tp-size"))
    dp = count_flag(get("dp-size"))
    pp = count_flag(get("pp-size"))
    ep = count_flag(get("ep-size"))
    if switch_on(get("enable-dp-attention")) and dp > 1:
        return WorkerLayout(
            tp_size * pp, max(tp_size // dp, 1), dp, ep, pp, spelling=Spelling.ENGINE_FLAGS
        )
    return WorkerLayout(tp_size * dp * pp, tp_size, dp, ep, pp, spelling=Spelling.ENGINE_FLAGS)


def server(args: EngineArgs, *, job_file: str = "", python: str | None = None) -> ServerCommand:
    # SGLang's --tp is the GPU count of the server; DP attention splits attention inside it.
    tp_size = args.tp * args.dp
    argv = [python or "python3", "-m", "sglang.launch_server", "--model-path", args.model]
    if args.served_name:
        argv += ["--served-model-name", args.served_name]
    argv += ["--host", args.host, "--port", str(args.port), "--tp", str(tp_size)]
    if args.pp > 1:
        argv += ["--pp-size", str(args.pp)]
    if args.dp_attention:
        argv += ["--dp", str(args.dp), "--enable-dp-attention"]
    if args.expert_parallel:
        argv += ["--ep", str(args.ep)]
    argv += ["--context-length", str(args.max_model_len)]
    argv += ["--max-running-requests", str(SPEC.batch_limit(args.max_num_seqs, args.dp))]
    argv += ["--cuda-graph-max-bs", str(args.cudagraph_max_bs)]
    if args.offload is not None:
        argv += sglang_offload(args.offload, tp=tp_size).argv
    return ServerCommand(argv=tuple(argv))


def speculation(get: FlagGetter) -> DraftFlags | None:
    """speculative-algorithm, with its steps (or its draft tokens, the first one included)."""
    algo = get("speculative-algorithm")
    if not algo:
        return None
    steps = flag_int(get("speculative-num-steps"))
    tokens = flag_int(get("speculative-num-draft-tokens"))
    return DraftFlags(str(algo).lower(), steps or (tokens - 1 if tokens and tokens > 1 else None))


def expert_slots(get: FlagGetter, experts: int) -> int:
    """ep-num-redundant-experts (placed and dispatched by its EPLB algorithm) or enable-eplb."""
    extra = flag_int(get("ep-num-redundant-experts")) or 0
    return experts + extra if extra > 0 or switch_on(get("enable-eplb")) else 0


SIM_PROFILE = SimProfile(
    memory="total",
    memory_flag="mem-fraction-static",
    default_memory_fraction=0.88,
    activation_reserve_gb=0.0,
    step_overhead_s=1.5e-3,
    layer_overhead_s=2.0e-5,
    kv_admission=KvAdmission(
        init_ratio=0.7, min_ratio_factor=0.14, decay_steps=600, clip_tokens=4096, retract_steps=20
    ),
    sources={
        "kv_admission": "SGLang PrefillAdder (srt/managers/schedule_policy.py): a request is "
        "admitted while the free KV exceeds its prompt + min(max_new_tokens, 4096) + "
        "new_token_ratio x each running request's min(remaining, 4096), first come first "
        "served, stopping at the first that does not fit; new_token_ratio starts at "
        "SGLANG_INIT_NEW_TOKEN_RATIO 0.7, decays over SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600 "
        "decode steps to 0.14 of that (SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR), and after a "
        "retraction is reset to (tokens decoded + SGLANG_RETRACT_DECODE_STEPS 20 per request) / "
        "the requests' max_new_tokens (srt/environ.py defaults)",
        "memory": 'SGLang server arguments: mem_fraction_static is "the fraction of the memory '
        'used for static allocation (model weights and KV cache memory pool)"; activations and '
        "CUDA graphs live in the rest",
        "overheads": "starting values only; fitted per GPU by the default calibration",
    },
)
SIM_READERS = SimReaders(
    speculation=speculation,
    expert_slots=expert_slots,
    unmodelled={
        "enable-two-batch-overlap": "two-batch overlap: communication is not hidden behind compute",
        "enable-dp-lm-head": "a DP-sharded LM head",
        "enable-single-batch-overlap": "single-batch overlap",
    },
)


SPEC = EngineSpec(
    key="sglang",
    display="SGLang",
    aliases=("sglang", "dynamo-sglang", "sglang-disagg"),
    serve_frameworks=("sglang",),
    known_flags=frozenset(
        {
            "tp-size",
            "dp-size",
            "ep-size",
            "pp-size",
            "enable-dp-attention",
            "context-length",
            "max-running-requests",
            "max-total-tokens",
            "chunked-prefill-size",
            "cuda-graph-max-bs",
            "cuda-graph-bs",
            "speculative-algorithm",
            "speculative-num-steps",
            "speculative-eagle-topk",
            "speculative-num-draft-tokens",
            "speculative-draft-model-path",
            "mem-fraction-static",
            "moe-a2a-backend",
            "disaggregation-mode",
            "kv-cache-dtype",
            "quantization",
        }
    ),
    flag_aliases={
        "tensor-parallel-size": "tp-size",
        "data-parallel-size": "dp-size",
        "expert-parallel-size": "ep-size",
        "pipeline-parallel-size": "pp-size",
        "tp": "tp-size",
        "dp": "dp-size",
        "ep": "ep-size",
        "pp": "pp-size",
    },
    # sources: SGLang's ServerArgs
    limit_flags={
        Limit.MAX_MODEL_LEN: ("context-length",),
        Limit.MAX_NUM_SEQS: ("max-running-requests",),
        Limit.CUDAGRAPH: ("cuda-graph-max-bs", "cuda-graph-bs"),
        Limit.SPECULATIVE: ("speculative-algorithm",),
    },
    worker_wide_batch=True,  # max-running-requests is the whole worker's
    flag_case="kebab",
    negated_flags=False,
    dotted_flags=False,
    exact_flags=False,
    release_images=("lmsysorg/sglang", "lmsysorg/sglang-rocm"),
    layout=layout,
    server=server,
    health_path="/health",
    sim_flags={
        "max_num_batched_tokens": "chunked-prefill-size",
        "gpu_memory_utilization": "mem-fraction-static",
        "block_size": "page-size",
        "stream_interval": "stream-interval",
    },
    # SGLang's metrics exporter (srt/metrics/collector.py), with --enable-metrics
    cache_metrics=CacheMetricNames(
        prefix="sglang:",
        prompt_tokens="sglang:prompt_tokens",
        queried_tokens=None,
        hit_tokens="sglang:cached_tokens",
        tiers=CacheTiers("sglang:cached_tokens", "cache_source", gpu="device", external="host"),
        external_queries=None,
        external_hits=None,
        hit_rate_gauge="sglang:cache_hit_rate",
        offload_bytes_gpu_to_cpu=None,
        offload_bytes_cpu_to_gpu=None,
        gpu_kv_usage=("sglang:token_usage",),
        cpu_kv_usage=None,
        cpu_kv_tokens=("sglang:hicache_host_used_tokens", "sglang:hicache_host_total_tokens"),
    ),
    env_prefixes=("SGLANG_",),
    # sglang_router: SGLang's own router, started beside its servers
    script=ScriptNames(commands=("sglang",), modules=("sglang", "sglang_router")),
    sim_profile=SIM_PROFILE,
    sim_readers=SIM_READERS,
)
