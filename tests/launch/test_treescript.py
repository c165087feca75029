"""The tree's own benchmark script: found as the launchers find it, run under stubs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from inferbench.core.errors import InputError
from inferbench.launch.deployment import deployment_from_dicts
from inferbench.launch.planner import PlanOptions
from inferbench.launch.treescript import stubs
from inferbench.launch.treescript.capture import capture_script
from inferbench.launch.treescript.contract import result_filename, script_env
from inferbench.launch.treescript.exports import launcher_exports
from inferbench.launch.treescript.locate import (
    expand,
    find_script,
    launcher_candidates,
    launchers_for,
)
from inferbench.launch.treescript.planning import script_plan
from inferbench.launch.treescript.stage import Mounts, map_workspace

from .conftest import job_dict
from .script_tree import LAUNCHER, write_tree

LABELS = {"gpua": ("gpu-a_00", "gpu-b_00")}


def _dep(**over: object):  # type: ignore[no-untyped-def]
    base = dict(runner="gpua", framework="vllm", exp_name="llama_1k1k")
    base.update(over)
    return deployment_from_dicts([job_dict(**{k.replace("_", "-"): v for k, v in base.items()})])


def _env(dep, conc: int = 4) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return script_env(dep, conc, workspace="/workspace", runner_name="gpu-a_00")


def test_expand_follows_the_launchers_expansions() -> None:
    env = {"EXP_NAME": "dsr1_8k1k", "SUB": "", "P": "fixed_seq_len/"}
    assert expand("${EXP_NAME%%_*}_${P%/}-${SUB:-x}", env) == "dsr1_fixed_seq_len-x"
    assert expand('"${P#fixed_}"$EXP_NAME', env) == "seq_len/dsr1_8k1k"


def test_candidates_are_read_in_file_order() -> None:
    dep = _dep(framework="trt")
    got = launcher_candidates(LAUNCHER, _env(dep))
    base = "benchmarks/single_node/fixed_seq_len/llama_fp8_gpua"
    assert got == [f"{base}_trt.sh"]  # the tagged and the legacy name are the same for trt
    got = launcher_candidates(LAUNCHER, _env(_dep()))
    assert got == [f"{base}_vllm.sh", f"{base}.sh"]


def test_the_tagged_script_wins_then_the_historical_name(tmp_path: Path) -> None:
    write_tree(tmp_path)
    launchers = launchers_for(tmp_path, "gpua", LABELS)
    assert launchers == [("runners/launch_gpu-a.sh", "gpu-a_00")]  # gpu-b has no launcher
    choice = find_script(tmp_path, launchers, _env(_dep()))
    assert choice is not None
    assert choice.script == "benchmarks/single_node/fixed_seq_len/llama_fp8_gpua.sh"
    write_tree(tmp_path, name="llama_fp8_gpua_vllm.sh")
    choice = find_script(tmp_path, launchers, _env(_dep()))
    assert choice is not None and choice.script.endswith("llama_fp8_gpua_vllm.sh")
    assert find_script(tmp_path, launchers, _env(_dep(precision="fp4"))) is None


def test_an_unlisted_label_is_read_as_the_cluster_it_names(tmp_path: Path) -> None:
    write_tree(tmp_path)
    assert launchers_for(tmp_path, "cluster:gpu-a", {}) == [("runners/launch_gpu-a.sh", "gpu-a_0")]
    assert launchers_for(tmp_path, "gpu", {}) == [("runners/launch_gpu-a.sh", "gpu-a_0")]
    assert launchers_for(tmp_path, "h100", {}) == []


def test_a_script_outside_the_tree_is_refused(tmp_path: Path) -> None:
    tree, elsewhere = tmp_path / "tree", tmp_path / "elsewhere"
    script = write_tree(tree)
    elsewhere.mkdir()
    (elsewhere / "x.sh").write_text("echo hi\n")
    script.unlink()
    script.symlink_to(elsewhere / "x.sh")
    with pytest.raises(InputError, match="outside the benchmark tree"):
        find_script(tree, launchers_for(tree, "gpua", LABELS), _env(_dep()))


def test_result_filename_is_the_workflows() -> None:
    name = result_filename(_dep(), 4, "gpu-a_00")
    assert name == (
        "llama_1k1k_fp8_vllm_tp2-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc4_gpu-a_00"
    )


def test_workspace_is_mapped_as_a_path_only() -> None:
    text = "L=/workspace/server.log D=/workspace/ S=/sgl-workspace/x W=/workspace_x /workspace"
    assert map_workspace(text, "/r/ws") == (
        "L=/r/ws/server.log D=/r/ws/ S=/sgl-workspace/x W=/workspace_x /r/ws"
    )


def test_every_way_a_script_names_the_workspace_is_mapped() -> None:
    # benchmark_lib.sh's default and the dsv4 scripts' RESULT_DIR rewrite, beside the paths
    # that only look alike (a folder named workspace under another one)
    text = (
        'W="${INFMAX_CONTAINER_WORKSPACE:-/workspace}" [[ "$R" == /workspace/* ]] '
        "${R#/workspace/} -v $H:/workspace/ ~/workspace $HOME/workspace ${D}/workspace ./workspace"
    )
    assert map_workspace(text, "/r/ws") == (
        'W="${INFMAX_CONTAINER_WORKSPACE:-/r/ws}" [[ "$R" == /r/ws/* ]] '
        "${R#/r/ws/} -v $H:/r/ws/ ~/workspace $HOME/workspace ${D}/workspace ./workspace"
    )


def test_mounts_map_in_one_pass_and_show_back(tmp_path: Path) -> None:
    # the run's folders live under /tmp here: a mapped path is not mapped again
    mounts = Mounts(workspace="/tmp/run/ws", tmp="/tmp/run/tmp", others=(("/hf/", "/c/hub"),))
    text = "mktemp -d /tmp/eval_out-XXXXXX; cd /workspace; ${TMPDIR:-/tmp}; /var/tmp; /hf/x"
    mapped = mounts.map(text)
    assert mapped == (
        "mktemp -d /tmp/run/tmp/eval_out-XXXXXX; cd /tmp/run/ws; ${TMPDIR:-/tmp/run/tmp}; "
        "/var/tmp; /c/hub/x"
    )
    assert mounts.show(mapped) == text.replace("/hf/x", "/hf/x")


def test_launchers_exports_are_read_with_their_values() -> None:
    text = (
        "srun --no-container-entrypoint --export=ALL,PORT=8888,AIPERF_DATASET_MMAP_CACHE_DIR="
        "/aiperf_mmap_cache \\\n"
        "# --export=ALL,COMMENTED=1\n"
        "srun --export=ALL,UCX_NET_DEVICES=$UCX_NET_DEVICES bash x.sh\n"
        '-e HF_TOKEN -e PYTHONPYCACHEPREFIX=/tmp/pycache/ -e TORCH_CUDA_ARCH_LIST="9.0" \\\n'
        "    --env NCCL_IB_DISABLE --env CUDA_DEVICE_ORDER=PCI_BUS_ID --env=A_B=1 \\\n"
        "    --env-file x.env \\\n"
    )
    assert launcher_exports(text) == {
        "AIPERF_DATASET_MMAP_CACHE_DIR": "/aiperf_mmap_cache",
        "PYTHONPYCACHEPREFIX": "/tmp/pycache/",
        "TORCH_CUDA_ARCH_LIST": "9.0",
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        "A_B": "1",
    }


def test_the_contract_carries_the_workflows_and_the_launchers_variables() -> None:
    env = script_env(
        _dep(), 4, runner_name="gpu-a_00", launcher_env={"AIPERF_DATASET_MMAP_CACHE_DIR": "/m"}
    )
    assert env["HF_HUB_CACHE"] == "/mnt/hf_hub_cache/"
    assert env["SWEBENCH_USE_MODAL"] == "true" and env["SALLOC_EXCLUDE"]
    assert env["INFMAX_CONTAINER_WORKSPACE"] == "/workspace"
    assert env["PYTHONPYCACHEPREFIX"] == "/tmp/inferencex-pycache"
    assert env["AIPERF_DATASET_MMAP_CACHE_DIR"] == "/m"
    assert "HF_TOKEN" not in env and "MODAL_TOKEN_SECRET" not in env


# what benchmark_lib.sh does around an eval and an agentic run, in the same words
_LIB_LIKE = r"""#!/usr/bin/env bash
set -e
INFMAX_CONTAINER_WORKSPACE="${INFMAX_CONTAINER_WORKSPACE:-/workspace}"
vllm serve m &
out="$(mktemp -d /tmp/eval_out-XXXXXX)"
python3 -m lm_eval --output_path "$out"
python3 -c 'import a_module_only_the_image_has'
cd "$INFMAX_CONTAINER_WORKSPACE"
test -f benchmarks/benchmark_lib.sh
mkdir -p "$PYTHONPYCACHEPREFIX" "$HF_HUB_CACHE/x"
echo made > "$RESULT_DIR/done"
"""


def test_capture_keeps_everything_the_script_writes_in_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, tmpdir = tmp_path / "tree", tmp_path / "tmpdir"
    script = write_tree(tree)
    script.write_text(_LIB_LIKE)
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    before = {p.name for p in Path("/tmp").glob("eval_out-*")}
    cap = capture_script(tree, str(script.relative_to(tree)), _env(_dep()), 4, timeout_s=30)
    assert cap.exit_code == 0, cap.log_tail
    assert cap.problem is None
    assert [t[:3] for t in cap.tools] == [
        ("python3", "-m", "lm_eval"),
        ("python3", "-c", "import a_module_only_the_image_has"),
    ]
    assert cap.tools[0][4].startswith("/tmp/eval_out-")  # shown as the container's /tmp
    assert list(tmpdir.iterdir()) == []
    assert {p.name for p in Path("/tmp").glob("eval_out-*")} == before


def test_a_capture_that_fails_after_its_engine_is_a_warning(tmp_path: Path) -> None:
    script = write_tree(tmp_path)
    script.write_text(
        "#!/usr/bin/env bash\nvllm serve m &\n"
        'until compgen -G "$INFERBENCH_CAPTURE_DIR/*.argv" >/dev/null; do :; done\n'
        "echo 'cd: gone' >&2\nexit 1\n"
    )
    cap = capture_script(tmp_path, str(script.relative_to(tmp_path)), _env(_dep()), 4)
    assert cap.exit_code == 1 and cap.engines
    assert cap.problem is not None and "status 1 after starting its engine" in cap.problem
    assert "cd: gone" in cap.problem


@pytest.mark.parametrize(("conc", "batch"), [(4, "8"), (16, "16")])
def test_capture_records_what_the_script_starts(tmp_path: Path, conc: int, batch: str) -> None:
    write_tree(tmp_path)
    dep = _dep()
    cap = capture_script(
        tmp_path,
        "benchmarks/single_node/fixed_seq_len/llama_fp8_gpua.sh",
        _env(dep, conc),
        conc,
        timeout_s=30,
    )
    assert cap.exit_code == 0, cap.log_tail
    assert [e.argv for e in cap.engines] == [
        (
            "vllm",
            "serve",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--host",
            "0.0.0.0",
            "--port",
            "8888",
            "--tensor-parallel-size",
            "2",
            "--max-num-seqs",
            batch,
            "--max-model-len",
            "2304",
        )
    ]
    # what the script set for the engine, not what it was given
    assert cap.engines[0].env == {"MODEL_LEN": "2304", "SERVE_MODE": "throughput"}
    (bench,) = cap.bench
    assert bench.argv[0] == "/workspace/utils/bench_serving/benchmark_serving.py"
    assert bench.argv[bench.argv.index("--result-dir") + 1] == "/workspace/"
    assert bench.argv[bench.argv.index("--max-concurrency") + 1] == str(conc)
    assert cap.tools[0][:5] == ("curl", "--output", "/dev/null", "--silent", "--fail")


def test_capture_reports_a_script_that_fails_before_its_engine(tmp_path: Path) -> None:
    script = write_tree(tmp_path)
    script.write_text("#!/usr/bin/env bash\necho broken >&2\nexit 3\n")
    cap = capture_script(tmp_path, str(script.relative_to(tmp_path)), _env(_dep()), 4)
    assert cap.exit_code == 3 and cap.engines == () and "broken" in cap.log_tail


def test_capture_stops_a_script_at_its_time_limit(tmp_path: Path) -> None:
    script = write_tree(tmp_path)
    script.write_text("#!/usr/bin/env bash\nvllm serve m &\nwhile true; do :; done\n")
    cap = capture_script(tmp_path, str(script.relative_to(tmp_path)), _env(_dep()), 4, timeout_s=1)
    assert cap.exit_code is None
    assert [e.argv for e in cap.engines] == [("vllm", "serve", "m")]


def test_a_job_with_a_script_is_planned_through_it(tmp_path: Path) -> None:
    write_tree(tmp_path)
    dep = deployment_from_dicts(
        [job_dict(runner="gpua", conc=c, **{"exp-name": "llama_1k1k"}) for c in (4, 16)]
    )
    plan = script_plan(dep, tmp_path, LABELS, PlanOptions())
    assert plan is not None and plan.script is not None and plan.processes == ()
    assert plan.script.script == "benchmarks/single_node/fixed_seq_len/llama_fp8_gpua.sh"
    assert [p.concurrency for p in plan.script.points] == [4, 16]
    text = plan.render_text()
    assert "## script benchmarks/single_node/fixed_seq_len/llama_fp8_gpua.sh" in text
    assert (
        "MODEL_LEN=2304 SERVE_MODE=throughput vllm serve meta-llama/Llama-3.1-8B-Instruct "
        "--host 0.0.0.0 --port 8888 --tensor-parallel-size 2 --max-num-seqs 16" in text
    )
    assert plan.warnings == ()
    assert script_plan(_dep(precision="fp4"), tmp_path, LABELS, PlanOptions()) is None


def test_an_eval_only_job_runs_the_script_with_eval_only(tmp_path: Path) -> None:
    # InferenceX runs an eval-only job through the same script, EVAL_ONLY=true: a point per
    # eval concurrency, not none (the script serves and evals, with no throughput run)
    write_tree(tmp_path)
    dep = deployment_from_dicts(
        [job_dict(runner="gpua", conc=16, **{"exp-name": "llama_1k1k", "eval-only": True})]
    )
    plan = script_plan(dep, tmp_path, LABELS, PlanOptions(eval_limit=2))
    assert plan is not None and plan.script is not None
    assert [p.concurrency for p in plan.bench.points] == [16]
    (point,) = plan.script.points
    env = point.env
    assert (env["RUN_EVAL"], env["EVAL_ONLY"], env["EVAL_LIMIT"]) == ("true", "true", "2")


def test_the_real_interpreter_is_found_behind_a_version_managers_shim(tmp_path: Path) -> None:
    """A pyenv-like shim adds its variables before it starts the interpreter: the stubs
    reach the interpreter itself, so a recorded sa-bench call carries only the script's."""
    real = Path(sys.executable).resolve()
    shim = tmp_path / "python3"
    shim.write_text(f'#!/bin/sh\nexport PYENV_VERSION=1\nexec {real} "$@"\n')
    shim.chmod(0o755)
    assert Path(stubs.real_python(str(tmp_path))).resolve() == real
    assert stubs.real_python("/nonexistent") == sys.executable
