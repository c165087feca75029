"""Deployment plans as data: what a backend will run, printable and diffable before it runs.

A `Plan` is a pure function of a job, an engine, a backend and a cluster. Nothing in it is
executed by building it; backends (`local`, `slurm`, `srtctl`) execute plans.
"""

from __future__ import annotations

import json
import shlex
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import Field

from inferbench.bench.preset import SA_BENCH
from inferbench.core.model import FrozenModel
from inferbench.engines.choice import Engine
from inferbench.launch.treescript.model import ScriptPlan

if TYPE_CHECKING:
    from inferbench.bench.settings import ClientOptions


class Backend(StrEnum):
    LOCAL = "local"
    SLURM = "slurm"
    SRTCTL = "srtctl"


class ProcessSpec(FrozenModel):
    """One server process: exact argv, extra environment, working directory, health probe.

    `port` is the port the argv asks for; 0 means the process picks one and prints it on a
    line matching `ready_pattern` (a regex with one group: the base URL).
    """

    name: str
    argv: tuple[str, ...]
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    host: str = "127.0.0.1"
    port: int = 0
    health_path: str = "/health"
    ready_pattern: str | None = None

    @property
    def health_url(self) -> str | None:
        if self.port == 0:
            return None  # learned from the process's own stdout line
        return f"http://{self.host}:{self.port}{self.health_path}"

    def shell_line(self) -> str:
        """The command as one shell line; every value quoted."""
        env = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(self.env.items()))
        cmd = shlex.join(self.argv)
        return f"env {env} {cmd}" if env else cmd


class RenderedFile(FrozenModel):
    """A file the plan writes under the job's `rendered/` folder before anything runs."""

    name: str  # a plain file name, no folders
    content: str
    executable: bool = False


class BenchPoint(FrozenModel):
    """One concurrency point of a deployment, in sa-bench's closed-loop convention."""

    concurrency: int
    num_prompts: int
    num_warmups: int


class EvalPlan(FrozenModel):
    """The accuracy evals of a deployment: run after its throughput points (or instead of
    them, `only`), once per eval concurrency, against the same server."""

    task: str = "gsm8k"
    concurrencies: tuple[int, ...]
    context_length: int
    dataset: str | None = None  # a local file or folder; None: the Hugging Face cache
    only: bool = False  # an eval-only job: no throughput points
    limit: int | None = None  # first N questions (InferenceX's EVAL_LIMIT smoke runs)


class AgenticBench(FrozenModel):
    """An agentic job's replay: each point runs `lanes = conc` for `duration_s` seconds."""

    duration_s: float = Field(gt=0)
    trace: str | None = None  # a trace file or folder; None: synthetic sessions
    synth: str = ""  # `inferbench traces synth` spec (k=v,...) when there is no trace
    warmup_sessions: int = Field(default=0, ge=0)
    max_idle_s: float = Field(default=300.0, ge=0)
    max_model_len: int | None = None


def client_options(spec: BenchSpec) -> ClientOptions:
    """The load generator's client settings a plan fixes (failure gate, request timeout)."""
    from inferbench.bench.settings import ClientOptions

    if spec.request_timeout_s is None:
        return ClientOptions(max_failure_rate=spec.max_failure_rate)
    return ClientOptions(
        max_failure_rate=spec.max_failure_rate, request_timeout_s=spec.request_timeout_s
    )


class BenchSpec(FrozenModel):
    """How the load generator drives the deployment (the same for every point but conc)."""

    model: str
    isl: int
    osl: int
    random_range_ratio: float = SA_BENCH.range_ratio
    points: tuple[BenchPoint, ...]
    max_failure_rate: float = SA_BENCH.max_failure_rate
    # a request without its whole response by then fails (None: the load generator's 600 s)
    request_timeout_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    repeats: int = Field(default=1, ge=1)  # measurements per point (conc8.json, conc8_r2.json)
    eval: EvalPlan | None = None
    agentic: AgenticBench | None = None  # multi-turn trace replay instead of random prompts


class Plan(FrozenModel):
    """Everything a backend needs to run one deployment and nothing it must guess."""

    backend: Backend
    engine: Engine
    fingerprint: str
    config_key: str | None = None
    processes: tuple[ProcessSpec, ...] = ()
    files: tuple[RenderedFile, ...] = ()
    submit: tuple[str, ...] = ()  # argv that hands the job to a scheduler (sbatch, srtctl)
    submit_env: dict[str, str] = Field(default_factory=dict)
    bench: BenchSpec
    notes: tuple[str, ...] = ()  # assumptions the planner made, for the reader
    warnings: tuple[str, ...] = ()  # what was asked for and will not happen (printed loudly)
    script: ScriptPlan | None = None  # run through the tree's own benchmark script instead
    # the simulator costs the job's engine as this one: it has no simulator profile of its own
    costed_as: str | None = None

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"

    def render_text(self) -> str:
        """A human-readable, copy-pasteable rendering (what `inferbench plan` prints)."""
        lines = [f"# plan {self.fingerprint} backend={self.backend} engine={self.engine}"]
        if self.config_key:
            lines.append(f"# config-key {self.config_key}")
        lines += [f"# WARNING: {warning}" for warning in self.warnings]
        lines += [f"# note: {note}" for note in self.notes]
        if self.script is not None:
            lines += self.script.render_lines()
        for proc in self.processes:
            lines.append(f"## process {proc.name} (health {proc.health_url or 'from stdout'})")
            if proc.cwd:
                lines.append(f"cd {shlex.quote(proc.cwd)}")
            lines.append(proc.shell_line())
        for file in self.files:
            lines.append(f"## file rendered/{file.name}")
            lines.append(file.content.rstrip("\n"))
        if self.submit:
            env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(self.submit_env.items()))
            lines.append("## submit")
            lines.append((f"env {env} " if env else "") + shlex.join(self.submit))
        concs = ", ".join(str(p.concurrency) for p in self.bench.points)
        bench = f"## bench isl={self.bench.isl} osl={self.bench.osl} concurrencies=[{concs}]"
        if self.bench.request_timeout_s is not None:
            bench += f" request-timeout={self.bench.request_timeout_s:g}s"
        lines.append(bench)
        return "\n".join(lines) + "\n"
