"""TensorRT-LLM: `trtllm-serve` plus its LLM-API options file, its flags, its layout."""

from __future__ import annotations

from inferbench.engines.layout import Spelling, WorkerLayout
from inferbench.engines.server import EngineArgs, ServerCommand
from inferbench.engines.simprofile import (
    SimProfile,
    SimReaders,
    as_mapping,
    key_of,
    speculative_config,
)
from inferbench.engines.spec import EngineSpec, Limit, ScriptNames
from inferbench.engines.values import FlagGetter, count_flag, flag_int, switch_on

EXTRA_OPTIONS_FILE = "trtllm-extra-llm-api-options.yaml"
RENDERED_DIR = "rendered"  # where a plan's files are written, relative to the server's cwd


def layout(get: FlagGetter) -> WorkerLayout:
    """tensor_parallel_size counts the GPUs; enable_attention_dp makes each an attention rank."""
    tp = count_flag(get("tensor_parallel_size"))
    pp = count_flag(get("pipeline_parallel_size"))
    ep = count_flag(get("moe_expert_parallel_size"))
    if switch_on(get("enable_attention_dp")) and tp > 1:
        return WorkerLayout(tp * pp, 1, tp, ep, pp, spelling=Spelling.ENGINE_FLAGS)
    return WorkerLayout(tp * pp, tp, 1, ep, pp, spelling=Spelling.ENGINE_FLAGS)


def server(args: EngineArgs, *, job_file: str = "", python: str | None = None) -> ServerCommand:
    # CUDA graphs and attention DP are LLM-API options, not flags: they go in a YAML file.
    tp_size = args.tp * args.dp
    argv = ["trtllm-serve", args.model, "--host", args.host, "--port", str(args.port)]
    # No --served_model_name: trtllm-serve gained a served-name option only in 2026 (TRT-LLM
    # pull request 11711) and no flag table proves which 1.3.0rcN images have it. Staged
    # weights are asked for by the path the server was given, as InferenceX's launchers do.
    api_model = args.model if args.served_name else None
    argv += ["--backend", "pytorch", "--tp_size", str(tp_size), "--pp_size", str(args.pp)]
    if args.expert_parallel:
        argv += ["--ep_size", str(args.ep)]
    argv += ["--max_batch_size", str(SPEC.batch_limit(args.max_num_seqs, args.dp))]
    argv += ["--max_seq_len", str(args.max_model_len)]
    argv += ["--extra_llm_api_options", f"{RENDERED_DIR}/{EXTRA_OPTIONS_FILE}"]
    options = (
        f"enable_attention_dp: {'true' if args.dp_attention else 'false'}\n"
        "cuda_graph_config:\n"
        "  enable_padding: true\n"
        f"  max_batch_size: {args.cudagraph_max_bs}\n"
    )
    return ServerCommand(argv=tuple(argv), files={EXTRA_OPTIONS_FILE: options}, api_model=api_model)


def expert_slots(get: FlagGetter, experts: int) -> int:
    """moe_config.load_balancer.num_slots: the slots per layer (never fewer than the experts)."""
    moe = as_mapping(get("moe-config")) or {}
    slots = flag_int(key_of(as_mapping(key_of(moe, "load_balancer")) or {}, "num_slots"))
    return max(slots, experts) if slots else 0


SIM_PROFILE = SimProfile(
    memory="after_weights",
    memory_flag="free_gpu_memory_fraction",
    default_memory_fraction=0.9,
    activation_reserve_gb=1.0,
    step_overhead_s=1.0e-3,
    layer_overhead_s=2.0e-5,
    chunked_prefill=False,
    sources={
        "memory": "TensorRT-LLM KvCacheConfig: free_gpu_memory_fraction is the fraction of the "
        "GPU memory free after the model is loaded that the KV cache takes; default 0.9",
        "chunked_prefill": "TensorRT-LLM LLM API arguments (tensorrt_llm/llmapi/llm_args.py): "
        "enable_chunked_prefill defaults to False; its micro-batch scheduler then schedules a "
        "context request whole, and stops at the first one that does not fit max_num_tokens",
        "batch_wait": "TensorRT-LLM PyExecutor._waiting_requests: with batch_wait_timeout_iters "
        "and batch_wait_max_tokens_ratio set (both default 0, off), context requests are held "
        "while generation requests run, until the step's tokens reach ratio x max_num_tokens or "
        "the hold has lasted timeout iterations; not with attention DP",
        "overheads": "starting values only; fitted per GPU by the default calibration",
    },
)
SIM_READERS = SimReaders(speculation=speculative_config, expert_slots=expert_slots, unmodelled={})


SPEC = EngineSpec(
    key="trtllm",
    display="TRT-LLM",
    aliases=(
        "trtllm",
        "trt",
        "trt-llm",
        "tensorrt-llm",
        "dynamo-trt",
        "dynamo-trtllm",
        "trtllm_serve",
    ),  # fmt: skip
    serve_frameworks=("trt", "trtllm"),
    known_flags=frozenset(
        {
            "tensor-parallel-size",
            "pipeline-parallel-size",
            "moe-expert-parallel-size",
            "enable-attention-dp",
            "max-batch-size",
            "max-num-tokens",
            "max-seq-len",
            "speculative-config",
            "cuda-graph-config",
            "kv-cache-config",
        }
    ),
    flag_aliases={"tp-size": "tensor-parallel-size", "ep-size": "moe-expert-parallel-size"},
    # sources: TRT-LLM's LlmArgs
    limit_flags={
        Limit.MAX_MODEL_LEN: ("max-seq-len",),
        Limit.MAX_NUM_SEQS: ("max-batch-size",),
        Limit.CUDAGRAPH: ("cuda-graph-config",),
        Limit.SPECULATIVE: ("speculative-config",),
    },
    worker_wide_batch=False,
    flag_case="snake",  # LLM-API YAML keys are pydantic field names
    negated_flags=False,
    dotted_flags=False,
    exact_flags=True,  # pydantic fields and click options: no prefixes, no `-` for `_`
    release_images=(
        "nvidia/tensorrt-llm/release",
    ),  # nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc14
    layout=layout,
    server=server,
    health_path="/health",
    sim_flags={
        "max_num_batched_tokens": "max-num-tokens",
        "gpu_memory_utilization": "kv-cache-config.free-gpu-memory-fraction",
        "block_size": "kv-cache-config.tokens-per-block",
        "chunked_prefill": "enable-chunked-prefill",
        "batch_wait_iters": "batch-wait-timeout-iters",
        "batch_wait_tokens_ratio": "batch-wait-max-tokens-ratio",
    },
    cache_metrics=None,
    env_prefixes=("TRTLLM_", "TLLM_"),
    # the tree's TRT-LLM scripts start trtllm-serve through `mpirun -n 1`
    script=ScriptNames(commands=("trtllm-serve", "mpirun"), modules=("tensorrt_llm",)),
    sim_profile=SIM_PROFILE,
    sim_readers=SIM_READERS,
    not_applicable={
        "cache_metrics": "trtllm-serve's /metrics is per-iteration JSON, not Prometheus prefix-"
        "cache counters",
    },
)
