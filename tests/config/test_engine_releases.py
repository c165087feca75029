"""The engine flag tables: extracted from the engines' own argument definitions, and every
flag inferbench's single-node command lines write is one each known release accepts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from inferbench.config.engine_releases import (
    FlagTable,
    flag_tables,
    image_release,
    judge_against,
    judge_flag,
)
from inferbench.launch.deployment import deployment_from_dicts
from inferbench.launch.plan import Engine
from inferbench.launch.serverargs import build_server, engine_args

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tools/extract_engine_flags.py"


def test_every_table_names_its_source() -> None:
    tables = flag_tables()
    assert set(tables) == {"vllm", "sglang"}
    for releases in tables.values():
        for table in releases.values():
            assert table.repo.count("/") == 1 and table.ref.lstrip("v") == table.release
            assert len(table.flags) > 100


def test_the_release_comes_from_the_engines_own_image_tag() -> None:
    assert image_release("vllm", "vllm/vllm-openai:v0.20.1-ubuntu2404") == "0.20.1"
    assert image_release("sglang", "lmsysorg/sglang:v0.5.8.post1-cu130") == "0.5.8.post1"
    assert image_release("sglang", "lmsysorg/sglang:nightly-dev-cu13-20260805-211ee642") is None
    assert image_release("vllm", "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.1") is None
    # the ROCm builds are the same releases
    assert image_release("vllm", "vllm/vllm-openai-rocm:v0.27.1") == "0.27.1"
    rocm = "lmsysorg/sglang-rocm:v0.5.16-rocm720-mi35x-20260730"
    assert image_release("sglang", rocm) == "0.5.16"
    assert image_release("sglang", "rocm/sgl-dev:v0.5.16-rocm720") is None  # another project's


@pytest.mark.parametrize(
    ("image", "release"),
    [
        ("nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc14", "1.3.0rc14"),
        ("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc22.post1", "1.3.0rc22.post1"),
        ("nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc23.post1", "1.3.0rc23.post1"),
        # Dynamo runtimes carry a TRT-LLM whose release the tag does not name
        ("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post2", None),
        ("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.3.0-dev.1-cuda13", None),
    ],
)
def test_trtllm_release_images_name_their_release(image: str, release: str | None) -> None:
    assert image_release("trtllm", image) == release
    assert image_release("vllm", image) is None


def test_trtllm_names_are_matched_exactly() -> None:
    """LLM-API YAML keys are pydantic field names and click options take no prefixes: no
    `-` for `_`, no abbreviation, no case folding; a release without a table of its own is
    held to the union of every known one."""
    table = FlagTable(
        "trtllm", "9.9.9rc1", "NVIDIA/TensorRT-LLM", "v9.9.9rc1",
        frozenset({"max_batch_size", "max_num_tokens", "extra_llm_api_options", "tp_size"}),
    )  # fmt: skip
    union = table.flags | {"nvfp4_gemm_config"}
    for written in ("max_batch_size", "--max_batch_size", "--tp_size"):
        assert judge_against("trtllm", written, table, union).known, written
    for written in ("max-batch-size", "--max-batch-size", "max_batch", "--tp", "Max_Batch_Size"):
        verdict = judge_against("trtllm", written, table, union)
        assert not verdict.known and verdict.release == "9.9.9rc1", written
    assert judge_against("trtllm", "max_batch", table, union).closest == "max_batch_size"
    assert not judge_against("trtllm", "nvfp4_gemm_config", table, union).known
    unknown_release = judge_against("trtllm", "nvfp4_gemm_config", None, union)
    assert unknown_release.known and unknown_release.release is None
    # the argparse engines keep their spellings
    vllm = FlagTable("vllm", "1", "v/v", "v1", frozenset({"max-num-seqs"}))
    assert judge_against("vllm", "--max_num_seqs", vllm, vllm.flags).known
    assert judge_against("vllm", "--max-num", vllm, vllm.flags).known


def test_no_trtllm_table_means_no_trtllm_verdict() -> None:
    """No TRT-LLM table is proven against a release yet (docs/conformance.md): IB309 says
    nothing about TRT-LLM rather than judge it against an unidentified snapshot."""
    verdict = judge_flag(
        "trtllm", "max_batch_size", "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc14"
    )
    if "trtllm" in flag_tables():  # once a table lands, every release judges the key
        assert verdict is not None and verdict.known
    else:
        assert verdict is None


def _job(framework: str, image: str, **over: object) -> dict[str, object]:
    job: dict[str, object] = {
        "config-key": "k", "image": image, "model": "m/M", "model-prefix": "m",
        "precision": "fp8", "framework": framework, "runner": "h200", "isl": 1024,
        "osl": 1024, "tp": 4, "ep": 4, "dp-attn": True, "conc": 4,
        "pp": 1, "dcp-size": 1, "pcp-size": 1, "max-model-len": 2304, "exp-name": "m_1k1k",
    }  # fmt: skip
    job.update(over)
    return job


@pytest.mark.parametrize("engine", [Engine("vllm"), Engine("sglang")])
@pytest.mark.parametrize("shape", [{}, {"pp": 2}, {"dp-attn": False, "ep": 1}])
def test_single_node_flags_are_known_to_every_release(engine: Engine, shape: dict) -> None:
    """Every `--flag` of inferbench's command line, for each release inferbench has a
    table of (served name and staged weights included)."""
    image = {"vllm": "vllm/vllm-openai:v{}", "sglang": "lmsysorg/sglang:v{}"}[str(engine)]
    for release in flag_tables()[str(engine)]:
        dep = deployment_from_dicts([_job(str(engine), image.format(release), **shape)])
        argv = build_server(engine, engine_args(dep, model_path="/models/m"), job_file="j").argv
        flags = [a for a in argv if a.startswith("--")]
        assert flags
        for flag in flags:
            verdict = judge_flag(str(engine), flag, dep.image)
            assert verdict is not None and verdict.known, (release, flag)
            assert verdict.release == release


def _extract(engine: str, release: str, source: Path, repo: str) -> dict[str, Any]:
    """The table tools/extract_engine_flags.py prints for `source`."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), engine, release, str(source)]
        + ["--repo", repo, "--ref", f"v{release}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    table: dict[str, Any] = yaml.safe_load(done.stdout)
    return table


def test_the_extraction_script_reads_flag_names_only(tmp_path: Path) -> None:
    source = tmp_path / "src/sglang/srt/server_args.py"
    source.parent.mkdir(parents=True)
    source.write_text(
        "import dataclasses\n"
        "@dataclasses.dataclass\n"
        "class ServerArgs:\n"
        "    tp_size: int = 1\n"
        "    _private: int = 0\n"
        "    backend: str = Arg(cli_name='--fp4-gemm-backend', aliases=['--gemm'])\n"
        "def add_cli_args(parser):\n"
        "    parser.add_argument('--context-length', '--ctx', type=int)\n"
        "    parser.add_argument('positional')\n"
    )
    table = _extract("sglang", "9.9.9", tmp_path / "src", "sgl-project/sglang")
    assert table["source"] == {
        "repo": "sgl-project/sglang",
        "ref": "v9.9.9",
        "files": ["sglang/srt/server_args.py"],
        "obtained": "src",
        "extracted-by": "tools/extract_engine_flags.py",
    }
    assert table["flags"] == [
        "backend",
        "context-length",
        "ctx",
        "fp4-gemm-backend",
        "gemm",
        "tp-size",
    ]


def test_the_extraction_script_keeps_trtllm_names_verbatim(tmp_path: Path) -> None:
    """TRT-LLM: click options as declared and the LlmArgs field names (snake_case, the keys of
    --extra_llm_api_options YAML); a ClassVar is no field."""
    serve = tmp_path / "src/tensorrt_llm/commands/serve.py"
    args = tmp_path / "src/tensorrt_llm/llmapi/llm_args.py"
    serve.parent.mkdir(parents=True)
    args.parent.mkdir(parents=True)
    serve.write_text(
        "import click\n"
        "@click.command('serve')\n"
        "@click.argument('model')\n"
        "@click.option('--tp_size', type=int)\n"
        "@click.option('--config', '--extra_llm_api_options', 'config', default=None)\n"
        "def serve(model, tp_size, config): ...\n"
    )
    args.write_text(
        "from typing import ClassVar\n"
        "class BaseLlmArgs:\n"
        "    max_batch_size: int = 8\n"
        "    decoding_type: ClassVar[str] = 'x'\n"
        "class TorchLlmArgs(BaseLlmArgs):\n"
        "    cuda_graph_config: dict = None\n"
        "class KvCacheConfig:\n"
        "    free_gpu_memory_fraction: float = 0.9\n"
    )
    table = _extract("trtllm", "9.9.9rc1", tmp_path / "src", "NVIDIA/TensorRT-LLM")
    assert table["source"]["files"] == [
        "tensorrt_llm/commands/serve.py",
        "tensorrt_llm/llmapi/llm_args.py",
    ]
    assert table["flags"] == [
        "config",
        "cuda_graph_config",
        "extra_llm_api_options",
        "max_batch_size",
        "tp_size",
    ]
