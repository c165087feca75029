"""`plan` agrees with an independent run of every active single-node script of the real tree.

The oracle shares no code with inferbench (parity_*.py): the jobs are InferenceX's own
generator's (full sweep, every master config), the environment is written from
`benchmark-tmpl.yml` and `run-sweep.yml` by evaluating their expressions, the machine and the
script are what the launcher itself picks when it runs, and the script runs unchanged in a
sandboxed GitHub runner whose launch step starts it in a container-like mount namespace: the
checkout IS `/workspace` there, so nothing rewrites a script's paths. For one job of each
active script (a script some job of the sweep runs), the test compares with `inferbench plan
--format json` for the same job: the engines' argv (order included) and environment, the
sa-bench calls' argv and environment, the agentic replay's aiperf calls, the script's exit
status. Variables that may differ are listed in ALLOWED with the reason, each one still
needed; `plan` must exit 0 for every job.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from .generator import run_generator
from .parity_compare import Item, Verdict, check, config_keys, generator_args
from .parity_oracle import choice_key, choose_scripts, single_node
from .parity_sandbox import RUNNER_ENV
from .parity_workflow import Workflows

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

# what the sandbox gives every process itself (its PATH, HOME, locale, bash's bookkeeping)
SANDBOX = frozenset({"PATH", "HOME", "PWD", "OLDPWD", "SHLVL", "_", "LANG", "TMPDIR"})

# Variables of the engine or sa-bench environment that may differ from `plan`'s, one line
# each with the reason; each must still make a difference somewhere (else remove its line).
ALLOWED = {
    # the step's own variables, passed on by `--export=ALL`; no single-node script reads them
    "GITHUB_STEP_SUMMARY": "the launch step empties it for its own summary",
    "RESULT_FILENAME_BASE": "the launch step builds RESULT_FILENAME from it",
    # what a launcher exports about its runner (storage, node, scheduler): a local run has
    # its own machine
    "HF_HUB_CACHE_MOUNT": "the runner's host folder of the HF cache (the launcher mounts it)",
    "AIPERF_MMAP_CACHE_HOST_PATH": "the runner's host folder of aiperf's cache",
    "VLLM_CACHE_ROOT": "launch_mi355x-amds.sh: vLLM's cache on the cluster's share",
    "PORT_OFFSET": "launch_mi355x-amds.sh: a port per machine of the node",
    "MODEL_PATH": "launchers stage checkpoints on the runner's storage (mapped in argv)",
    "SRT_SLURM_MODEL_PREFIX": "launch_b200-dgxc.sh: the staged checkpoint's srt-slurm alias",
    "XDG_RUNTIME_DIR": "launch_mi300x-amds.sh: a per-job folder on the compute node",
    "XDG_CACHE_HOME": "launch_mi325x-amds.sh: a per-job cache on the node's /tmp",
    "TRITON_CACHE_DIR": "launch_mi325x-amds.sh: a per-job cache on the node's /tmp",
    # not yet in inferbench's environment contract (issue 37, part 2)
    "HF_HUB_CACHE": "benchmark-tmpl.yml's env; the contract leaves it out",
    "SWEBENCH_USE_MODAL": "benchmark-tmpl.yml's env; the contract leaves it out",
    "SALLOC_EXCLUDE": "benchmark-tmpl.yml's env; the contract leaves it out",
    "AIPERF_DATASET_MMAP_CACHE_DIR": "the launchers' --export; the contract leaves it out",
    "PYTHONPYCACHEPREFIX": "the contract writes the run's folder, the workflow /tmp/...",
    # `plan` lists what a script sets for a process, not what it unsets
    "MAX_MODEL_LEN": "benchmark_lib.sh unsets it for agentic engines; plan shows '0'",
    # docker launchers pass only their -e variables; the contract gives a script all of it
    "docker -e": "launch_mi325x-tw.sh and launch_rtx6000pro-lat.sh pass only their -e list",
}


@dataclass(frozen=True)
class Parity:
    jobs: int
    items: tuple[Item, ...]
    verdicts: tuple[Verdict, ...]
    no_script: dict[str, tuple[str, ...]]  # choice key: what each launcher tried


def _masters(tree: Path) -> list[str]:
    return sorted(str(p.relative_to(tree)) for p in (tree / "configs").glob("*-master.yaml"))


def _same_job(a: Mapping[str, object], b: Mapping[str, object]) -> bool:
    return {k: v for k, v in a.items() if k != "run-eval"} == {
        k: v for k, v in b.items() if k != "run-eval"
    }


def _selected(
    python: Path, tree: Path, reps: dict[str, tuple[dict[str, object], str]]
) -> dict[str, tuple[str, dict[str, object]]]:
    """{script: (master key, job)}: the generator's `test-config` with the selection `plan` is
    given (key, concurrency, scenario, sequence lengths), for each key whose entry has the
    job's image, runner and framework; the job as that selection yields it (evals are marked
    among the jobs selected)."""
    asks = [(script, key) for script, (job, _) in reps.items() for key in config_keys(tree, job)]
    masters = _masters(tree)
    calls = [
        ["test-config", "--config-files", *masters, *generator_args(key, reps[script][0])]
        for script, key in asks
    ]
    runs = run_generator(python, tree, calls).runs if calls else ()
    out: dict[str, tuple[str, dict[str, object]]] = {}
    for (script, key), run in zip(asks, runs, strict=True):
        found = [j for j in run.jobs or [] if _same_job(j, reps[script][0])]
        if script not in out and found:
            out[script] = (key, found[0])
    return out


@pytest.fixture(scope="module")
def sweep(inferencex_python: Path, inferencex_tree: Path) -> list[dict[str, object]]:
    """The single-node jobs of InferenceX's full sweep, by its own generator."""
    tree = inferencex_tree.resolve()
    generator = run_generator(
        inferencex_python, tree, [["full-sweep", "--config-files", *_masters(tree)]]
    )
    (run,) = generator.runs
    assert run.rc == 0 and run.jobs, run.error
    return single_node(run.jobs)


