"""`trtllm-serve` command line plus its extra LLM-API options file."""

from __future__ import annotations

from inferbench.config.engine_flags import batch_limit
from inferbench.launch.engines.common import EngineArgs, ServerCommand
from inferbench.launch.plan import Engine

EXTRA_OPTIONS_FILE = "trtllm-extra-llm-api-options.yaml"


def trtllm_command(args: EngineArgs, *, rendered_dir: str = "rendered") -> ServerCommand:
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
    argv += ["--max_batch_size", str(batch_limit(Engine.TRTLLM, args.max_num_seqs, args.dp))]
    argv += ["--max_seq_len", str(args.max_model_len)]
    argv += ["--extra_llm_api_options", f"{rendered_dir}/{EXTRA_OPTIONS_FILE}"]
    options = (
        f"enable_attention_dp: {'true' if args.dp_attention else 'false'}\n"
        "cuda_graph_config:\n"
        "  enable_padding: true\n"
        f"  max_batch_size: {args.cudagraph_max_bs}\n"
    )
    return ServerCommand(argv=tuple(argv), files={EXTRA_OPTIONS_FILE: options}, api_model=api_model)
