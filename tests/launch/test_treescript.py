"""The tree's own benchmark script: found as the launchers find it, run under stubs."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.errors import InputError
from inferbench.launch.deployment import deployment_from_dicts
from inferbench.launch.planner import PlanOptions
from inferbench.launch.treescript.capture import capture_script
from inferbench.launch.treescript.contract import result_filename, script_env
from inferbench.launch.treescript.locate import (
    expand,
    find_script,
    launcher_candidates,
    launchers_for,
)
from inferbench.launch.treescript.planning import script_plan
from inferbench.launch.treescript.stage import map_workspace

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
