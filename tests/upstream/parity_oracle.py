"""The independent parity oracle: the sweep's single-node jobs, the script each runs, and what
that script starts, all from InferenceX's own files (shares no code with inferbench).

- jobs: InferenceX's generator (`generate_sweep_configs.py full-sweep` over every master
  config, in its oracle venv), rows without prefill/decode (single-node);
- machine: a job's runner label names machines in `configs/runners.yaml`; each distinct
  launcher among them (`launch_${RUNNER_NAME%%_*}.sh`), in the file's order, is run and the
  first that starts a script the tree has wins (a label the file does not list names a cluster:
  `cluster:mi325x-tw` -> launch_mi325x-tw.sh, `h200-dgxc` -> launch_h200-dgxc-*.sh, machine
  `<launcher>_0`; the tree does not name those machines);
- script: the launcher itself chooses it, run in the sandbox (parity_sandbox.py) with
  srun/docker only recording: the command of its container launch;
- what it starts: the launch step run for real in the sandbox, the script in its container.

The script choice is run once per job up to the concurrency: jobs that differ only in `conc`
(and the concurrency an agentic exp-name carries) share it; the test checks that on the
highest-concurrency job of every group.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .parity_container import launched
from .parity_sandbox import WORKSPACE, Call, Sandbox
from .parity_workflow import LaunchStep, Workflows

SINGLE_NODE_SCRIPTS = "benchmarks/single_node/"


@dataclass(frozen=True)
class Choice:
    """The script a job runs, on which machine (None: no launcher of the label starts one)."""

    script: str | None
    runner_name: str
    tried: tuple[str, ...]  # "machine: script or why not", each launcher run


def single_node(jobs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [dict(j) for j in jobs if "prefill" not in j and "decode" not in j]


@functools.cache
def machines(tree: Path, label: str) -> list[str]:
    """The first machine of each launcher a job of `label` can run on, in runners.yaml order."""
    labels = yaml.safe_load((tree / "configs" / "runners.yaml").read_text())["labels"]
    names = list(labels.get(label) or ())
    if not names:
        stem = label.removeprefix("cluster:")
        runners = tree / "runners"
        found = sorted(runners.glob(f"launch_{stem}.sh")) + sorted(
            runners.glob(f"launch_{stem}-*.sh")
        )
        names = [f"{p.stem.removeprefix('launch_')}_0" for p in found]
    first: dict[str, str] = {}
    for name in names:
        launcher = name.split("_", 1)[0]
        if launcher not in first and (tree / "runners" / f"launch_{launcher}.sh").is_file():
            first[launcher] = name
    return list(first.values())


def choice_key(job: Mapping[str, Any]) -> str:
    """A job up to its concurrency (the part of the agentic exp-name after `_conc`)."""
    rest = {k: v for k, v in job.items() if k != "conc"}
    rest["exp-name"] = str(job["exp-name"]).replace(f"_conc{job['conc']}", "_conc*")
    return json.dumps(rest, sort_keys=True)


def _script_of(calls: Sequence[Call], tree: Path) -> str:
    """The script the launcher's container launch runs, or why there is none."""
    launches = [launched(c.argv[0], list(c.argv[1:])) for c in calls]
    found = [item for item in launches if item is not None]
    if not found:
        return "no container launch"
    workdir, command = found[-1]
    words = [w for w in command if w.endswith(".sh")]
    if not words:
        return f"no script in {command}"
    path = words[-1]
    for prefix in (WORKSPACE + "/", workdir.rstrip("/") + "/"):
        path = path.removeprefix(prefix)
    if not path.startswith(SINGLE_NODE_SCRIPTS):
        return f"not a single-node script: {path}"
    if not (tree / path).is_file():
        return f"missing: {path}"
    return path


def choose_scripts(
    tree: Path, workflows: Workflows, jobs: Sequence[Mapping[str, Any]], home: Path
) -> list[Choice]:
    """The Choice of each job, each launcher of its label tried in order."""
    pending = dict(enumerate(jobs))
    tried: dict[int, list[str]] = {k: [] for k in pending}
    out: dict[int, Choice] = {}
    round_no = 0
    while pending:
        batch: list[tuple[int, str, LaunchStep]] = []
        for key, job in pending.items():
            options = machines(tree, str(job["runner"]))
            if round_no < len(options):
                name = options[round_no]
                batch.append((key, name, workflows.launch_step(job, name)))
            else:
                out[key] = Choice(None, "", tuple(tried[key]))
        if not batch:
            break
        halves = (batch[::2], batch[1::2])  # two sandboxes at once: the steps only wait
        with ThreadPoolExecutor(2) as pool:
            futures = [
                pool.submit(
                    Sandbox(tree, home / f"select{round_no}-{i}").select, [s for _, _, s in half]
                )
                for i, half in enumerate(halves)
            ]
            runs = [f.result() for f in futures]
        results: list[list[Call]] = [[] for _ in batch]
        results[::2], results[1::2] = runs
        for (key, name, _), calls in zip(batch, results, strict=True):
            script = _script_of(calls, tree)
            tried[key].append(f"{name}: {script}")
            if script.startswith(SINGLE_NODE_SCRIPTS):
                out[key] = Choice(script, name, tuple(tried[key]))
        pending = {k: j for k, j in pending.items() if k not in out}
        round_no += 1
    return [out[i] for i in range(len(jobs))]
