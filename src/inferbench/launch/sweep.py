"""From a benchmark tree and sweep filters to the deployments `inferbench run` executes."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from inferbench.core.errors import InputError, Location
from inferbench.launch.deployment import Deployment, group_jobs

if TYPE_CHECKING:
    from inferbench.config.project import Project
    from inferbench.matrix.filters import SweepFilters


def load_deployments(root: Path, filters: SweepFilters) -> tuple[Project, list[Deployment]]:
    """The project at `root` and its sweep (filtered), grouped into deployments."""
    from inferbench.config.project import load_project
    from inferbench.matrix.api import with_runner_config
    from inferbench.matrix.expand import expand_project
    from inferbench.matrix.filters import SweepFilters

    project = with_runner_config(load_project(root), filters)
    jobs = expand_project(project, filters)
    filters.refuse_empty(len(jobs), lambda: len(expand_project(project, SweepFilters())))
    return project, group_jobs(jobs)


def select(deployments: Sequence[Deployment], selector: str) -> list[Deployment]:
    """Deployments whose config key matches the glob, or whose fingerprint starts with it."""
    chosen = [
        d
        for d in deployments
        if d.fingerprint.startswith(selector.lower())
        or (d.config_key is not None and fnmatch.fnmatchcase(d.config_key, selector))
    ]
    if not chosen:
        raise InputError(
            f"no job matches {selector!r}",
            location=Location(key="JOB-SELECTOR"),
            hint="pass a config key (globs allowed) or a fingerprint prefix (see inferbench sweep)",
        )
    return chosen
