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


def load_deployments(
    root: Path, filters: SweepFilters, selector: str | None = None
) -> tuple[Project, list[Deployment]]:
    """The project at `root` and its sweep (filtered), grouped into deployments. An entry
    the filters (or the `selector`, a config-key glob) pick that `check` reports as an error
    it cannot run is refused with that error (see `refuse_invalid_entries`)."""
    from inferbench.config.project import load_project
    from inferbench.matrix.api import with_runner_config, without_unsweepable
    from inferbench.matrix.expand import expand_project
    from inferbench.matrix.filters import SweepFilters

    project = with_runner_config(load_project(root), filters)
    refuse_invalid_entries(project, filters, selector)
    # the entries left out of scope that make no job are left out of the sweep
    project = without_unsweepable(project, [])
    jobs = expand_project(project, filters)
    filters.refuse_empty(len(jobs), lambda: len(expand_project(project, SweepFilters())))
    return project, group_jobs(jobs)


def refuse_invalid_entries(
    project: Project, filters: SweepFilters, selector: str | None = None
) -> None:
    """Raise the error of the first entry in scope that failed validation, makes no job
    (`tp: 0`) or holds a value that would reach a shell, an sbatch file or a terminal as
    something else than it says (a setting that is not KEY=VALUE, an image that is no
    reference): the words `check` uses, at the same file, line and key.

    In scope: the entries --config-keys names (all without it), narrowed to those the
    `selector` glob matches when it matches any key (else it is a fingerprint prefix), and,
    for an entry that loaded, to those the other entry filters keep."""
    from inferbench.config.changelog import key_matches
    from inferbench.config.entry_problems import unrunnable

    patterns = filters.config_keys
    keys = [*project.masters, *(e.config_key for e in project.master_errors if e.config_key)]
    narrow = selector is not None and any(key_matches(selector, k) for k in keys)

    def in_scope(key: str | None) -> bool:
        if key is None:
            return not patterns and not narrow
        if patterns and not any(key_matches(p, key) for p in patterns):
            return False
        return not narrow or key_matches(str(selector), key)

    for error in project.master_errors:
        if in_scope(error.config_key):
            raise error
    for key, config in project.masters.items():
        entry = config.entry
        if not in_scope(key) or not filters.wants_node_type(entry.multinode):
            continue
        if not filters.wants_entry(key, entry.precision, entry.framework, entry.runner):
            continue
        problems = unrunnable(config)
        if problems:
            raise problems[0].error()


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
