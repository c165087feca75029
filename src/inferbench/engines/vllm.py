"""vLLM: `vllm serve`, its flags, its layout, its metrics."""

from __future__ import annotations

from inferbench.engines.layout import Spelling, WorkerLayout
from inferbench.engines.offload import vllm_offload
from inferbench.engines.server import EngineArgs, ServerCommand
from inferbench.engines.simprofile import SimProfile, SimReaders, eplb_slots, speculative_config
from inferbench.engines.spec import CacheMetricNames, CacheTiers, EngineSpec, Limit, ScriptNames
from inferbench.engines.values import FlagGetter, count_flag, switch_on


def layout(get: FlagGetter) -> WorkerLayout:
    """tensor/data/pipeline/context-parallel sizes; enable-expert-parallel spans TP x DP."""
    tp = count_flag(get("tensor-parallel-size"))
    dp = count_flag(get("data-parallel-size"))
    pp = count_flag(get("pipeline-parallel-size"))
    pcp = count_flag(get("prefill-context-parallel-size"))
    dcp = count_flag(get("decode-context-parallel-size"))
    ep = tp * dp if switch_on(get("enable-expert-parallel")) else 1
    return WorkerLayout(tp * dp * pp * pcp, tp, dp, ep, pp, dcp, pcp, Spelling.ENGINE_FLAGS)


def server(args: EngineArgs, *, job_file: str = "", python: str | None = None) -> ServerCommand:
    argv = ["vllm", "serve", args.model, "--host", args.host, "--port", str(args.port)]
    if args.served_name:
        argv += ["--served-model-name", args.served_name]
    argv += ["--tensor-parallel-size", str(args.tp)]
    if args.pp > 1:
        argv += ["--pipeline-parallel-size", str(args.pp)]
    if args.dp > 1:
        argv += ["--data-parallel-size", str(args.dp)]
    if args.expert_parallel:
        argv.append("--enable-expert-parallel")
    argv += ["--max-model-len", str(args.max_model_len)]
    argv += ["--max-num-seqs", str(SPEC.batch_limit(args.max_num_seqs, args.dp))]
    argv += ["--max-cudagraph-capture-size", str(args.cudagraph_max_bs)]
    if args.offload is None:
        argv.append("--no-enable-prefix-caching")  # random prompts; keep runs comparable
        return ServerCommand(argv=tuple(argv))
    extra = vllm_offload(args.offload, tp=args.tp, gpus=args.gpus, port=args.port)
    return ServerCommand(argv=(*argv, *extra.argv), env=extra.env, files=extra.files)


# the simulator's costing of vLLM; the overheads are starting values only, fitted per GPU by
# the default calibration
SIM_PROFILE = SimProfile(
    memory="total",
    memory_flag="gpu-memory-utilization",
    default_memory_fraction=0.9,
    activation_reserve_gb=1.0,
    step_overhead_s=1.5e-3,
    layer_overhead_s=2.0e-5,
    sources={
        "memory": 'vLLM engine arguments: gpu_memory_utilization is "the fraction of GPU memory '
        'to be used for the model executor", weights, activations (measured by a profiling '
        "run) and KV cache together; default 0.9",
        "overheads": "starting values only; fitted per GPU by the default calibration",
    },
)
SIM_READERS = SimReaders(
    speculation=speculative_config,
    expert_slots=eplb_slots,
    unmodelled={
        "decode-context-parallel-size": "decode context parallelism",
        "prefill-context-parallel-size": "prefill context parallelism",
    },
)


SPEC = EngineSpec(
    key="vllm",
    display="vLLM",
    aliases=("vllm", "dynamo-vllm", "llm-d-vllm", "llmd-vllm"),
    serve_frameworks=("vllm",),
    known_flags=frozenset(
        {
            "tensor-parallel-size",
            "data-parallel-size",
            "data-parallel-size-local",
            "data-parallel-rank",
            "pipeline-parallel-size",
            "decode-context-parallel-size",
            "prefill-context-parallel-size",
            "enable-expert-parallel",
            "enable-eplb",
            "max-model-len",
            "max-num-seqs",
            "max-num-batched-tokens",
            "max-cudagraph-capture-size",
            "cuda-graph-sizes",
            "speculative-config",
            "kv-transfer-config",
            "gpu-memory-utilization",
            "kv-cache-dtype",
            "quantization",
            "enforce-eager",
            "compilation-config",
        }
    ),
    flag_aliases={
        "tp": "tensor-parallel-size",
        "dp": "data-parallel-size",
        "pp": "pipeline-parallel-size",
    },  # fmt: skip
    # sources: `vllm serve --help`
    limit_flags={
        Limit.MAX_MODEL_LEN: ("max-model-len",),
        Limit.MAX_NUM_SEQS: ("max-num-seqs",),
        Limit.CUDAGRAPH: ("max-cudagraph-capture-size", "cuda-graph-sizes", "compilation-config"),
        Limit.SPECULATIVE: ("speculative-config",),
    },
    worker_wide_batch=False,
    flag_case="kebab",
    negated_flags=True,
    dotted_flags=True,
    exact_flags=False,
    # the ROCm images are the same release built for AMD GPUs (same argument parser)
    release_images=("vllm/vllm-openai", "vllm/vllm-openai-rocm"),
    layout=layout,
    server=server,
    health_path="/health",
    sim_flags={
        "max_num_batched_tokens": "max-num-batched-tokens",
        "gpu_memory_utilization": "gpu-memory-utilization",
        "block_size": "block-size",
        "stream_interval": "stream-interval",
        "chunked_prefill": "enable-chunked-prefill",
        # not vLLM flags: a job's sim-flags carry TRT-LLM's batch waiting in this spelling
        "batch_wait_iters": "batch-wait-timeout-iters",
        "batch_wait_tokens_ratio": "batch-wait-max-tokens-ratio",
    },
    # vLLM's Prometheus exporter (vllm/v1/metrics/loggers.py)
    cache_metrics=CacheMetricNames(
        prefix="vllm:",
        prompt_tokens="vllm:prompt_tokens",
        queried_tokens="vllm:prefix_cache_queries",
        hit_tokens="vllm:prefix_cache_hits",
        tiers=CacheTiers(
            "vllm:prompt_tokens_by_source",
            "source",
            gpu="local_cache_hit",
            external="external_kv_transfer",
            computed="local_compute",
        ),
        external_queries="vllm:external_prefix_cache_queries",
        external_hits="vllm:external_prefix_cache_hits",
        hit_rate_gauge=None,
        offload_bytes_gpu_to_cpu="vllm:kv_offload_bytes_gpu_to_cpu",
        offload_bytes_cpu_to_gpu="vllm:kv_offload_bytes_cpu_to_gpu",
        gpu_kv_usage=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
        cpu_kv_usage="vllm:cpu_kv_cache_usage_perc",
        cpu_kv_tokens=None,
    ),
    env_prefixes=("VLLM_",),
    script=ScriptNames(commands=("vllm",), modules=("vllm",), services=("vllm-router",)),
    sim_profile=SIM_PROFILE,
    sim_readers=SIM_READERS,
)
