"""Agentic jobs from the example tree: engine flags, plans, and a run on the simulator."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inferbench.core.errors import InputError
from inferbench.engines import Offload
from inferbench.engines.offload import sglang_offload, vllm_offload

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KEY = "llama3.1-8b-bf16-h200-vllm-agentic"


def _offload(backend: str | None, tier: str = "dram", gb: int = 400) -> Offload:
    return Offload(tier, backend, None, gb, 3600)


def test_vllm_backends_get_the_launchers_flags() -> None:
    none = vllm_offload(_offload(None, "none"), tp=4, gpus=4, port=8000)
    assert none.argv == ("--enable-prefix-caching",)
    native = vllm_offload(_offload("vllm-native"), tp=4, gpus=4, port=8000)
    assert native.argv[1:] == ("--kv_offloading_backend", "native", "--kv_offloading_size", "372")
    simple = vllm_offload(_offload("vllm-simple"), tp=4, gpus=4, port=8000)
    config = json.loads(simple.argv[2])
    assert config["kv_connector"] == "SimpleCPUOffloadConnector"
    assert config["kv_connector_extra_config"]["cpu_bytes_to_use_per_rank"] == 100 * 10**9
    assert simple.env == {"PYTHONHASHSEED": "42"}
    lmcache = vllm_offload(_offload("lmcache"), tp=4, gpus=4, port=8000)
    assert lmcache.env["LMCACHE_MAX_LOCAL_CPU_SIZE"] == "100"
    mooncake = vllm_offload(_offload("mooncake"), tp=4, gpus=4, port=8000)
    assert json.loads(mooncake.argv[2])["kv_connector"] == "MooncakeStoreConnector"
    store = json.loads(mooncake.files["mooncake_config.json"])
    assert store["global_segment_size"] == "100GB"
    assert store["master_server_address"] == "127.0.0.1:20000"
    with pytest.raises(InputError, match="not one vLLM takes"):
        vllm_offload(_offload("hicache"), tp=4, gpus=4, port=8000)
    with pytest.raises(InputError, match="positive total-cpu-dram-gb"):
        vllm_offload(_offload("vllm-native", gb=0), tp=4, gpus=4, port=8000)


def test_sglang_hicache_per_rank() -> None:
    flags = sglang_offload(_offload("hicache"), tp=8).argv
    assert "--enable-hierarchical-cache" in flags
    assert flags[flags.index("--hicache-size") + 1] == "50"
    assert sglang_offload(_offload(None, "none"), tp=8).argv == ()
    with pytest.raises(InputError, match="not one SGLang takes"):
        sglang_offload(_offload("vllm-native"), tp=8)


def _deployments() -> list:
    from inferbench.launch.sweep import load_deployments
    from inferbench.matrix.filters import SweepFilters

    _, deps = load_deployments(EXAMPLES, SweepFilters(config_keys=(KEY,)))
    return deps


def test_plans_of_the_example_carry_offload_and_duration() -> None:
    from inferbench.launch.plan import Engine
    from inferbench.launch.planner import PlanOptions, local_plan

    none, dram = sorted(_deployments(), key=lambda d: d.offload.tier != "none")
    plan = local_plan(dram, Engine("vllm"))
    argv = plan.processes[0].argv
    assert "--enable-prefix-caching" in argv and "--no-enable-prefix-caching" not in argv
    assert argv[argv.index("--kv_offloading_size") + 1] == str(
        dram.offload.total_cpu_dram_gb * 10**9 // 2**30
    )
    assert plan.bench.agentic is not None and plan.bench.agentic.duration_s == 3600
    assert plan.bench.agentic.max_model_len == 131072
    short = local_plan(none, Engine("vllm"), PlanOptions(agentic_duration_s=30))
    assert "--kv_offloading_backend" not in short.processes[0].argv
    assert short.bench.agentic is not None and short.bench.agentic.duration_s == 30


@pytest.mark.slow
def test_run_takes_the_agentic_example_to_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inferbench.cli.main import main
    from inferbench.results.ingest import ingest_paths
    from inferbench.results.pareto import series_key
    from inferbench.results.store import open_store

    runs = tmp_path / "runs"
    args = [
        "run",
        "--root",
        str(EXAMPLES),
        "--config-keys",
        KEY,
        "--engine",
        "sim",
        "--sim-realtime",
    ]
    args += ["--max-concurrency", "4", "--duration", "3", "--synth", "sessions=6,delay=0.2"]
    with pytest.raises(SystemExit) as info:
        main([*args, "--runs-dir", str(runs)])
    assert info.value.code == 0
    # stdout is not a terminal under pytest: a timestamped line per job start, point and end
    stamped = re.compile(r"^\d\d:\d\d:\d\d \+\d+s (.*)$")
    said = [m.group(1) for m in map(stamped.match, capsys.readouterr().out.splitlines()) if m]
    starts = [s for s in said if re.fullmatch(rf"job \d/\d {KEY}: started, \d+ points", s)]
    assert starts and len(starts) == int(starts[0].split("/")[1].split()[0])
    assert f"{KEY} conc 4: ok" in said and said[-1].startswith(f"{KEY}: completed")
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    files = sorted(run_dir.glob("*/results/conc4.json"))
    assert len(files) == 1  # the dram deployment starts at conc 8
    data = json.loads(files[0].read_text())
    block = data["inferbench"]["agentic"]
    assert block["requests"] > 0 and block["replay"]["lanes"] == 4
    assert block["window_s"] >= 3
    assert block["server"]["engine"] == "vllm" and block["server"]["prefix_cache_queries"] > 0
    assert data["inferbench"]["workload"]["kind"] == "trace"
    # aiperf's artifact files of the point, where InferenceX's post-processing reads them
    artifacts = files[0].with_suffix("") / "aiperf_artifacts"
    lines = (artifacts / "profile_export.jsonl").read_bytes().splitlines()
    assert len(lines) == block["requests"]
    aggregate = json.loads((artifacts / "profile_export_aiperf.json").read_text())
    assert aggregate["request_count"]["avg"] == data["completed"]
    server = json.loads((artifacts / "server_metrics_export.json").read_text())
    assert server["metrics"]["vllm:prefix_cache_queries"]["type"] == "counter"
    # the CSV beside it (benchmark_lib.sh checks both), the same figures row by row
    rows = (artifacts / "server_metrics_export.csv").read_text().splitlines()
    assert rows[0] == "metric,type,endpoint_url,labels,stat,value"
    assert any(r.startswith("vllm:prefix_cache_queries,counter,") for r in rows[1:])
    power = [files[0].with_name(f"power_conc4.{ext}") for ext in ("csv", "unavailable")]
    assert any(p.is_file() for p in power)  # sampled beside the replay, or why not
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    report = ingest_paths([run_dir], url)
    assert report.inserted == 1 and not report.skipped
    with open_store(url) as store:
        (stored,) = store.query()
    ident = stored.record.identity
    assert ident.dataset == "agentic-coding:synth:kv-none"
    assert ident.isl == data["inferbench"]["workload"]["mean_input"]
    assert "agentic synth kv-none" in series_key(stored.record).variant()
    assert stored.record.derived.energy is not None  # joules per token, or the reason none
    # the replay's own figures travel with the point, for the report's agentic view
    kept = stored.record.agentic
    assert kept is not None and kept.requests == block["requests"]
    assert [t.turn for t in kept.per_turn] == [t["turn"] for t in block["per_turn"]]
