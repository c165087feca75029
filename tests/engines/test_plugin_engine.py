"""A new engine is one module: a throwaway engine in a temporary package, registered by its
package's entry point, is planned, simulated and stubbed like the built-in ones, with no file
of inferbench touched."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from inferbench.cli.main import main
from inferbench.engines import Engine, EngineSpec, engine, find_engine, registry
from inferbench.launch.treescript.stubs import write_stubs
from launch.script_tree import write_tree

from . import test_contract as contract

# the whole engine: what an engine module under inferbench/engines/ would hold
TOY_ENGINE = '''
"""Toy: a throwaway serving engine (`toy-serve MODEL --port N --tp N`)."""

from inferbench.engines import (
    EngineArgs, EngineSpec, Limit, ScriptNames, ServerCommand, SimProfile, SimReaders,
)
from inferbench.engines.layout import Spelling, WorkerLayout
from inferbench.engines.simprofile import eplb_slots, speculative_config
from inferbench.engines.values import FlagGetter, count_flag


def layout(get: FlagGetter) -> WorkerLayout:
    tp = count_flag(get("tp"))
    return WorkerLayout(tp, tp, 1, 1, spelling=Spelling.ENGINE_FLAGS)


def server(args: EngineArgs, *, job_file: str = "", python: str | None = None) -> ServerCommand:
    argv = ("toy-serve", args.model, "--port", str(args.port), "--tp", str(args.tp))
    argv += ("--max-seqs", str(args.max_num_seqs))
    return ServerCommand(argv=argv, health_path=SPEC.health_path)


SPEC = EngineSpec(
    key="toy",
    display="Toy",
    aliases=("toy", "dynamo-toy"),
    serve_frameworks=("toy",),
    known_flags=frozenset({"tp", "max-len", "max-seqs", "graph-bs", "speculative-config"}),
    flag_aliases={"tensor-parallel-size": "tp"},
    limit_flags={
        Limit.MAX_MODEL_LEN: ("max-len",),
        Limit.MAX_NUM_SEQS: ("max-seqs",),
        Limit.CUDAGRAPH: ("graph-bs",),
        Limit.SPECULATIVE: ("speculative-config",),
    },
    worker_wide_batch=False,
    flag_case="kebab",
    exact_flags=False,
    negated_flags=False,
    dotted_flags=False,
    release_images=("example/toy",),
    layout=layout,
    server=server,
    health_path="/ready",
    sim_flags={"max_num_batched_tokens": "max-tokens"},
    cache_metrics=None,
    env_prefixes=("TOY_",),
    script=ScriptNames(commands=("toy-serve",), modules=("toy_serving",)),
    sim_profile=SimProfile(
        memory="total",
        memory_flag="mem",
        default_memory_fraction=0.9,
        activation_reserve_gb=1.0,
        step_overhead_s=2.0e-3,
        layer_overhead_s=2.0e-5,
        sources={"memory": "a throwaway engine: vLLM's rule, for the test"},
    ),
    sim_readers=SimReaders(speculative_config, eplb_slots, unmodelled={}),
    not_applicable={"cache_metrics": "a throwaway engine exports no Prometheus metrics at all"},
)
'''

# a sweep tree whose one job runs the toy engine, single node, on a GPU the simulator knows
MASTER = """\
llama-bf16-h200-toy:
  image: example/toy:1.0
  model: meta-llama/Llama-3.1-8B-Instruct
  model-prefix: llama
  runner: h200
  precision: bf16
  framework: toy
  multinode: false
  scenarios:
    fixed-seq-len:
      - isl: 1024
        osl: 128
        search-space:
          - {tp: 1, conc-list: [4]}
"""
RUNNERS = """\
labels:
  h200: [h200-nv_0]
hardware:
  h200: {gpus-per-node: 8, available-cpu-dram-mib: 1900000}
"""


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[EngineSpec]:
    """The toy engine's package on sys.path, found through its entry point (as an installed
    package would be), and gone again after the test."""
    site = tmp_path / "site"
    (site / "toy_engine").mkdir(parents=True)
    (site / "toy_engine" / "__init__.py").write_text(TOY_ENGINE)
    dist = site / "toy_engine-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-engine\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[inferbench.engines]\ntoy = toy_engine:SPEC\n")
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        registry.discover()
        yield engine("toy")
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("toy_engine", None)
        registry.discover()


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out + out.err


def test_a_registered_engine_is_planned_simulated_and_stubbed(
    toy: EngineSpec,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    assert find_engine("dynamo-toy") is toy and Engine("toy") == "toy"
    contract.test_every_engine_fills_every_field_or_says_why_not(toy)  # the contract holds it
    contract.test_flag_knowledge_is_consistent(toy)
    contract.test_every_engine_builds_a_server_command(toy)
    contract.test_every_engine_is_costed_by_its_own_profile_or_says_whose(toy)

    # plan: the engine module's own server command, and `--engine toy` is a choice
    tree = tmp_path / "tree"
    (tree / "configs").mkdir(parents=True)
    (tree / "configs" / "nvidia-master.yaml").write_text(MASTER)
    (tree / "configs" / "runners.yaml").write_text(RUNNERS)
    (tree / "perf-changelog.yaml").write_text("[]\n")
    code, out = _cli(capsys, "plan", "*", "--root", str(tree))
    assert code == 0, out
    assert "engine=toy" in out
    assert "toy-serve meta-llama/Llama-3.1-8B-Instruct --port 8000 --tp 1 --max-seqs 4" in out
    assert "health http://127.0.0.1:8000/ready" in out
    code, out = _cli(capsys, "plan", "*", "--root", str(tree), "--engine", "toy")
    assert code == 0 and "engine=toy" in out, out

    # run --engine sim: the simulator costs the job by the toy engine's own profile
    runs = tmp_path / "runs"
    code, out = _cli(capsys, "run", "--root", str(tree), "--engine", "sim", "--runs-dir", str(runs))
    assert code == 0, out
    assert "costed as" not in out
    (job,) = [p for p in runs.glob("*/*") if (p / "job.json").is_file()]
    outcome = json.loads((job / "outcome.json").read_text())
    assert outcome["status"] == "completed" and outcome["costed_as"] is None
    assert [p["status"] for p in outcome["points"]] == ["passed"]
    server_log = (job / "logs" / "server.log").read_text()
    assert "1x h200" in server_log and server_log.rstrip().endswith(", toy")

    # the tree-script stubs stand in for its command and its `python3 -m` package
    stubs = tmp_path / "bin"
    write_stubs(stubs, "/usr/bin:/bin")
    assert "record engine" in (stubs / "toy-serve").read_text()
    assert "toy_serving|toy_serving.*" in (stubs / "python3").read_text()


def test_a_tree_script_that_starts_a_registered_engine_is_planned_through_it(
    toy: EngineSpec,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The script runs under the stubs and its `toy-serve` is recorded as its engine (without
    a stub the script would die on a command this machine does not have)."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    tree = tmp_path / "tree"
    write_tree(tree, server_cmd="toy-serve $MODEL --port $PORT --tp $TP")
    master = tree / "configs" / "nvidia-master.yaml"
    master.write_text(master.read_text().replace("framework: vllm", "framework: toy"))
    (tree / "perf-changelog.yaml").write_text("[]\n")
    code, out = _cli(capsys, "plan", "*", "--root", str(tree))
    assert code == 0, out
    assert "## script benchmarks/single_node/fixed_seq_len/llama_fp8_gpua.sh" in out
    assert "engine=toy" in out
    assert "toy-serve meta-llama/Llama-3.1-8B-Instruct --port 8888 --tp 1" in out
    assert "warning" not in out
