"""Generate a synthetic InferenceX-scale benchmark tree for the check + sweep benchmark.

At scale 1 the tree has about as much as InferenceX today: ~220 master entries (single-node
vLLM/SGLang/TRT-LLM/ATOM on eight GPU types, multinode Dynamo disaggregated deployments, a few
agentic-coding entries), ~480 srt-slurm recipes behind the multinode entries, one cluster file
per multinode runner, a runner registry and a changelog naming every key, and ~2,000 jobs. Scale
k multiplies every part by k (new model prefixes), so the benchmark can show how time grows as
the tree doubles. The content is consistent by construction (recipes match their master entry
and cluster), so `inferbench check` has little to report and does its full work.

    python benchmarks/synth_tree.py OUT_DIR [--scale K] [--seed N]
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML

_YAML = YAML(typ="safe", pure=False)
_YAML.default_flow_style = False
_YAML.sort_base_mapping_type_on_output = False  # keep InferenceX's key order
RECIPE_ROOT = Path("benchmarks/multi_node/srt-slurm-recipes")
SEQS = ((1024, 1024), (8192, 1024), (1024, 8192))


@dataclass(frozen=True)
class Gpu:
    name: str
    vendor: str
    gpus_per_node: int
    dram_mib: int


GPUS = (
    Gpu("h100", "nvidia", 8, 2_000_000),
    Gpu("h200", "nvidia", 8, 2_000_000),
    Gpu("b200", "nvidia", 8, 2_000_000),
    Gpu("b300", "nvidia", 8, 3_000_000),
    Gpu("gb200", "nvidia", 4, 900_000),
    Gpu("gb300", "nvidia", 4, 900_000),
    Gpu("mi300x", "amd", 8, 2_000_000),
    Gpu("mi355x", "amd", 8, 2_000_000),
)
MULTINODE_GPUS = ("b200", "b300", "gb200", "gb300")
MODELS = (  # prefix, Hugging Face org/name stem, MoE?
    ("dsr1", "deepseek-ai/DeepSeek-R1", True),
    ("dsv4", "deepseek-ai/DeepSeek-V4", True),
    ("minimaxm3", "MiniMaxAI/MiniMax-M3", True),
    ("qwen3.5", "Qwen/Qwen3.5-235B-A22B", True),
    ("glm5.2", "zai-org/GLM-5.2", True),
    ("kimik3", "moonshotai/Kimi-K3", True),
    ("gptoss", "openai/gpt-oss-120b", True),
    ("llama3.3", "meta-llama/Llama-3.3-70B-Instruct", False),
)
FRAMEWORKS_NV = ("vllm", "sglang", "trt")
FRAMEWORKS_AMD = ("vllm", "sglang", "atom")
IMAGES = {
    "vllm": "vllm/vllm-openai:v0.11.2",
    "sglang": "lmsysorg/sglang:v0.5.4-cu129",
    "trt": "nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc2",
    "atom": "rocm/atom:v0.1.3-rocm7.0",
    "dynamo-vllm": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1",
    "dynamo-sglang": "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.6.1",
}


def _model_id(stem: str, precision: str) -> str:
    return f"nvidia/{stem.split('/')[1]}-NVFP4" if precision == "fp4" else stem


def _alias(prefix: str, precision: str) -> str:
    return f"{prefix.replace('.', '')}-{precision}"


def _seq_dir(isl: int, osl: int) -> str:
    return f"{isl // 1024}k{osl // 1024}k"


class Tree:
    def __init__(self, out: Path, rng: random.Random) -> None:
        self.out, self.rng = out, rng
        self.masters: dict[str, dict[str, object]] = {"nvidia": {}, "amd": {}}
        # gpu -> (model-prefix, precision, alias, model id)
        self.aliases: dict[str, set[tuple[str, str, str, str]]] = {}
        self.recipes = 0

    def write(self, rel: Path | str, data: object) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as handle:
            _YAML.dump(data, handle)

    # --- single-node -------------------------------------------------------------------------
    def single_node(self, prefix: str, stem: str, moe: bool, gpu: Gpu, framework: str) -> None:
        precision = self.rng.choice(("fp8", "fp4") if gpu.vendor == "nvidia" else ("fp8",))
        key = f"{prefix}-{precision}-{gpu.name}-{framework}"
        fixed = []
        for isl, osl in SEQS[: self.rng.choice((2, 2, 2, 2, 2, 3))]:
            tp = min(8, gpu.gpus_per_node)
            spaces: list[dict[str, object]] = [
                {"tp": tp, "conc-start": 4, "conc-end": self.rng.choice((32, 64, 64))}
            ]
            if moe and self.rng.random() < 0.15:
                spaces.append(
                    {"tp": tp, "ep": tp, "dp-attn": True, "conc-start": 32, "conc-end": 512}
                )
            if self.rng.random() < 0.1:
                spaces.append({"tp": tp // 2, "conc-list": [4, 16, 64]})
            fixed.append({"isl": isl, "osl": osl, "search-space": spaces})
        vendor = gpu.vendor
        self.masters[vendor][key] = {
            "image": IMAGES[framework],
            "model": _model_id(stem, precision),
            "model-prefix": prefix,
            "runner": gpu.name,
            "precision": precision,
            "framework": framework,
            "multinode": False,
            "scenarios": {"fixed-seq-len": fixed},
        }

    def agentic(self, prefix: str, stem: str, gpu: Gpu) -> None:
        key = f"{prefix}-fp8-{gpu.name}-vllm-agentic"
        self.masters[gpu.vendor][key] = {
            "image": IMAGES["vllm"],
            "model": stem,
            "model-prefix": prefix,
            "runner": f"cluster:{gpu.name}-nv",
            "precision": "fp8",
            "framework": "vllm",
            "multinode": False,
            "scenarios": {
                "agentic-coding": [
                    {
                        "dram-utilization": 0.8,
                        "search-space": [
                            {"tp": 4, "kv-offloading": "none", "conc-list": [8, 16, 32]},
                            {
                                "tp": 8,
                                "kv-offloading": "dram",
                                "kv-offload-backend": {"name": "lmcache", "version": "0.3.9"},
                                "conc-list": [16, 64],
                            },
                        ],
                    }
                ]
            },
        }

    # --- multinode ---------------------------------------------------------------------------
    def multinode(self, prefix: str, stem: str, gpu: Gpu, framework: str) -> None:
        precision = "fp4"
        key = f"{prefix}-{precision}-{gpu.name}-{framework}"
        backend = framework.removeprefix("dynamo-")
        model_dir = prefix.replace(".", "")
        alias = _alias(prefix, precision)
        model = _model_id(stem, precision)
        self.aliases.setdefault(gpu.name, set()).add((prefix, precision, alias, model))
        fixed = []
        for isl, osl in SEQS[:2]:
            spaces = []
            for _ in range(self.rng.choice((4, 5, 5, 6))):
                space, recipe_rel, recipe = self._topology(
                    gpu, backend, model_dir, alias, _model_id(stem, precision), isl, osl, framework
                )
                if (self.out / recipe_rel).exists():
                    continue
                self.write(recipe_rel, recipe)
                self.recipes += 1
                spaces.append(space)
            if spaces:
                fixed.append({"isl": isl, "osl": osl, "search-space": spaces})
        self.masters["nvidia"][key] = {
            "image": IMAGES[framework],
            "model": _model_id(stem, precision),
            "model-prefix": prefix,
            "runner": f"{gpu.name}-multinode",
            "precision": precision,
            "framework": framework,
            "multinode": True,
            "disagg": True,
            "kv-p2p-transfer": "nixl",
            "scenarios": {"fixed-seq-len": fixed},
        }

    def _topology(
        self,
        gpu: Gpu,
        backend: str,
        model_dir: str,
        alias: str,
        model: str,
        isl: int,
        osl: int,
        framework: str,
    ) -> tuple[dict[str, object], Path, dict[str, object]]:
        gpn = gpu.gpus_per_node
        pg = self.rng.choice((2, 4, gpn))
        dg = self.rng.choice((gpn, gpn, 2 * gpn)) if gpn == 4 else self.rng.choice((4, 8, 8))
        pw = self.rng.choice([n for n in (1, 2, 4) if (n * pg) % gpn == 0] or [gpn // pg])
        dw = self.rng.choice([n for n in (1, 2) if (n * dg) % gpn == 0] or [1])
        top = self.rng.choice((256, 512, 1024, 2048, 4096))
        concs = sorted({top // 8, top // 2, top}) if self.rng.random() < 0.5 else [top]
        name = f"{pw}p{dw}d-dep{pg}-dep{dg}-{_seq_dir(isl, osl)}-c{top}"
        rel = RECIPE_ROOT / backend / model_dir / f"{gpu.name}-fp4" / _seq_dir(isl, osl)
        recipe_path = rel / f"{name}.yaml"
        settings = [f"CONFIG_FILE=recipes/{recipe_path.relative_to(RECIPE_ROOT).as_posix()}"]
        space = {
            "conc-list": concs,
            "prefill": {
                "num-worker": pw,
                "tp": pg,
                "ep": pg,
                "dp-attn": True,
                "additional-settings": settings,
            },
            "decode": {"num-worker": dw, "tp": dg, "ep": dg, "dp-attn": True},
        }
        recipe = self._recipe(
            gpu, backend, alias, model, framework, (pw, pg), (dw, dg), (isl, osl), concs
        )
        recipe["name"] = f"{model_dir}-{backend}-disagg-{gpu.name}-{name}"
        return space, recipe_path, recipe

    def _recipe(
        self,
        gpu: Gpu,
        backend: str,
        alias: str,
        model: str,
        framework: str,
        prefill: tuple[int, int],
        decode: tuple[int, int],
        seq: tuple[int, int],
        concs: list[int],
    ) -> dict[str, object]:
        (pw, pg), (dw, dg), (isl, osl) = prefill, decode, seq
        gpn = gpu.gpus_per_node
        mml = isl + osl + 256
        seqs = max(64, 2 ** math.ceil(math.log2(max(1, max(concs) // dg))))
        if backend == "vllm":
            common = {
                "tensor-parallel-size": 1,
                "enable-expert-parallel": True,
                "max-model-len": mml,
            }
            engine = {
                "prefill": {**common, "data-parallel-size": pg},
                "decode": {
                    **common,
                    "data-parallel-size": dg,
                    "max-num-seqs": seqs,
                    "max-num-batched-tokens": 16384,
                    "max-cudagraph-capture-size": seqs,
                },
            }
        else:
            common = {"enable-dp-attention": True, "context-length": mml}
            engine = {
                "prefill": {**common, "tp-size": pg, "dp-size": pg, "ep-size": pg},
                "decode": {
                    **common,
                    "tp-size": dg,
                    "dp-size": dg,
                    "ep-size": dg,
                    "max-running-requests": seqs * dg,
                    "cuda-graph-max-bs": seqs,
                },
            }
        return {
            "name": "",
            "model": {"path": alias, "container": IMAGES[framework], "precision": "fp4"},
            "resources": {
                "gpu_type": gpu.name,
                "gpus_per_node": gpn,
                "prefill_nodes": pw * pg // gpn,
                "decode_nodes": dw * dg // gpn,
                "prefill_workers": pw,
                "decode_workers": dw,
                "gpus_per_prefill": pg,
                "gpus_per_decode": dg,
            },
            "backend": {"type": backend, f"{backend}_config": engine},
            "benchmark": {
                "type": "sa-bench",
                "isl": isl,
                "osl": osl,
                "concurrencies": "x".join(str(c) for c in concs),
                "req_rate": "inf",
            },
        }

    # --- registry, clusters, changelog -------------------------------------------------------
    def finish(self) -> None:
        for vendor, entries in self.masters.items():
            self.write(f"configs/{vendor}-master.yaml", entries)
        labels: dict[str, list[str]] = {}
        for gpu in GPUS:
            labels[gpu.name] = [f"{gpu.name}-{i:02d}" for i in range(4)]
            labels[f"cluster:{gpu.name}-nv"] = [f"{gpu.name}-nv-01"]
            if gpu.name in MULTINODE_GPUS:
                labels[f"{gpu.name}-multinode"] = [f"{gpu.name}-slurm-01"]
        hardware = {
            g.name: {"gpus-per-node": g.gpus_per_node, "available-cpu-dram-mib": g.dram_mib}
            for g in GPUS
        }
        self.write("configs/runners.yaml", {"labels": labels, "hardware": hardware})
        for gpu in GPUS:
            if gpu.name in MULTINODE_GPUS:
                self.write(f"clusters/{gpu.name}-slurm.yaml", self._cluster(gpu))
        keys = [k for entries in self.masters.values() for k in entries]
        changelog = [
            {
                "config-keys": keys[i : i + 3],
                "description": [f"Add {', '.join(keys[i : i + 3])}"],
                "pr-link": f"https://github.com/example/bench/pull/{1000 + i}",
            }
            for i in range(0, len(keys), 3)
        ]
        self.write("perf-changelog.yaml", changelog)

    def _cluster(self, gpu: Gpu) -> dict[str, object]:
        store = [
            {
                "model": model,
                "model-prefix": prefix,
                "precision": precision,
                "path": f"/models/{alias}",
                "alias": alias,
            }
            for prefix, precision, alias, model in sorted(self.aliases.get(gpu.name, set()))
        ]
        return {
            "name": f"{gpu.name}-slurm",
            "runners": [f"{gpu.name}-multinode"],
            "gpu": gpu.name,
            "gpus-per-node": gpu.gpus_per_node,
            "scheduler": {"type": "slurm", "account": "bench", "partition": "batch"},
            "srt-slurm": {"ref": "v0.4.2"},
            "models": store,
        }


def generate(out: Path, scale: int = 1, seed: int = 7) -> Tree:
    """Write the tree under `out` (emptied first) and return the generator with its counts."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rng = random.Random(seed)
    tree = Tree(out, rng)
    for copy in range(scale):
        for prefix, stem, moe in MODELS:
            name = prefix if copy == 0 else f"{prefix}x{copy}"
            for gpu in GPUS:
                frameworks = FRAMEWORKS_NV if gpu.vendor == "nvidia" else FRAMEWORKS_AMD
                for framework in frameworks:
                    if rng.random() < 0.75:
                        tree.single_node(name, stem, moe, gpu, framework)
                if gpu.name in MULTINODE_GPUS and moe:
                    for framework in ("dynamo-vllm", "dynamo-sglang"):
                        tree.multinode(name, stem, gpu, framework)
            tree.agentic(name, stem, GPUS[1])
    tree.finish()
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    tree = generate(args.out, args.scale, args.seed)
    entries = sum(len(e) for e in tree.masters.values())
    print(f"{args.out}: {entries} master entries, {tree.recipes} recipes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
