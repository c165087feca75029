"""One job, two views: what the sandboxed launch step started (the oracle) and what
`inferbench plan --format json` says it starts; the fields where they differ."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .parity_container import container_spec
from .parity_sandbox import Recording, Sandbox
from .parity_workflow import Workflows

BENCH_CLIENT = "utils/bench_serving/benchmark_serving.py"
# the variables the plan's job must carry as the generator's row does: they identify the job
IDENTITY = (
    "EXP_NAME", "MODEL", "IMAGE", "FRAMEWORK", "PRECISION", "TP", "PP_SIZE", "DCP_SIZE",
    "PCP_SIZE", "EP_SIZE", "DP_ATTENTION", "SPEC_DECODING", "CONC", "ISL", "OSL",
    "KV_OFFLOADING", "RUNNER_TYPE", "SCENARIO_TYPE",
)  # fmt: skip


@dataclass(frozen=True)
class Process:
    argv: tuple[str, ...]
    env: dict[str, str]


@dataclass(frozen=True)
class View:
    """What a job's script starts, as one side sees it."""

    engines: tuple[Process, ...]
    bench: tuple[Process, ...]  # sa-bench calls, argv from the client's path on
    aiperf: tuple[tuple[str, ...], ...]  # the agentic replay's aiperf calls
    script_rc: int | None


@dataclass
class Verdict:
    """The differences of one job, by field; `plan_error` when plan gave no usable view."""

    script: str
    job: dict[str, Any]
    runner_name: str
    plan_exit: int = 0
    plan_error: str = ""
    differences: dict[str, list[str]] = field(default_factory=dict)
    allowed: set[str] = field(default_factory=set)  # ALLOWED names that made a difference
    mapped: list[str] = field(default_factory=list)  # the runner's values mapped (see Runner)
    launch: str = ""  # srun or docker

    def add(self, name: str, text: str) -> None:
        self.differences.setdefault(name, []).append(text)


@dataclass(frozen=True)
class Runner:
    """What the launcher's container launch shows of the runner: the call (srun or docker),
    the variables it gives the container, and values only a runner has, to map onto a local
    run's: a checkpoint the launcher staged on the runner's storage (MODEL or MODEL_PATH set to
    a path; a local run keeps the job's model id unless the caller stages one) and a port the
    launcher derives from its Slurm job id (a local run uses 8888)."""

    tool: str
    passed: frozenset[str]  # the variables the container gets
    mapping: tuple[tuple[str, str], ...]  # (runner's value, local value), longest first


def runner_of(recording: Recording, step_env: Mapping[str, str], local_port: str) -> Runner:
    launches = [
        (c, spec)
        for c in recording.of("host", "tool")
        if (spec := container_spec(c.argv[0], list(c.argv[1:]))) is not None
    ]
    if not launches:
        return Runner("", frozenset(), ())
    call, spec = launches[-1]
    with _environ(call.env):  # the container's variables, as the launcher passed them
        spec = container_spec(call.argv[0], list(call.argv[1:]))
    assert spec is not None
    passed = spec[2]
    mapping: list[tuple[str, str]] = []
    model = step_env["MODEL"]
    for name in ("MODEL", "MODEL_PATH"):
        value = passed.get(name, "")
        if value.startswith("/") and value != model:
            mapping.append((value, model))
    port = passed.get("PORT", local_port)
    if port != local_port:
        mapping += [(f":{port}", f":{local_port}"), (f"={port}", f"={local_port}")]
        mapping.append((port, local_port))  # a whole argument only (see _map)
    mapping.sort(key=lambda pair: -len(pair[0]))
    return Runner(call.argv[0], frozenset(passed), tuple(mapping))


