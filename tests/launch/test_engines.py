"""Engine command builders and plans: exact argv, DEP spellings, and no shell injection."""

from __future__ import annotations

import subprocess

import pytest

from inferbench.core.errors import InputError
from inferbench.launch.deployment import deployment_from_dicts
from inferbench.launch.plan import Engine
from inferbench.launch.planner import PlanOptions, local_plan, slurm_plan
from inferbench.launch.site import SlurmSite

from .conftest import job_dict


def _argv(engine: Engine, **job: object) -> list[str]:
    dep = deployment_from_dicts([job_dict(**job)])
    return list(local_plan(dep, engine).processes[0].argv)


def test_vllm_tp_argv() -> None:
    argv = _argv(Engine("vllm"), tp=2, conc=64)
    assert argv[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
    flags = dict(zip(argv[3::2], argv[4::2], strict=False))
    assert flags["--tensor-parallel-size"] == "2"
    assert flags["--max-model-len"] == "2304"
    assert flags["--max-num-seqs"] == "64"
    assert "--data-parallel-size" not in argv and "--enable-expert-parallel" not in argv


@pytest.mark.parametrize("tp", [8, 1])  # both DEP spellings: tp=N and tp=1, ep=N
def test_dep_spellings_give_one_layout(tp: int) -> None:
    argv = _argv(Engine("vllm"), tp=tp, ep=8, **{"dp-attn": True}, conc=256)
    assert argv[argv.index("--tensor-parallel-size") + 1] == "1"
    assert argv[argv.index("--data-parallel-size") + 1] == "8"
    assert "--enable-expert-parallel" in argv
    assert argv[argv.index("--max-num-seqs") + 1] == "32"  # 256 spread over 8 ranks
    assert argv[argv.index("--max-cudagraph-capture-size") + 1] == "32"


def test_sglang_dep_argv() -> None:
    argv = _argv(Engine("sglang"), tp=8, ep=8, **{"dp-attn": True}, conc=64)
    assert argv[1:3] == ["-m", "sglang.launch_server"]
    assert argv[argv.index("--model-path") + 1] == "meta-llama/Llama-3.1-8B-Instruct"
    assert argv[argv.index("--tp") + 1] == "8"
    assert argv[argv.index("--dp") + 1] == "8"
    assert argv[argv.index("--ep") + 1] == "8"
    assert "--enable-dp-attention" in argv
    assert argv[argv.index("--cuda-graph-max-bs") + 1] == "8"


def test_trtllm_argv_and_options_file() -> None:
    dep = deployment_from_dicts([job_dict(tp=4, ep=4, conc=16)])
    plan = local_plan(dep, Engine("trtllm"))
    argv = list(plan.processes[0].argv)
    assert argv[:2] == ["trtllm-serve", "meta-llama/Llama-3.1-8B-Instruct"]
    assert argv[argv.index("--tp_size") + 1] == "4"
    assert argv[argv.index("--ep_size") + 1] == "4"
    assert argv[argv.index("--max_seq_len") + 1] == "2304"
    (options,) = plan.files
    assert (
        "max_batch_size: 16" in options.content and "enable_attention_dp: false" in options.content
    )


def test_sim_plan_uses_port_zero_and_the_job_file(dep: object) -> None:
    plan = local_plan(dep, Engine.SIM)  # type: ignore[arg-type]
    proc = plan.processes[0]
    assert proc.port == 0 and proc.health_url is None and proc.ready_pattern
    assert proc.argv[1:5] == ("-m", "inferbench.cli.main", "sim", "serve")
    assert proc.argv[proc.argv.index("--job") + 1] == "job.json"
    assert [p.concurrency for p in plan.bench.points] == [1, 2, 4]
    assert [p.num_prompts for p in plan.bench.points] == [10, 20, 40]


def test_unknown_framework_falls_back_to_the_simulator() -> None:
    dep = deployment_from_dicts([job_dict(framework="tilert")])
    assert local_plan(dep).engine is Engine.SIM
    assert local_plan(deployment_from_dicts([job_dict()])).engine is Engine("vllm")


def test_atom_plan_as_the_tree_scripts_start_it() -> None:
    """ATOM takes --server-port and no host; with DEP8 it gets -tp 8 and both DP switches."""
    job = job_dict(framework="atom", tp=8, ep=8, **{"dp-attn": True})
    plan = local_plan(deployment_from_dicts([job]))
    argv = plan.processes[0].argv
    assert plan.engine is Engine("atom")
    assert argv[:3] == ("python3", "-m", "atom.entrypoints.openai_server")
    assert argv[argv.index("--server-port") + 1] == "8000" and "--host" not in argv
    assert argv[argv.index("--tensor-parallel-size") + 1] == "8"
    assert "--enable-dp-attention" in argv and "--enable-expert-parallel" in argv


def test_multinode_job_refuses_a_local_gpu_engine() -> None:
    job = job_dict(
        conc=[64, 128],
        prefill={"num-worker": 2, "tp": 2, "ep": 2, "dp-attn": True},
        decode={"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": True},
    )
    for key in ("tp", "pp", "ep", "dp-attn", "dcp-size", "pcp-size"):
        job.pop(key)
    dep = deployment_from_dicts([job])
    assert dep.multinode and dep.concurrencies == (64, 128)
    with pytest.raises(InputError, match="srtctl"):
        local_plan(dep, Engine("vllm"))
    assert local_plan(dep, Engine.SIM).engine is Engine.SIM


def test_plan_is_deterministic_json(dep: object) -> None:
    a = local_plan(dep, Engine("vllm")).to_json()  # type: ignore[arg-type]
    assert a == local_plan(dep, Engine("vllm")).to_json()  # type: ignore[arg-type]


EVIL = "x; rm -rf / #$(touch /tmp/inferbench-pwned)`id`"


def test_malicious_model_cannot_inject(tmp_path: object) -> None:
    dep = deployment_from_dicts([job_dict(model=EVIL)])
    for engine in (Engine("vllm"), Engine("sglang"), Engine("trtllm")):
        proc = local_plan(dep, engine).processes[0]
        assert EVIL in proc.argv  # one argv element, never split or interpreted
        # the rendered shell line, run by a real shell, hands the value back verbatim
        line = proc.shell_line().replace(proc.argv[0], "printf '%s\\n'", 1)
        out = subprocess.run(["bash", "-c", line], capture_output=True, text=True, check=True)
        assert EVIL in out.stdout.splitlines()


def test_sbatch_script_quotes_everything(tmp_path: object) -> None:
    dep = deployment_from_dicts([job_dict(model=EVIL, image="nvcr.io/nvidia/x:1; reboot")])
    site = SlurmSite(partition="gpu; rm -rf /", gpus_per_node=8, container_runtime="pyxis")
    job_dir = "/scratch/run dir/$(id)"
    plan = slurm_plan(dep, site, job_dir, Engine("vllm"), PlanOptions(port=8000))
    script = next(f for f in plan.files if f.name == "sbatch.sh").content
    assert "#SBATCH '--partition=gpu; rm -rf /'" in script
    assert "#SBATCH --gres=gpu:2" in script
    assert "cd '/scratch/run dir/$(id)' || exit 1" in script
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    argv = plan.processes[0].argv
    assert argv[:3] == ("srun", "--overlap", "--ntasks=1")
    assert "--container-image=nvcr.io#nvidia/x:1; reboot" in argv  # one element, pyxis form


def test_sbatch_requests_no_gpus_on_a_cpu_cluster(dep: object) -> None:
    plan = slurm_plan(dep, SlurmSite(), "/tmp/j", Engine("vllm"))  # type: ignore[arg-type]
    script = next(f for f in plan.files if f.name == "sbatch.sh").content
    assert "--gres" not in script
    assert plan.submit[:2] == ("sbatch", "--parsable")
    assert plan.processes[0].argv[0] == "vllm"  # no container runtime declared: bare process


def test_agentic_job_plans_a_replay() -> None:
    job = job_dict(**{"scenario-type": "agentic-coding", "kv-offloading": "none", "duration": 60})
    for key in ("isl", "osl", "max-model-len"):
        job.pop(key)
    dep = deployment_from_dicts([job])
    plan = local_plan(dep, Engine.SIM)
    assert plan.bench.agentic is not None and plan.bench.agentic.duration_s == 60
    assert dep.max_model_len == 131072  # an agentic job names no context length
