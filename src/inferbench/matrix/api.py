"""The library call behind `inferbench sweep`: load a tree, select, expand."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from types import MappingProxyType

from inferbench.config.changelog_diff import added_entries
from inferbench.config.entry_problems import unrunnable, unsweepable
from inferbench.config.gitbase import read_texts
from inferbench.config.master import EntryError, load_masters
from inferbench.config.project import Project, load_project
from inferbench.config.runners import load_runners
from inferbench.core.errors import ConfigError, InputError, Location
from inferbench.core.job import Job
from inferbench.matrix.changed import BaseTree, ChangelogRun, changed_jobs
from inferbench.matrix.expand import expand_project, project_context, registry_context
from inferbench.matrix.filters import SweepFilters


def base_tree(project: Project, rev: str) -> BaseTree:
    """The tree's master configs and runners.yaml as they were at `rev` (read with git)."""
    files = [*project.master_files, project.root / project.layout.runners]
    _, texts = read_texts(project.root, rev, files)
    root = project.root.resolve()
    with tempfile.TemporaryDirectory(prefix="inferbench-base-") as tmp:
        copies: list[Path] = []
        for path in files:
            text = texts.get(path.resolve())
            if text is None:
                continue
            copy = Path(tmp) / path.resolve().relative_to(root)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(text, encoding="utf-8")
            copies.append(copy)
        runners_copy = Path(tmp) / project.layout.runners
        masters = load_masters([c for c in copies if c != runners_copy])
        runners = load_runners(runners_copy) if runners_copy.is_file() else None
    head = project_context(project)
    context = registry_context(runners.registry if runners else None, head.resolve_recipe)
    return BaseTree(masters=masters, context=context)


def with_runner_config(project: Project, filters: SweepFilters) -> Project:
    """`project` with the runner registry of `filters.runner_config` (InferenceX's
    `--runner-config`, a path relative to the working directory) instead of its own."""
    if filters.runner_config is None:
        return project
    path = Path(filters.runner_config)
    if not path.is_file():
        raise InputError(
            f"--runner-config {filters.runner_config!r} is not a file",
            location=Location(path, key="--runner-config"),
            hint="give a runners.yaml (labels: and hardware:), e.g. configs/runners.yaml",
        )
    return dataclasses.replace(project, runners=load_runners(path))


def sweep_project(
    project: Project,
    filters: SweepFilters,
    *,
    changed_since: str | None = None,
    changelog_run: ChangelogRun | None = None,
) -> list[Job]:
    """The jobs of `project`; with `changed_since`, those the changelog entries added since
    that revision ask for, as InferenceX's CI selects them (`inferbench.matrix.changed`)."""
    project = with_runner_config(project, filters)
    if changed_since is None:
        jobs = expand_project(project, filters)
        # a changelog that asks for nothing is no typo; filters that select nothing are
        if not project.master_errors:
            filters.refuse_empty(len(jobs), lambda: len(expand_project(project, SweepFilters())))
        return jobs
    if project.changelog is None:
        raise ConfigError(
            "--changed-since needs a perf changelog, and this tree has none",
            location=Location(project.root / project.layout.changelog),
            hint="add perf-changelog.yaml, or drop --changed-since",
        )
    items = added_entries(project.root, project.changelog.file, changed_since)
    base = base_tree(project, changed_since) if any(i.entry.append_only for i in items) else None
    return changed_jobs(
        items,
        project.masters,
        filters,
        project_context(project),
        run=changelog_run or ChangelogRun(),
        base=base,
    )


def sweep_tree(
    root: Path,
    filters: SweepFilters,
    *,
    changed_since: str | None = None,
    changelog_run: ChangelogRun | None = None,
    errors: list[ConfigError] | None = None,
    warnings: list[ConfigError] | None = None,
) -> list[Job]:
    """Load the tree at `root` and sweep it (see `sweep_project`). A master entry that fails
    validation or makes no job (`tp: 0`) is raised; with `errors`, it is appended there and
    the others are swept. With `warnings`, the values swept as InferenceX's generator passes
    them but that `plan` and `run` refuse (`check` errors: see `unrunnable`) are added there."""
    project = load_project(root)
    if warnings is not None:
        for config in project.masters.values():
            warnings.extend(p.error() for p in unrunnable(config) if p.rule != "IB150")
    if project.master_errors and errors is None:
        raise project.master_errors[0]
    if errors is not None:
        errors.extend(project.master_errors)
        project = without_unsweepable(project, errors)
    return sweep_project(project, filters, changed_since=changed_since, changelog_run=changelog_run)


def without_unsweepable(project: Project, errors: list[ConfigError]) -> Project:
    """`project` without the entries that make no job, their errors appended to `errors`
    (and their keys to the invalid ones: a --config-keys naming one is no typo)."""
    dropped: list[EntryError] = []
    for key, config in project.masters.items():
        problems = unsweepable(config)
        if problems:
            dropped.append(EntryError(problems[0].error(), key))
    if not dropped:
        return project
    errors.extend(dropped)
    gone = {e.config_key for e in dropped}
    masters = {k: c for k, c in project.masters.items() if k not in gone}
    return dataclasses.replace(
        project,
        masters=MappingProxyType(masters),
        master_errors=(*project.master_errors, *dropped),
    )