@contextlib.contextmanager
def _environ(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _map(text: str, runner: Runner) -> str:
    for old, new in runner.mapping:
        if not old.isdigit():
            text = text.replace(old, new)
        elif text == old:
            text = new
    return text


def oracle_view(recording: Recording, runner: Runner) -> View:
    def process(argv: tuple[str, ...], env: Mapping[str, str]) -> Process:
        return Process(
            tuple(_map(a, runner) for a in argv), {k: _map(v, runner) for k, v in env.items()}
        )

    engines = tuple(process(c.argv, c.env) for c in recording.of("container", "engine"))
    bench = tuple(process(c.argv[1:], c.env) for c in recording.of("container", "bench"))
    aiperf = tuple(
        process(c.argv, {}).argv for c in recording.of("container", "tool") if c.argv[0] == "aiperf"
    )
    return View(engines, bench, aiperf, recording.script_rc)


def plan_view(point: Mapping[str, Any]) -> View:
    contract = dict(point["env"])

    def process(item: Mapping[str, Any]) -> Process:
        return Process(tuple(item["argv"]), {**contract, **item["env"]})

    aiperf = tuple(tuple(t) for t in point["tools"] if t and t[0] == "aiperf")
    return View(
        tuple(map(process, point["engines"])),
        tuple(map(process, point["bench"])),
        aiperf,
        point["exit_code"],
    )


@functools.cache
def _yaml(path: Path) -> Any:
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def config_keys(tree: Path, job: Mapping[str, Any]) -> list[str]:
    """Master-config keys whose entry has the job's image, model prefix, precision,
    framework and runner (several keys may describe the same job)."""
    keys = []
    for master in sorted((tree / "configs").glob("*-master.yaml")):
        for key, entry in _yaml(master).items():
            if all(
                entry.get(k) == job.get(k)
                for k in ("image", "model-prefix", "precision", "framework", "runner")
            ):
                keys.append(key)
    return keys


def selection(job: Mapping[str, Any]) -> list[str]:
    """The job's concurrency, scenario and sequence lengths as selection flags, spelled the
    same by InferenceX's `test-config` and `inferbench plan` (which marks evals, as the
    generator does, among the jobs selected)."""
    if job.get("scenario-type") == "agentic-coding":
        return ["--scenario-type", "agentic-coding"]
    seq = f"{int(job['isl']) // 1024}k{int(job['osl']) // 1024}k"
    return ["--scenario-type", "fixed-seq-len", "--seq-lens", seq]


def generator_args(key: str, job: Mapping[str, Any]) -> list[str]:
    return ["--config-keys", key, "--conc", str(job["conc"]), *selection(job)]


def plan_args(tree: Path, key: str, job: Mapping[str, Any]) -> list[str]:
    args = ["plan", key, "--root", str(tree), "--concurrency", str(job["conc"])]
    return [*args, *selection(job), "--format", "json"]


def run_plan(args: list[str]) -> tuple[int, str, str]:
    """`inferbench plan ARGS` in this process (a pool's worker): exit status, stdout, stderr."""
    from inferbench.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return code, out.getvalue(), err.getvalue()


def find_point(plans: list[dict[str, Any]], env: Mapping[str, str]) -> dict[str, Any] | None:
    """The plan point whose job is the generator's (same identity variables)."""
    for plan in plans:
        script = plan.get("script")
        if not script:
            continue
        for point in script["points"]:
            if all(point["env"].get(k) == env.get(k) for k in IDENTITY):
                return {**point, "script": script["script"], "runner_name": script["runner_name"]}
    return None


def plan_point(
    tree: Path, key: str, job: Mapping[str, Any], env: Mapping[str, str], verdict: Verdict
) -> dict[str, Any] | None:
    """The plan's point for `job` of master key `key` (None: the verdict says why)."""
    if not key:
        verdict.plan_error = "no master key builds the job (the generator's test-config)"
        return None
    code, out, err = run_plan(plan_args(tree, key, job))
    verdict.plan_exit = code
    if code != 0:
        verdict.plan_error = f"{key}: exit {code}: {err.strip()[-400:]}"
        return None
    point = find_point(json.loads(out), env)
    if point is None:
        verdict.plan_error = f"{key}: no planned job with the generator's {', '.join(IDENTITY)}"
    return point


@dataclass(frozen=True)
class Item:
    """One active script and the job it is checked on."""

    script: str
    job: dict[str, Any]
    runner_name: str
    key: str  # the master config key the generator built the job from
    tree: Path
    home: Path
    ignored: frozenset[str]  # never compared (the sandbox's own, the runner's, secrets)
    allowed: frozenset[str]  # may differ, for the reasons the test gives
    oracle_tree: Path | None = None  # another tree for the oracle (the tests' control)
    oracle_job: dict[str, Any] | None = None  # another job for the oracle (the control)


def check(item: Item) -> Verdict:
    """Run the oracle and `plan` for one job; the verdict (a pool's worker)."""
    verdict = Verdict(item.script, item.job, item.runner_name)
    oracle_tree = item.oracle_tree or item.tree
    step = Workflows(oracle_tree).launch_step(item.oracle_job or item.job, item.runner_name)
    recording = Sandbox(oracle_tree, item.home).run(step)
    identity = Workflows(item.tree).launch_step(item.job, item.runner_name).env
    point = plan_point(item.tree, item.key, item.job, identity, verdict)
    if point is None:
        return verdict
    if point["script"] != item.script or point["runner_name"] != item.runner_name:
        verdict.add(
            "script choice",
            f"oracle {item.script} on {item.runner_name}, "
            f"plan {point['script']} on {point['runner_name']}",
        )
    runner = runner_of(recording, step.env, point["env"].get("PORT", ""))
    verdict.launch = runner.tool
    verdict.mapped = [f"{old} -> {new}" for old, new in runner.mapping]
    compare(oracle_view(recording, runner), plan_view(point), verdict, item, runner)
    return verdict


def _processes(name: str, oracle: tuple[Process, ...], plan: tuple[Process, ...]) -> list[str]:
    if [p.argv for p in oracle] != [p.argv for p in plan]:
        return [f"{name} argv:\n  oracle {[list(p.argv) for p in oracle]}\n  plan   "
                f"{[list(p.argv) for p in plan]}"]  # fmt: skip
    return []


def env_differences(
    oracle: Mapping[str, str], plan: Mapping[str, str]
) -> dict[str, tuple[str | None, str | None]]:
    return {
        k: (oracle.get(k), plan.get(k))
        for k in sorted(set(oracle) | set(plan))
        if oracle.get(k) != plan.get(k)
    }


# the revision folder of a checkpoint a download stand-in left in the HF cache: each side's
# stand-in names it (a real download names the commit)
_REVISION = re.compile(r"(/models--[^/]+/snapshots/)[^/]+")


def _revisionless(view: View) -> View:
    def process(p: Process) -> Process:
        return Process(
            tuple(_REVISION.sub(r"\1<revision>", a) for a in p.argv),
            {k: _REVISION.sub(r"\1<revision>", v) for k, v in p.env.items()},
        )

    return dataclasses.replace(
        view, engines=tuple(map(process, view.engines)), bench=tuple(map(process, view.bench))
    )


def compare(oracle: View, plan: View, verdict: Verdict, item: Item, runner: Runner) -> None:
    """Add each difference to `verdict`: argv exactly (order included), then the environment
    of each engine and sa-bench call over every variable but the ignored and allowed ones.
    A variable docker did not pass (`-e`) is absent in its container whatever the contract
    says: that difference is recorded as the allowed name `docker -e`."""
    oracle, plan = _revisionless(oracle), _revisionless(plan)
    for text in _processes("engine", oracle.engines, plan.engines):
        verdict.add("engine argv", text)
    for text in _processes("sa-bench", oracle.bench, plan.bench):
        verdict.add("sa-bench argv", text)
    if oracle.aiperf != plan.aiperf:
        verdict.add("aiperf argv", f"oracle {oracle.aiperf}\n  plan   {plan.aiperf}")
    for name, a, b in (
        ("engine", oracle.engines, plan.engines),
        ("sa-bench", oracle.bench, plan.bench),
    ):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            for key, (ov, pv) in env_differences(x.env, y.env).items():
                if key in item.ignored:
                    continue
                if key in item.allowed:
                    verdict.allowed.add(key)
                elif ov is None and runner.tool == "docker" and key not in runner.passed:
                    verdict.allowed.add("docker -e")
                else:
                    verdict.add(f"{name} env {key}", f"#{i}: oracle {ov!r} plan {pv!r}")
    if oracle.script_rc != plan.script_rc:
        if oracle.aiperf and plan.aiperf:  # both replayed: the processing is what differs
            verdict.allowed.add("agentic exit")
        else:
            verdict.add("script exit", f"oracle {oracle.script_rc} plan {plan.script_rc}")
