"""What a runner's launcher passes into the benchmark container with a value of its own.

`srun ... --export=ALL,PORT=8888,AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache` and
docker's `-e PYTHONPYCACHEPREFIX=/tmp/pycache/` (`--env NAME=VALUE` too). A value the
launcher computes (`$...`) and a bare `-e NAME` (forwarded from the launcher's own
environment: secrets, the job's inputs) are not read; neither is PORT, which a local run
picks.
"""

from __future__ import annotations

import re

_SRUN_EXPORT = re.compile(r"--export=ALL((?:,[A-Za-z_][A-Za-z0-9_]*=[^,\s\\]*)+)")
# `-e NAME=VALUE`, `--env NAME=VALUE`, `--env=NAME=VALUE` (launch_rtx6000pro-lat.sh writes
# the long form)
_DOCKER_ENV = re.compile(
    r"(?:^|\s)(?:-e\s+|--env(?:\s+|=))([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s\\]+)"
)


def launcher_exports(text: str) -> dict[str, str]:
    """The variables a launcher's text passes into the container with a value of its own
    (not `$...`, which the launcher computes), in file order; PORT is the run's to pick."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        for group in _SRUN_EXPORT.findall(line):
            for item in group.strip(",").split(","):
                name, _, value = item.partition("=")
                found[name] = value
        for name, value in _DOCKER_ENV.findall(line):
            found[name] = value.strip("\"'")
    return {k: v for k, v in found.items() if "$" not in v and k != "PORT"}
