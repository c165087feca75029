"""Master files for the expansion tests, loaded through the real config loader."""

from __future__ import annotations

from pathlib import Path

from inferbench.config.master import MasterConfig, load_masters
from inferbench.matrix.expand import ExpandContext, NodeHardware

MASTER = """
dsr1-fp8-h200-vllm:
  image: vllm/vllm-openai:v0.10.2
  model: deepseek-ai/DeepSeek-R1
  model-prefix: dsr1
  runner: h200
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
      - isl: 1024
        osl: 1024
        search-space:
          - {tp: 8, conc-start: 4, conc-end: 100}
      - isl: 8192
        osl: 1024
        search-space:
          - {tp: 8, conc-start: 4, conc-end: 64}
          - {tp: 4, ep: 4, dp-attn: true, conc-list: [16, 128]}
dsr1-fp4-b200-sglang:
  image: lmsysorg/sglang:v0.5.0
  model: nvidia/DeepSeek-R1-FP4
  model-prefix: dsr1
  runner: b200
  precision: fp4
  framework: sglang
  multinode: false
  router: {name: sglang-router, version: "0.2.1"}
  scenarios:
    fixed-seq-len:
      - isl: 1024
        osl: 8192
        search-space:
          - {tp: 4, spec-decoding: mtp, conc-list: [8, 32]}
minimaxm3-fp4-b200-dynamo-vllm:
  image: vllm/vllm-openai:v0.11.0
  model: nvidia/MiniMax-M3-NVFP4
  model-prefix: minimaxm3
  runner: b200-multinode
  precision: fp4
  framework: dynamo-vllm
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  scenarios:
    fixed-seq-len:
      - isl: 8192
        osl: 1024
        search-space:
          - conc-list: [2048]
            prefill:
              num-worker: 2
              tp: 2
              ep: 2
              dp-attn: true
              additional-settings:
                - "CONFIG_FILE=recipes/vllm/minimax-m3/b200-fp4/8k1k/2p1d-dep2-dep8-8k1k.yaml"
            decode:
              num-worker: 1
              tp: 8
              ep: 8
              dp-attn: true
              additional-settings: ["DECODE_NODES=1"]
          - conc-list: [8, 64, 512]
            prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true,
                      additional-settings: ["CONFIG_FILE=recipes/x.yaml:override_a"]}
            decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}
kimik3-fp4-gb300-dynamo-agentic:
  image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1
  model: moonshotai/Kimi-K3
  model-prefix: kimik3
  runner: "cluster:gb300-nv"
  precision: fp4
  framework: dynamo-vllm
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  scenarios:
    agentic-coding:
      - dram-utilization: 1
        search-space:
          - conc-list: [16, 64]
            kv-offloading: dram
            kv-offload-backend: {name: lmcache}
            prefill: {num-worker: 1, tp: 2, ep: 2, dp-attn: true,
                      additional-settings: ["CONFIG_FILE=recipes/k.yaml"]}
            decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}
gptoss-fp4-gb300-agentic:
  image: vllm/vllm-openai:v0.11.0
  model: openai/gpt-oss-120b
  model-prefix: gptoss
  runner: "cluster:gb300-nv"
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
      - dram-utilization: 0.5
        search-space:
          - {tp: 2, kv-offloading: dram, kv-offload-backend: {name: lmcache, version: "0.3"},
             conc-list: [4, 32]}
          - {tp: 1, kv-offloading: none, spec-decoding: mtp, conc-list: [8]}
"""


def write_masters(tmp: Path, text: str = MASTER) -> dict[str, MasterConfig]:
    path = tmp / "configs" / "nvidia-master.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return load_masters([path])


def _hardware(label: str) -> NodeHardware | None:
    if "gb300" in label:
        return NodeHardware(gpus_per_node=4, available_cpu_dram_mib=1_000_000)
    return None


CONTEXT = ExpandContext(
    runner_labels=frozenset({"h200", "b200", "b200-multinode", "cluster:gb300-nv"}),
    hardware=_hardware,
    resolve_recipe=lambda p: (
        "benchmarks/multi_node/srt-slurm-recipes/" + p.removeprefix("recipes/")
    ),
)
