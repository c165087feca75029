"""`inferbench sweep` equals InferenceX's own generator on the real tree, job for job.

Each case runs `generate_sweep_configs.py full-sweep` (in the oracle venv, all cases in one
process) and `inferbench sweep --format json` with the same selection on
`../shared/upstream/inferencex`, read unchanged. The rows must be equal in order and field for
field over InferenceX's field names: same keys present, same keys absent, same values.
inferbench's own keys (`config-key`, `fingerprint`, `resolved-settings`, ...) are not compared.
Where the generator refuses a selection, inferbench refuses it too (exit 2, a message, no
traceback); where the generator answers a mistyped filter with an empty matrix (a `--conc`
no entry has, a `--runner-node-filter` no machine matches), inferbench refuses it.
`--runner-config` cases read other registries written from the real one (`_registries`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

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
    # "same": equal jobs; "refused": both refuse; "empty": the generator emits no job for it
    # and inferbench refuses the filter as a typo; "liberal": today's generator refuses what
    # an earlier one swept, and inferbench sweeps it as that one did (check names the value)
    expect: Literal["same", "refused", "empty", "liberal"] = "same"


ALT, BROKEN, MISSING = "{alt-runners}", "{broken-runners}", "{missing-runners}"


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
        ("--min-concurrency", "16", "--max-concurrency", "64"),
    ),
    Case(
        "one-conc",
        ("--min-conc", "4", "--max-conc", "4"),
        ("--min-concurrency", "4", "--max-concurrency", "4"),
    ),
    Case("max-conc-low", ("--max-conc", "3"), ("--max-concurrency", "3")),
    Case(
        "min-conc-high",
        ("--min-conc", "300", "--no-evals"),
        ("--min-concurrency", "300", "--no-evals"),
    ),
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
    # --runner-node-filter: one job per matching machine, runner set to the machine
    Case(
        "runner-node-filter-multinode",
        ("--runner-node-filter", "gb300-nv"),
        ("--runner-node-filter", "gb300-nv"),
    ),
    Case(
        "runner-node-filter-single-node",
        ("--runner-node-filter", "b200-nb", "--model-prefix", "dsr1", "qwen3.5"),
        ("--runner-node-filter", "b200-nb", "--model-prefix", "dsr1,qwen3.5"),
    ),
    Case(
        "runner-node-filter+agentic-evals-only",
        ("--runner-node-filter", "mi355x-amds_0", "--evals-only"),
        ("--runner-node-filter", "mi355x-amds_0", "--evals-only"),
    ),
    Case(  # test-config also keeps a matching label itself, first
        "config-keys+runner-node-filter",
        ("--config-keys", "*-gb300-*", "dsr1-fp4-b200-sglang", "--runner-node-filter", "gb300"),
        ("--config-keys", "*-gb300-*,dsr1-fp4-b200-sglang", "--runner-node-filter", "gb300"),
        command="test-config",
    ),
    Case(
        "runner-node-filter-matches-nothing",
        ("--runner-node-filter", "no-such-machine"),
        ("--runner-node-filter", "no-such-machine"),
        expect="empty",
    ),
    # --max-ep: single-node fixed-seq-len ep capped, the entry kept
    Case("max-ep", ("--max-ep", "4"), ("--max-ep", "4")),
    Case(
        "max-ep+max-tp+all-evals",
        ("--max-ep", "2", "--max-tp", "4", "--all-evals"),
        ("--max-ep", "2", "--max-tp", "4", "--all-evals"),
    ),
    # test-config --conc: only these concurrencies, entries without them dropped
    Case(
        "config-keys+conc",
        ("--config-keys", "*-b200-*", "--conc", "4", "8"),
        ("--config-keys", "*-b200-*", "--concurrency", "4,8"),
        command="test-config",
    ),
    Case(
        "config-keys+conc+agentic+all-evals",
        ("--config-keys", "*-mi3*", "*-gb200-*", "--conc", "16", "64", "--all-evals"),
        (
            "--config-keys",
            "*-mi3*,*-gb200-*",
            "--concurrency",
            "16",
            "--concurrency",
            "64",
            "--all-evals",
        ),
        command="test-config",
    ),
    Case(
        "config-keys+conc-not-in-any-entry",
        ("--config-keys", "dsr1-fp4-b200-sglang", "--conc", "3"),
        ("--config-keys", "dsr1-fp4-b200-sglang", "--concurrency", "3"),
        command="test-config",
        expect="empty",
    ),
    # --runner-config: labels and hardware from another registry
    Case("runner-config", ("--runner-config", ALT), ("--runner-config", ALT)),
    Case(
        "runner-config+runner-node-filter+agentic",
        (
            "--runner-config",
            ALT,
            "--runner-node-filter",
            "gb300-nv",
            "--scenario-type",
            "agentic-coding",
        ),
        (
            "--runner-config",
            ALT,
            "--runner-node-filter",
            "gb300-nv",
            "--scenario-type",
            "agentic-coding",
        ),
    ),  # fmt: skip
    Case(
        "runner-config-without-the-label",
        ("--runner-config", ALT, "--runner-type", "h100-multinode"),
        ("--runner-config", ALT, "--runner-type", "h100-multinode"),
        expect="refused",
    ),
    Case(
        # a multinode DRAM offload without hardware facts: InferenceX's generator wrote 0 GB
        # before upstream #2170 (2026-07-20) and refuses it since; sweep keeps the earlier
        # reading (0 GB) so that no older tree is refused, and check reports it (IB154)
        "runner-config-without-dram-facts",
        ("--runner-config", BROKEN),
        ("--runner-config", BROKEN),
        expect="liberal",
    ),
    Case(
        "runner-config-missing",
        ("--runner-config", MISSING),
        ("--runner-config", MISSING),
        expect="refused",
    ),
)


def _master_files(tree: Path) -> list[str]:
    return sorted(str(p.relative_to(tree)) for p in (tree / "configs").glob("*-master.yaml"))


def _drop_label(text: str, label: str) -> str:
    lines, out, skipping = text.splitlines(keepends=True), [], False
    for line in lines:
        if line.rstrip() == f"  {label}:":
            skipping = True
            continue
        if skipping and line.startswith("    - "):
            continue
        skipping = False
        out.append(line)
    return "".join(out)


@pytest.fixture(scope="module")
def registries(inferencex_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Other runners.yaml files, written from the real one: `alt` without the gb300-nv_2
    machine and the h100-multinode label, gb300-nv with half the CPU DRAM; `broken` without
    gb300-nv's hardware facts (its agentic DRAM offload cannot be sized)."""
    real = (inferencex_tree / "configs" / "runners.yaml").read_text()
    dram = "  cluster:gb300-nv:\n    available-cpu-dram-mib: 860_160\n    gpus-per-node: 4\n"
    assert "    - gb300-nv_2\n" in real and dram in real and "  h100-multinode:\n" in real
    alt = _drop_label(real.replace("    - gb300-nv_2\n", ""), "h100-multinode")
    alt = alt.replace(dram, dram.replace("860_160", "430_080"))
    folder = tmp_path_factory.mktemp("registries")
    (folder / "alt.yaml").write_text(alt)
    (folder / "broken.yaml").write_text(real.replace(dram, ""))
    return {
        ALT: str(folder / "alt.yaml"),
        BROKEN: str(folder / "broken.yaml"),
        MISSING: str(folder / "missing.yaml"),
    }


