"""`inferbench sweep` equals InferenceX's own generator on the real tree, job for job.

Each case runs `generate_sweep_configs.py full-sweep` (in the oracle venv, all cases in one
process) and `inferbench sweep --format json` with the same selection on
`../shared/upstream/inferencex`, read unchanged. The rows must be equal in order and field for
field over InferenceX's field names: same keys present, same keys absent, same values.
inferbench's own keys (`config-key`, `fingerprint`, `resolved-settings`, ...) are not compared.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from inferbench.cli.main import main

from .generator import Generator, differences, inferencex_view, run_generator

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Case:
    id: str
    generator: tuple[str, ...]  # the generator's arguments after --config-files
    inferbench: tuple[str, ...]  # the same selection in inferbench's flags
    command: str = "full-sweep"


CASES = (
    # every eval mode on the whole tree
    Case("default", (), ()),
    Case("no-evals", ("--no-evals",), ("--no-evals",)),
    Case("evals-only", ("--evals-only",), ("--evals-only",)),
    Case("all-evals", ("--all-evals",), ("--all-evals",)),
    Case("evals-only+all-evals", ("--evals-only", "--all-evals"), ("--evals-only", "--all-evals")),
    # filters, alone and with the eval modes they interact with
    Case("runner-type", ("--runner-type", "b200", "mi355x"), ("--runner-type", "b200,mi355x")),
    Case(
        "runner-type-cluster+evals-only",
        ("--runner-type", "cluster:mi355x-amds", "--evals-only"),
        ("--runner-type", "cluster:mi355x-amds", "--evals-only"),
    ),
    Case("model-prefix", ("--model-prefix", "dsr1", "qwen"), ("--model-prefix", "dsr1,qwen")),
    Case(
        "precision+framework",
        ("--precision", "fp8", "--framework", "sglang", "vllm"),
        ("--precision", "fp8", "--framework", "sglang", "--framework", "vllm"),
    ),
    Case("seq-lens-1k1k", ("--seq-lens", "1k1k"), ("--seq-lens", "1k1k")),
    Case(
        "seq-lens-8k1k+all-evals",
        ("--seq-lens", "8k1k", "--all-evals"),
        ("--seq-lens", "8k1k", "--all-evals"),
    ),
    Case(
        "min-max-conc",
        ("--min-conc", "16", "--max-conc", "64"),
        ("--min-conc", "16", "--max-conc", "64"),
    ),
    Case(
        "one-conc", ("--min-conc", "4", "--max-conc", "4"), ("--min-conc", "4", "--max-conc", "4")
    ),
    Case("max-conc-low", ("--max-conc", "3"), ("--max-conc", "3")),
    Case("min-conc-high", ("--min-conc", "300", "--no-evals"), ("--min-conc", "300", "--no-evals")),
    Case("step-size", ("--step-size", "4"), ("--step-size", "4")),
    Case("max-tp", ("--max-tp", "4"), ("--max-tp", "4")),
    Case("single-node", ("--single-node",), ("--single-node",)),
    Case(
        "multi-node+evals-only", ("--multi-node", "--evals-only"), ("--multi-node", "--evals-only")
    ),
    Case(
        "agentic",
        ("--scenario-type", "agentic-coding"),
        ("--scenario-type", "agentic-coding"),
    ),
    Case(
        "agentic+all-evals",
        ("--scenario-type", "agentic-coding", "--all-evals"),
        ("--scenario-type", "agentic-coding", "--all-evals"),
    ),
    Case(
        "fixed-seq-len+evals-only",
        ("--scenario-type", "fixed-seq-len", "--evals-only"),
        ("--scenario-type", "fixed-seq-len", "--evals-only"),
    ),
    # config keys, as the changelog processing asks for them (`test-config`)
    Case(
        "config-keys",
        ("--config-keys", "dsr1-fp8-*", "qwen3.5-fp8-mi325x-sglang-agentic-mtp"),
        ("--config-keys", "dsr1-fp8-*,qwen3.5-fp8-mi325x-sglang-agentic-mtp"),
        command="test-config",
    ),
    Case(
        "config-keys+evals-only",
        ("--config-keys", "*-gb200-*", "--evals-only", "--seq-lens", "8k1k"),
        ("--config-keys", "*-gb200-*", "--evals-only", "--seq-lens", "8k1k"),
        command="test-config",
    ),
)


def _master_files(tree: Path) -> list[str]:
    return sorted(str(p.relative_to(tree)) for p in (tree / "configs").glob("*-master.yaml"))


@pytest.fixture(scope="module")
def generator(inferencex_python: Path, inferencex_tree: Path) -> Generator:
    files = _master_files(inferencex_tree)
    calls = [[case.command, "--config-files", *files, *case.generator] for case in CASES]
    return run_generator(inferencex_python, inferencex_tree, calls)


def _inferbench_sweep(
    capsys: pytest.CaptureFixture[str], tree: Path, args: tuple[str, ...]
) -> list[dict[str, object]]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", "--root", str(tree), "--format", "json", *args])
        raise SystemExit(0)
    out = capsys.readouterr()
    assert exit_info.value.code in (0, None), out.err
    jobs = json.loads(out.out)
    assert isinstance(jobs, list)
    return jobs


def test_inferencex_lists_the_masters_the_tree_has(
    generator: Generator, inferencex_tree: Path
) -> None:
    """The cases run the generator on every `configs/*-master.yaml`, InferenceX's own list."""
    assert sorted(generator.master_configs) == _master_files(inferencex_tree)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.id for case in CASES])
def test_sweep_equals_the_generator(
    index: int,
    generator: Generator,
    inferencex_tree: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case, run = CASES[index], generator.runs[index]
    assert run.rc == 0 and run.jobs is not None, run.error
    got = _inferbench_sweep(capsys, inferencex_tree, case.inferbench)
    view = [inferencex_view(row, generator.fields) for row in got]
    problem = differences(run.jobs, view)
    assert not problem, problem
    assert run.jobs, "an empty case proves nothing: pick a filter that selects jobs"
