"""`inferbench sim serve`: the simulator stands in for any engine of any job."""

from __future__ import annotations

import sys

from inferbench.launch.engines.common import EngineArgs, ServerCommand

READY_PATTERN = r"inferbench sim: listening on (http://\S+)"


def sim_command(args: EngineArgs, *, job_file: str, python: str | None = None) -> ServerCommand:
    """Serve the simulated engine for `job_file`; port 0 lets the OS pick a free port."""
    exe = python or sys.executable
    argv = [exe, "-m", "inferbench.cli.main", "sim", "serve", "--job", job_file]
    argv += ["--host", args.host, "--port", str(args.port)]
    return ServerCommand(argv=tuple(argv))
