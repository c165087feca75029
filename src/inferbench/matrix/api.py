"""The library call behind `inferbench sweep`: load a tree, select, expand."""

from __future__ import annotations

from pathlib import Path

from inferbench.config.project import Project, load_project
from inferbench.errors import ConfigError, Location
from inferbench.matrix.changed import appended_items, changed_jobs
from inferbench.matrix.expand import expand_project, project_context
from inferbench.matrix.filters import SweepFilters
from inferbench.matrix.job import Job


def sweep_project(
    project: Project, filters: SweepFilters, *, changed_since: str | None = None
) -> list[Job]:
    """The jobs of `project`; with `changed_since`, only those new changelog entries name."""
    if changed_since is None:
        return expand_project(project, filters)
    if project.changelog is None:
        raise ConfigError(
            "--changed-since needs a perf changelog, and this tree has none",
            location=Location(project.root / project.layout.changelog),
            hint="add perf-changelog.yaml, or drop --changed-since",
        )
    items = appended_items(project.root, project.changelog, changed_since)
    return changed_jobs(items, project.masters, filters, project_context(project))


def sweep_tree(root: Path, filters: SweepFilters, *, changed_since: str | None = None) -> list[Job]:
    """Load the tree at `root` and sweep it (see `sweep_project`)."""
    return sweep_project(load_project(root), filters, changed_since=changed_since)
