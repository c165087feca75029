"""The simulator as an engine: `inferbench sim serve` stands in for any engine of any job."""

from __future__ import annotations

import sys

from inferbench.engines.layout import WorkerLayout
from inferbench.engines.server import EngineArgs, ServerCommand
from inferbench.engines.spec import EngineSpec
from inferbench.engines.values import FlagGetter

READY_PATTERN = r"inferbench sim: listening on (http://\S+)"


def layout(get: FlagGetter) -> WorkerLayout:
    raise ValueError("the simulator has no flags of its own: read the simulated engine's")


def server(args: EngineArgs, *, job_file: str, python: str | None = None) -> ServerCommand:
    """Serve the simulated engine for `job_file`; port 0 lets the OS pick a free port."""
    exe = python or sys.executable
    argv = [exe, "-m", "inferbench.cli.main", "sim", "serve", "--job", job_file]
    argv += ["--host", args.host, "--port", str(args.port)]
    return ServerCommand(argv=tuple(argv), ready_pattern=READY_PATTERN)


_SIMULATES = "the simulator serves as the job's own engine, whose flags and names apply"
SPEC = EngineSpec(
    key="sim",
    display="the simulator",
    aliases=("sim",),
    serve_frameworks=(),
    known_flags=frozenset(),
    flag_aliases={},
    limit_flags={},
    worker_wide_batch=False,
    flag_case="kebab",
    negated_flags=False,
    dotted_flags=False,
    exact_flags=False,
    release_images=(),
    layout=layout,
    server=server,
    health_path="/health",
    sim_flags={},
    cache_metrics=None,
    env_prefixes=(),
    script=None,
    sim_profile=None,
    sim_readers=None,
    not_applicable={
        "script": "no tree's script starts it: `run --engine sim` serves the job in its place",
        "sim_profile": "it is the simulator: it costs the job's own engine by that engine's "
        "profile",
        "sim_readers": _SIMULATES,
        "serve_frameworks": "no framework names it: it runs any job that asks (--engine sim)",
        "known_flags": _SIMULATES,
        "flag_aliases": _SIMULATES,
        "limit_flags": _SIMULATES,
        "release_images": "it ships with inferbench",
        "layout": _SIMULATES,
        "sim_flags": _SIMULATES,
        "cache_metrics": _SIMULATES + " (sim serve exports them in that engine's names)",
        "env_prefixes": "it reads no engine environment (and INFERBENCH_ may hold a key)",
    },
)