def _args(args: tuple[str, ...], registries: dict[str, str]) -> list[str]:
    return [registries.get(arg, arg) for arg in args]


@pytest.fixture(scope="module")
def generator(
    inferencex_python: Path, inferencex_tree: Path, registries: dict[str, str]
) -> Generator:
    files = _master_files(inferencex_tree)
    calls = [
        [case.command, "--config-files", *files, *_args(case.generator, registries)]
        for case in CASES
    ]
    return run_generator(inferencex_python, inferencex_tree, calls)


def _inferbench_sweep(
    capsys: pytest.CaptureFixture[str], tree: Path, args: list[str]
) -> tuple[int, list[dict[str, object]] | None, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", "--root", str(tree), "--format", "json", *args])
        raise SystemExit(0)
    out = capsys.readouterr()
    code = exit_info.value.code if isinstance(exit_info.value.code, int) else 0
    if code != 0:
        return code, None, out.err
    jobs = json.loads(out.out)
    assert isinstance(jobs, list)
    return code, jobs, out.err


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
    registries: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    case, run = CASES[index], generator.runs[index]
    code, got, err = _inferbench_sweep(capsys, inferencex_tree, _args(case.inferbench, registries))
    if case.expect == "liberal":
        assert run.rc != 0, f"the generator accepted it: {len(run.jobs or [])} jobs"
        assert code == 0 and got, err
        return
    if case.expect != "same":
        if case.expect == "refused":
            assert run.rc != 0, f"the generator accepted it: {len(run.jobs or [])} jobs"
        else:
            assert run.rc == 0 and run.jobs == [], run.error or f"{len(run.jobs or [])} jobs"
        assert code == 2, f"inferbench exited {code}"
        assert err.startswith("error: ") and "Traceback" not in err, err
        return
    assert run.rc == 0 and run.jobs is not None, run.error
    assert code == 0 and got is not None, err
    view = [inferencex_view(row, generator.fields) for row in got]
    problem = differences(run.jobs, view)
    assert not problem, problem
    assert run.jobs, "an empty case proves nothing: pick a filter that selects jobs"