@pytest.fixture(scope="module")
def parity(
    sweep: list[dict[str, object]],
    inferencex_python: Path,
    inferencex_tree: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Parity:
    tree = inferencex_tree.resolve()
    home = tmp_path_factory.mktemp("parity")
    jobs = sweep
    workflows = Workflows(tree)
    firsts = {choice_key(j): j for j in reversed(jobs)}
    choices = choose_scripts(tree, workflows, list(firsts.values()), home / "choice")
    reps: dict[str, tuple[dict[str, object], str]] = {}
    no_script: dict[str, tuple[str, ...]] = {}
    for job in jobs:  # the first job of the sweep that runs each script
        choice = choices[choice_key(job)]
        if choice.script is None:
            no_script[str(job["exp-name"])] = choice.tried
        elif choice.script not in reps:
            reps[choice.script] = (job, choice.runner_name)
    selected = _selected(inferencex_python, tree, reps)
    ignored = SANDBOX | set(RUNNER_ENV) | workflows.secret_names()
    items = []
    for i, (script, (job, name)) in enumerate(sorted(reps.items())):
        key, job = selected.get(script, ("", job))
        items.append(
            Item(script, dict(job), name, key, tree, home / f"run{i}", ignored, frozenset(ALLOWED))
        )
    with ProcessPoolExecutor(2) as pool:
        verdicts = tuple(pool.map(check, items))
    return Parity(len(jobs), tuple(items), verdicts, no_script)


def test_every_active_script_is_planned_as_it_runs(parity: Parity) -> None:
    counts = Counter(v.script.split("/")[2] for v in parity.verdicts)
    print(
        f"\n{parity.jobs} single-node jobs, {len(parity.verdicts)} active scripts ({counts}); "
        f"jobs no launcher finds a script for: {sorted(parity.no_script)}"
    )
    failed = [f"{v.script}: plan exit {v.plan_exit}: {v.plan_error}" for v in parity.verdicts
              if v.plan_error]  # fmt: skip
    assert not failed, "\n".join(failed)
    problems = [
        f"{v.script} ({v.job['exp-name']} conc {v.job['conc']} on {v.runner_name}) {field}:\n  "
        + "\n  ".join(texts)
        for v in parity.verdicts
        for field, texts in v.differences.items()
    ]
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems)
    used = {name for v in parity.verdicts for name in v.allowed}
    assert not set(ALLOWED) - used, f"ALLOWED lines no longer needed: {set(ALLOWED) - used}"


def test_the_oracle_sees_what_differs(parity: Parity, tmp_path: Path) -> None:
    """The control: the oracle runs a copy of the tree whose script exports one more variable,
    for the job at twice its concurrency; the comparison with `plan` of the real tree, for
    the real job, must name both."""
    item = next(i for i in parity.items if "/fixed_seq_len/" in i.script)
    tree = tmp_path / "tree"
    shutil.copytree(item.tree, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    script = tree / item.script
    lines = script.read_text().splitlines(keepends=True)
    script.write_text(lines[0] + "export PARITY_CONTROL=1\n" + "".join(lines[1:]))
    job = {**item.job, "conc": 2 * int(str(item.job["conc"]))}
    control = dataclasses.replace(item, home=tmp_path / "run", oracle_tree=tree, oracle_job=job)
    verdict = check(control)
    assert not verdict.plan_error, verdict.plan_error
    assert "engine env PARITY_CONTROL" in verdict.differences
    assert "sa-bench argv" in verdict.differences and "engine env CONC" in verdict.differences


def test_the_workflow_env_of_an_agentic_job(
    sweep: list[dict[str, object]], inferencex_tree: Path
) -> None:
    """The expressions of run-sweep.yml and benchmark-tmpl.yml, evaluated for one agentic
    row with a KV offload backend, give what GitHub would (values checked by hand)."""
    row = next(j for j in sweep if j.get("kv-offload-backend") and j.get("scenario-type"))
    env = Workflows(inferencex_tree).launch_step(row, "machine_7").env
    backend = row["kv-offload-backend"]
    assert isinstance(backend, dict)
    assert env["KV_OFFLOAD_BACKEND"] == backend["name"]
    assert env["KV_OFFLOAD_BACKEND_METADATA"] == json.dumps(backend, indent=2)
    assert (env["ISL"], env["OSL"], env["MAX_MODEL_LEN"]) == ("0", "0", "0")
    assert (env["SCENARIO_TYPE"], env["SCENARIO_SUBDIR"], env["IS_AGENTIC"]) == (
        "agentic-coding", "agentic/", "1",
    )  # fmt: skip
    assert (env["RUN_EVAL"], env["DISAGG"], env["REQUIRE_POWER"]) == ("false", "false", "0")
    assert env["DP_ATTENTION"] == str(row["dp-attn"]).lower()
    assert env["RESULT_FILENAME_BASE"].startswith(f"{row['exp-name']}_{row['precision']}_")
    assert env["RESULT_FILENAME_BASE"].endswith(f"_conc{row['conc']}_machine_7")
    assert env["HF_TOKEN"] == "" and env["RUNNER_NAME"] == "machine_7"
