"""`inferbench sweep` end to end: the real entry point, the bundled example tree."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inferbench.cli.main import main
from inferbench.core.job import Job
from inferbench.matrix.filters import EvalMode, SweepFilters

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", *args])
        raise SystemExit(0)
    out = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 0), out.out, out.err


def test_json_is_a_valid_list_of_jobs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--root", str(EXAMPLES), "--format", "json")
    assert code == 0
    jobs = [Job.model_validate(obj) for obj in json.loads(out)]
    assert jobs and any(j.config_key == "minimaxm3-fp4-b200-dynamo-vllm" for j in jobs)
    seed = next(j for j in jobs if j.config_key == "minimaxm3-fp4-b200-dynamo-vllm")
    assert seed.concurrencies == (2048,) and seed.max_model_len == 9472


def test_github_matrix_is_valid_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--root", str(EXAMPLES), "--format", "github")
    assert code == 0
    matrix = json.loads(out)
    chunks = [
        c for group in ("single_node", "multi_node") for cs in matrix[group].values() for c in cs
    ]
    assert sum(len(c["config"]) for c in chunks) == matrix["total"] > 0
    assert all(len(c["config"]) <= 256 for c in chunks)


def test_filters_and_output_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "jobs.json"
    code, out, _ = _run(
        capsys, "--root", str(EXAMPLES), "--format", "json", "--multi-node",
        "--seq-lens", "8k1k", "--output", str(target),
    )  # fmt: skip
    assert code == 0 and out == ""
    jobs = json.loads(target.read_text())
    assert jobs and all("prefill" in j and j["isl"] == 8192 for j in jobs)


def test_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--root", str(EXAMPLES), "--config-keys", "minimaxm3-*")
    assert code == 0 and "minimaxm3" in out and "1 jobs" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--no-evals", "--evals-only"],
        ["--seq-lens", "8k"],
        ["--min-concurrency", "0"],
        ["--min-concurrency", "64", "--max-concurrency", "8"],
        ["--max-concurrency", "10000001"],  # past MAX_CONCURRENCY
        ["--max-tp", "4097"],  # past MAX_PARALLEL
        ["--config-keys", "nope-*"],
        ["--runner-type", "h300"],
        ["--format", "yaml"],
        ["--changed-since", "HEAD"],
    ],
)
def test_user_errors_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str]
) -> None:
    root = tmp_path / "tree"
    shutil.copytree(EXAMPLES, root)  # outside any git checkout, for --changed-since
    code, out, err = _run(capsys, "--root", str(root), "--format", "json", *args)
    assert code == 2, err
    assert out == "" and "Traceback" not in err and err.strip().count("\n") == 0


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root, check=True, capture_output=True,
    )  # fmt: skip


def test_changed_since(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "tree"
    shutil.copytree(EXAMPLES, root)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "base")
    code, out, err = _run(
        capsys, "--root", str(root), "--format", "json", "--changed-since", "HEAD"
    )
    assert code == 2 and out == "" and "adds no lines since HEAD" in err
    with (root / "perf-changelog.yaml").open("a") as handle:
        handle.write(
            '- config-keys: ["minimaxm3-*"]\n  description: ["Rerun MiniMax-M3"]\n'
            "  pr-link: https://github.com/example/bench/pull/9\n"
        )
    code, out, _ = _run(capsys, "--root", str(root), "--format", "json", "--changed-since", "HEAD")
    assert code == 0
    assert {j["config-key"] for j in json.loads(out)} == {"minimaxm3-fp4-b200-dynamo-vllm"}
    code, _, err = _run(capsys, "--root", str(root), "--changed-since", "no-such-rev")
    assert code == 2 and "no-such-rev" in err


def test_console_script_prints_only_json() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "sweep", "--root", str(EXAMPLES),
         "--format", "github"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    json.loads(proc.stdout)


def test_tree_as_positional_argument(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(EXAMPLES), "--format", "json")
    assert code == 0 and json.loads(out)


FILTER_FLAGS = [
    "--config-keys", "a-*,b", "--config-keys", "c", "--model-prefix", "llama", "--precision",
    "fp4,fp8", "--framework", "vllm", "--runner-type", "h200", "--seq-lens", "1k1k,8k1k",
    "--min-concurrency", "4", "--max-concurrency", "64", "--max-tp", "8", "--single-node",
]  # fmt: skip


class _Stop(Exception):
    pass


def _filters_of(monkeypatch: pytest.MonkeyPatch, command: str, *args: str) -> SweepFilters:
    """The `SweepFilters` that `inferbench <command>` asks the library for, before it loads."""
    import inferbench.launch.sweep
    import inferbench.matrix.api
    from inferbench.cli.main import app

    seen: list[SweepFilters] = []

    def capture(_root: Path, filters: SweepFilters, **_: object) -> None:
        seen.append(filters)
        raise _Stop

    monkeypatch.setattr(inferbench.matrix.api, "sweep_tree", capture)
    monkeypatch.setattr(inferbench.launch.sweep, "load_deployments", capture)
    with pytest.raises(_Stop):
        app([command, *args], standalone_mode=False)
    return seen[0]


@pytest.mark.parametrize(
    "args",
    [
        [],
        FILTER_FLAGS,
        ["--multi-node"],
        ["--scenario-type", "agentic-coding", "--step-size", "4"],  # run has them too
    ],
)
def test_run_and_sweep_build_the_same_filters(
    monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    assert _filters_of(monkeypatch, "run", *args) == _filters_of(monkeypatch, "sweep", *args)


def test_filter_flags_reach_the_library(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _filters_of(monkeypatch, "run", *FILTER_FLAGS) == SweepFilters(
        config_keys=("a-*", "b", "c"), model_prefixes=("llama",), precisions=("fp4", "fp8"),
        frameworks=("vllm",), runner_types=("h200",), seq_lens=((1024, 1024), (8192, 1024)),
        min_conc=4, max_conc=64, max_tp=8, node_type="single-node",
    )  # fmt: skip
    sweep_only = ["--multi-node", "--scenario-type", "agentic-coding", "--evals-only"]
    assert _filters_of(monkeypatch, "sweep", *sweep_only, "--step-size", "4") == SweepFilters(
        node_type="multi-node", scenario_types=("agentic-coding",), evals=EvalMode.ONLY, step=4
    )


def test_an_option_declared_twice_is_refused() -> None:
    from inferbench.cli.filters import FilterOptions
    from inferbench.cli.options import with_options

    def command(filters: FilterOptions, max_tp: int = 0) -> None:
        pass

    with pytest.raises(TypeError, match="declared twice: max_tp"):
        with_options(command)
