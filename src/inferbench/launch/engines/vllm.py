"""`vllm serve` command line."""

from __future__ import annotations

from inferbench.config.engine_flags import batch_limit
from inferbench.launch.engines.common import EngineArgs, ServerCommand
from inferbench.launch.engines.offload import vllm_offload
from inferbench.launch.plan import Engine


def vllm_command(args: EngineArgs) -> ServerCommand:
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
    argv += ["--max-num-seqs", str(batch_limit(Engine.VLLM, args.max_num_seqs, args.dp))]
    argv += ["--max-cudagraph-capture-size", str(args.cudagraph_max_bs)]
    if args.offload is None:
        argv.append("--no-enable-prefix-caching")  # random prompts; keep runs comparable
        return ServerCommand(argv=tuple(argv))
    extra = vllm_offload(args.offload, tp=args.tp, gpus=args.gpus, port=args.port)
    return ServerCommand(argv=(*argv, *extra.argv), env=extra.env, files=extra.files)
