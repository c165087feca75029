"""`python -m sglang.launch_server` command line."""

from __future__ import annotations

from inferbench.config.engine_flags import batch_limit
from inferbench.launch.engines.common import EngineArgs, ServerCommand
from inferbench.launch.engines.offload import sglang_offload
from inferbench.launch.plan import Engine


def sglang_command(args: EngineArgs, *, python: str = "python3") -> ServerCommand:
    # SGLang's --tp is the GPU count of the server; DP attention splits attention inside it.
    tp_size = args.tp * args.dp
    argv = [python, "-m", "sglang.launch_server", "--model-path", args.model]
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
    argv += ["--max-running-requests", str(batch_limit(Engine.SGLANG, args.max_num_seqs, args.dp))]
    argv += ["--cuda-graph-max-bs", str(args.cudagraph_max_bs)]
    if args.offload is not None:
        argv += sglang_offload(args.offload, tp=tp_size).argv
    return ServerCommand(argv=tuple(argv))
