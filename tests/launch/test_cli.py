"""`inferbench plan` / `inferbench run --dry-run` and their user errors, as a user runs them."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from inferbench.cli.main import main

from .script_tree import write_tree

EXAMPLES = str(Path(__file__).resolve().parents[2] / "examples")


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


Cli = Callable[..., Done]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """`inferbench ARGS` in-process (as the console script runs it), in `cwd`, with `env`:
    what a subprocess would show, at a fraction of its start-up cost."""

    def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Done:
        monkeypatch.chdir(cwd)
        for name, value in {"COLUMNS": "200", **(env or {})}.items():
            monkeypatch.setenv(name, value)
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out = capsys.readouterr()
        return Done(code, out.out, out.err)

    return run


def test_plan_prints_engine_commands(cli: Cli, tmp_path: Path) -> None:
    out = cli("plan", "gptoss*", "--root", EXAMPLES, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "trtllm-serve openai/gpt-oss-120b" in out.stdout
    assert "--ep_size 2" in out.stdout  # the DEP2 search-space entry
    assert not (tmp_path / "runs").exists()  # printing a plan writes nothing


def test_plan_of_the_seed_job_for_srtctl(cli: Cli, tmp_path: Path) -> None:
    out = cli("plan", "minimaxm3*", "--root", EXAMPLES, "--backend", "srtctl", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "path: minimax-m3-nvfp4" in out.stdout
    assert "srtctl apply -f" in out.stdout and "SRTSLURM_CONFIG=" in out.stdout


def test_unknown_selector_is_one_line_and_exit_2(cli: Cli, tmp_path: Path) -> None:
    out = cli("plan", "no-such-job", "--root", EXAMPLES, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "no job matches" in out.stderr
    assert "Traceback" not in out.stderr


def test_dry_run_prints_plans_and_runs_nothing(cli: Cli, tmp_path: Path) -> None:
    args = ("run", "--root", EXAMPLES, "--config-keys", "llama3.1-70b-fp8-h200-sglang")
    out = cli(*args, "--dry-run", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("sglang.launch_server") == 2  # tp4 and tp8 entries
    assert not (tmp_path / "runs").exists()


def test_missing_srtctl_stops_before_anything_runs(cli: Cli, tmp_path: Path) -> None:
    out = cli(
        "run", "--root", EXAMPLES, "--backend", "srtctl", "--multi-node",
        cwd=tmp_path,
        env={"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 2
    assert "srtctl not found" in out.stderr and "NVIDIA/srt-slurm" in out.stderr
    assert not (tmp_path / "runs").exists()


def test_resume_of_an_unknown_run_is_a_user_error(cli: Cli, tmp_path: Path) -> None:
    out = cli("run", "--root", EXAMPLES, "--resume", "20260101-000000-dead", cwd=tmp_path)
    assert out.returncode == 2 and "no run" in out.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--seq-lens", "8k"],
        ["--min-concurrency", "0"],
        ["--min-concurrency", "64", "--max-concurrency", "8"],
    ],
)
def test_bad_filters_are_one_line_and_exit_2(cli: Cli, tmp_path: Path, args: list[str]) -> None:
    out = cli("run", "--root", EXAMPLES, *args, "--dry-run", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().count("\n") == 0 and "Traceback" not in out.stderr
    assert out.stdout == "" and not (tmp_path / "runs").exists()


def test_plan_json_is_one_json_document(cli: Cli, tmp_path: Path) -> None:
    import json

    args = ("plan", "minimaxm3*", "--root", EXAMPLES, "--backend", "srtctl")
    out = cli(*args, "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (plan,) = json.loads(out.stdout)  # nothing but JSON on stdout
    assert plan["backend"] == "srtctl" and plan["config_key"] == "minimaxm3-fp4-b200-dynamo-vllm"
    # the old spelling still works, and says what replaced it
    old = cli(*args, "--json", cwd=tmp_path)
    assert old.returncode == 0 and json.loads(old.stdout) == [plan], old.stderr
    assert old.stderr == (
        "inferbench plan: --json is deprecated, use --format json (the old spelling still"
        " works for now)\n" + out.stderr
    )


@pytest.mark.parametrize("json_flag", [[], ["--format", "json"]])
def test_plan_exits_1_when_a_selected_job_cannot_be_planned(
    cli: Cli, tmp_path: Path, json_flag: list[str]
) -> None:
    """A single-node job has no srtctl plan: said on stderr, exit 1, JSON still pure."""
    import json

    args = ("plan", "*", "--root", EXAMPLES, "--backend", "srtctl", *json_flag)
    out = cli(*args, cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert (
        "cannot plan" in out.stderr and "single-node job does not run through srtctl" in out.stderr
    )
    assert "jobs cannot be planned" in out.stderr and "Traceback" not in out.stderr
    if json_flag:
        plans = json.loads(out.stdout)
        assert [p["config_key"] for p in plans] == ["minimaxm3-fp4-b200-dynamo-vllm"]
    else:
        assert "# plan " in out.stdout and "cannot plan" not in out.stdout


def test_run_dry_run_exits_1_when_a_job_cannot_be_planned(cli: Cli, tmp_path: Path) -> None:
    out = cli("run", "--root", EXAMPLES, "--backend", "srtctl", "--dry-run", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert "cannot plan" in out.stderr and not (tmp_path / "runs").exists()


def test_plan_appends_engine_args_and_env(cli: Cli, tmp_path: Path) -> None:
    out = cli(
        "plan", "llama3.1-8b-bf16-h200-vllm", "--root", EXAMPLES, "--seq-lens", "1k1k",
        "--engine-args", "--enforce-eager --max-num-seqs 4", "--engine-env", "VLLM_A=1",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "env VLLM_A=1 vllm serve" in out.stdout
    assert "--no-enable-prefix-caching --enforce-eager --max-num-seqs 4\n" in out.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--engine-args", '"--x'], "No closing quotation"),
        (["--engine-env", "NOEQUALS"], "is not NAME=VALUE"),
    ],
)
def test_bad_engine_args_are_usage_errors(
    cli: Cli, tmp_path: Path, args: list[str], message: str
) -> None:
    out = cli("plan", "llama*", "--root", EXAMPLES, *args, cwd=tmp_path)
    assert out.returncode == 2
    assert message in out.stderr and "Traceback" not in out.stderr


def test_request_timeout_reaches_every_point_and_its_client(cli: Cli, tmp_path: Path) -> None:
    from inferbench.launch.plan import BenchPoint, BenchSpec, client_options

    args = ("run", "--root", EXAMPLES, "--config-keys", "llama3.1-70b-fp8-h200-sglang")
    out = cli(*args, "--dry-run", "--request-timeout", "45", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("request-timeout=45s") == 2  # each job's bench
    spec = BenchSpec(model="m", isl=8, osl=8, points=(BenchPoint(concurrency=1, num_prompts=1,
                     num_warmups=0),), request_timeout_s=45)  # fmt: skip
    assert client_options(spec).request_timeout_s == 45
    assert client_options(spec.model_copy(update={"request_timeout_s": None})).request_timeout_s
    for bad in ("0", "-1", "nan", "1e9"):
        out = cli(*args, "--dry-run", "--request-timeout", bad, cwd=tmp_path)
        assert out.returncode == 2 and "--request-timeout" in out.stderr, out.stderr
        assert "fix:" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_engine_over_a_trees_script_says_so(cli: Cli, tmp_path: Path, engine: str) -> None:
    write_tree(tmp_path / "tree")
    script = "benchmarks/single_node/fixed_seq_len/llama_fp8_gpua.sh"
    out = cli("plan", "*", "--root", str(tmp_path / "tree"), "--engine", engine, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"warning: the tree has {script} for this job, which InferenceX runs" in out.stderr
    assert f"--engine {engine} starts {engine} with inferbench's flags instead" in out.stderr
    assert f"## script {script}" not in out.stdout  # inferbench's own launch, as it says
    # without --engine the script runs; --engine sim and --no-tree-script say nothing
    plain = cli("plan", "*", "--root", str(tmp_path / "tree"), cwd=tmp_path)
    assert f"## script {script}" in plain.stdout and "warning" not in plain.stderr
    for flag in ("--engine=sim", "--no-tree-script"):
        quiet = cli("plan", "*", "--root", str(tmp_path / "tree"), flag, cwd=tmp_path)
        assert quiet.returncode == 0 and "warning" not in quiet.stderr, quiet.stderr


def test_a_master_model_that_is_a_local_folder_is_planned_as_it_is(
    cli: Cli, tmp_path: Path
) -> None:
    tree, folder = tmp_path / "tree", tmp_path / "models" / "tiny-llama"
    shutil.copytree(EXAMPLES, tree)
    master = tree / "configs" / "nvidia-master.yaml"
    text = master.read_text().replace("meta-llama/Llama-3.1-8B-Instruct", str(folder))
    master.write_text(text)
    key = "llama3.1-8b-bf16-h200-vllm"
    sweep = cli("sweep", "--root", str(tree), "--config-keys", key, cwd=tmp_path)
    assert sweep.returncode == 0 and key in sweep.stdout, sweep.stderr
    out = cli("plan", key, "--root", str(tree), "--seq-lens", "1k1k", "--engine", "vllm",
              "--format", "json", cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    plans = json.loads(out.stdout)
    assert plans and all(p["processes"][0]["argv"][:3] == ["vllm", "serve", str(folder)]
                         for p in plans)  # fmt: skip
    assert {p["bench"]["model"] for p in plans} == {str(folder)}
