"""Render the sbatch script of a single-node job: the engine and the bench in one allocation.

Inside the allocation `python -m inferbench.launch.inalloc JOB_DIR` runs the same local
backend the `local` backend uses; the script only adds the scheduler's directives and writes
its own exit status (accounting may be disabled, so `sacct` cannot be relied on).
"""

from __future__ import annotations

import shlex
import sys

from inferbench.core.errors import InputError, Location
from inferbench.launch.plan import ProcessSpec
from inferbench.launch.shellsafe import single_line
from inferbench.launch.site import SlurmSite

SCRIPT_NAME = "sbatch.sh"
EXIT_STATUS_FILE = "exit-status"


def container_wrap(spec: ProcessSpec, site: SlurmSite, image: str, workdir: str) -> ProcessSpec:
    """Run the server in a pyxis container step when the cluster says so; else unchanged."""
    if site.container_runtime not in ("pyxis", "enroot") or not image:
        return spec
    prefix = ["srun", "--overlap", "--ntasks=1", f"--container-image={pyxis_image(image)}"]
    if "," in workdir or ":" in workdir:
        # pyxis splits --container-mounts at commas and colons: `/x,/etc:/etc` would mount
        # the host's /etc; quoting cannot keep them inside one mount
        raise InputError(
            f"the job folder {workdir!r} has a ',' or ':', which pyxis would read as"
            " another container mount",
            location=Location(key="--runs-dir"),
            hint="choose a --runs-dir whose path has no ',' or ':'",
        )
    mounts = [*site.container_mounts, f"{workdir}:{workdir}"]
    prefix += [f"--container-mounts={','.join(mounts)}", f"--container-workdir={workdir}"]
    return spec.model_copy(update={"argv": (*prefix, *spec.argv)})


def pyxis_image(image: str) -> str:
    """enroot wants `registry#repo:tag`; a `.sqsh` file or an already-`#` reference stays."""
    if image.endswith(".sqsh") or "#" in image:
        return image
    first, sep, rest = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return f"{first}#{rest}"
    return image


def _directives(job_name: str, site: SlurmSite, gpus: int) -> list[str]:
    lines = [
        f"--job-name={job_name}",
        "--nodes=1",
        "--ntasks=1",
        "--output=logs/slurm-%j.out",
    ]
    if site.partition:
        lines.append(f"--partition={site.partition}")
    if site.account:
        lines.append(f"--account={site.account}")
    if site.time_limit:
        lines.append(f"--time={site.time_limit}")
    if site.gpus_per_node > 0 and gpus > 0:
        lines.append(f"--gres=gpu:{min(gpus, site.gpus_per_node)}")
    lines += site.sbatch_directives
    # a comment line ends at a line break: quoting cannot keep one inside a directive
    where = Location(key=f"cluster {site.name} scheduler")
    return [
        f"#SBATCH {shlex.quote(single_line(line, 'sbatch directive', where))}" for line in lines
    ]


def render_sbatch(job_name: str, site: SlurmSite, gpus: int, job_dir: str) -> str:
    python = site.python or sys.executable
    run = shlex.join([python, "-m", "inferbench.launch.inalloc", job_dir])
    status = shlex.quote(EXIT_STATUS_FILE)
    body = [
        "#!/bin/bash",
        *_directives(job_name, site, gpus),
        "set -u",
        f"cd {shlex.quote(job_dir)} || exit 1",
        run,
        "rc=$?",
        f'printf "%s\\n" "$rc" > {status}.tmp && mv -f {status}.tmp {status}',
        'exit "$rc"',
    ]
    return "\n".join(body) + "\n"
