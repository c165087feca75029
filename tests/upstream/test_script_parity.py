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
import subprocess
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from services import missing_service

from .generator import run_generator
from .parity_compare import Item, Verdict, check, config_keys, generator_args
from .parity_oracle import choice_key, choose_scripts, single_node
from .parity_sandbox import RUNNER_ENV
from .parity_workflow import Workflows

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

# what the sandbox gives every process itself (its PATH, HOME, locale, bash's bookkeeping)
SANDBOX = frozenset({"PATH", "HOME", "PWD", "OLDPWD", "SHLVL", "_", "LANG", "TMPDIR"})

SCRIPTS = "benchmarks/single_node/"

# Active scripts `plan` may fail on, one line each with the reason (none today).
PLAN_FAILS: dict[str, str] = {}

# Differences of one script in one field, one line each with the reason; each must still
# occur (else remove its line).
_IX = (
    "launch_h200-dgxc-slurm.sh mounts the checkout at /ix for deepseek-v4 sglang images (their "
    "/workspace holds sglang); plan shows the checkout at /workspace"
)
_DRAFT = (
    "the script takes the EAGLE3 draft from beside the launcher's staged checkpoint; without "
    "one, plan's engine loads the draft by its model id"
)
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("fixed_seq_len/dsv4_fp8_h200_sglang.sh", "sa-bench argv"): _IX,
    ("fixed_seq_len/dsv4_fp8_h200_sglang.sh", "engine env GPU_METRICS_CSV"): _IX,
    ("fixed_seq_len/dsv4_fp8_h200_sglang.sh", "sa-bench env GPU_METRICS_CSV"): _IX,
    ("fixed_seq_len/dsv4_fp8_h200_sglang_mtp.sh", "sa-bench argv"): _IX,
    ("fixed_seq_len/dsv4_fp8_h200_sglang_mtp.sh", "engine env GPU_METRICS_CSV"): _IX,
    ("fixed_seq_len/dsv4_fp8_h200_sglang_mtp.sh", "sa-bench env GPU_METRICS_CSV"): _IX,
    ("agentic/minimaxm3_fp4_b200_mtp.sh", "engine argv"): _DRAFT,
    ("agentic/minimaxm3_fp4_b300_mtp.sh", "engine argv"): _DRAFT,
}

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
    "HF_HUB_CACHE": "launch_b300-nv.sh: the runner's $HOME/.cache/huggingface",
    # `plan` lists what a script sets for a process, not what it unsets
    "MAX_MODEL_LEN": "benchmark_lib.sh unsets it for agentic engines; plan shows '0'",
    "CUDA_VISIBLE_DEVICES": "launch_rtx6000pro-lat.sh: the GPUs it found on the machine",
    "NCCL_IB_DISABLE": "launch_rtx6000pro-lat.sh: the machine's network (no InfiniBand)",
    # inferbench's staging names the run's workspace through it; CI leaves it unset and
    # benchmark_lib.sh defaults it to the same /workspace
    "INFMAX_CONTAINER_WORKSPACE": "set by inferbench's staging to the default's value",
    # the replay is a stand-in: the oracle runs InferenceX's processing on its empty
    # artifacts (request_count missing: exit 1), plan's venv python only records (exit 0)
    "agentic exit": "a script's exit status after both replays",
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


def _namespaces() -> None:
    """The sandbox needs user and mount namespaces (unshare -rm, overlay mounts), or skip."""
    probe = "mkdir -p /tmp && mount -t tmpfs none /mnt"
    try:
        done = subprocess.run(
            ["unshare", "-rm", "bash", "-c", probe], capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        missing_service(f"the parity sandbox needs unshare -rm: {exc}")
    if done.returncode != 0:
        missing_service(f"the parity sandbox needs unshare -rm: {done.stderr.decode()[-300:]}")


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
    _namespaces()
    tree = inferencex_tree.resolve()
    home = tmp_path_factory.mktemp("parity")
    jobs = sweep
    workflows = Workflows(tree)
    groups: dict[str, list[dict[str, object]]] = {}
    for job in jobs:
        groups.setdefault(choice_key(job), []).append(job)
    # each group's first job, then its highest-concurrency one: the launchers' choice must
    # not depend on the concurrency
    firsts = [g[0] for g in groups.values()]
    lasts = [max(g, key=lambda j: int(str(j["conc"]))) for g in groups.values()]
    found = choose_scripts(tree, workflows, firsts + lasts, home / "choice")
    choices = dict(zip(groups, found[: len(firsts)], strict=True))
    by_conc = [
        f"{f['exp-name']} conc {f['conc']}/{last['conc']}: {a.script} / {b.script}"
        for f, last, a, b in zip(
            firsts, lasts, found[: len(firsts)], found[len(firsts) :], strict=True
        )
        if (a.script, a.runner_name) != (b.script, b.runner_name)
    ]
    assert not by_conc, "the script depends on the concurrency:\n" + "\n".join(by_conc)
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
    verdicts = parity.verdicts
    folders = Counter(v.script.split("/")[2] for v in verdicts)
    launches = Counter(v.launch or "none" for v in verdicts)
    used = Counter(name for v in verdicts for name in v.allowed)
    print(
        f"\n{parity.jobs} single-node jobs; {len(verdicts)} active scripts {dict(folders)}, "
        f"launched by {dict(launches)}; runner values mapped for "
        f"{sum(bool(v.mapped) for v in verdicts)}; allowed differences {dict(used)}; jobs no "
        f"launcher finds a script for: {sorted(parity.no_script)}"
    )
    failed = {v.script: f"plan exit {v.plan_exit}: {v.plan_error}" for v in verdicts
              if v.plan_error}  # fmt: skip
    unexplained = {s: why for s, why in failed.items() if s not in PLAN_FAILS}
    assert not unexplained, "\n".join(f"{s}: {why}" for s, why in unexplained.items())
    assert not set(PLAN_FAILS) - set(failed), f"PLAN_FAILS no longer needed: {PLAN_FAILS}"
    seen = {(v.script.removeprefix(SCRIPTS), field) for v in verdicts for field in v.differences}
    problems = [
        f"{v.script} ({v.job['exp-name']} conc {v.job['conc']} on {v.runner_name}) {field}:\n  "
        + "\n  ".join(texts)
        for v in verdicts
        for field, texts in v.differences.items()
        if (v.script.removeprefix(SCRIPTS), field) not in EXCEPTIONS
    ]
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems)
    assert not set(ALLOWED) - set(used), f"ALLOWED no longer needed: {set(ALLOWED) - set(used)}"
    assert not set(EXCEPTIONS) - seen, f"EXCEPTIONS no longer needed: {set(EXCEPTIONS) - seen}"
    assert sum(folders.values()) >= 100 and folders["agentic"] >= 30


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
