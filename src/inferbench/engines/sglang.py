"""SGLang: `python -m sglang.launch_server`, its flags, its layout, its metrics."""

from __future__ import annotations

from inferbench.engines.layout import Spelling, WorkerLayout
from inferbench.engines.offload import sglang_offload
from inferbench.engines.server import EngineArgs, ServerCommand
from inferbench.engines.spec import CacheMetricNames, CacheTiers, EngineSpec, Limit
from inferbench.engines.values import FlagGetter, count_flag, switch_on


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
)
