"""Run the selected rules over a benchmark tree and return the findings, sorted."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from inferbench.checks import result_cache
from inferbench.checks.acceptance import AcceptanceSetting, collect_acceptance
from inferbench.checks.collect import Collector, Subjects, iter_recipe_uses
from inferbench.checks.finding import Finding
from inferbench.checks.registry import (
    INTERNAL_ERROR_ID,
    Rule,
    all_rules,
    run_rule,
    select_rules,
)
from inferbench.checks.report import CheckOptions, CheckReport
from inferbench.checks.script_acceptance import script_settings
from inferbench.checks.subjects import (
    BaseView,
    ChangelogSubject,
    ClusterSubject,
    Coverage,
    DeploymentSubject,
    DuplicateKeys,
    ImageUse,
    MasterEntryError,
    MasterSubject,
    RecipeLoad,
    RecipeReference,
    RecipeUse,
    RetiredRecipes,
    UpstreamReferences,
)
from inferbench.config.changelog import parse_changelog
from inferbench.config.gitbase import read_base
from inferbench.config.project import Project, load_project
from inferbench.config.recipe import locate
from inferbench.config.srt_slurm_refs import SrtSlurmSources
from inferbench.config.srtctl_loader import use_srtctl
from inferbench.config.yamlio import parse_yaml
from inferbench.core.errors import ConfigError, InputError, Location
from inferbench.core.fsread import MAX_CONFIG_BYTES, read_text_file


def check_tree(
    root: Path,
    options: CheckOptions | None = None,
    *,
    lookup: result_cache.Lookup | None = None,
    as_base: bool = False,
) -> CheckReport:
    """Load the tree at `root` (ConfigError/InputError on unreadable input) and check it.

    A result of an earlier run on the same bytes is taken from the result cache
    (`result_cache`); `lookup` is that cache's answer when the caller asked it already.
    `as_base`: the tree is `options.base` itself (the base side of `check --base`, written
    out of git): it is checked as a tree with no change since that base, without git.
    """
    options = options or CheckOptions()
    sources = SrtSlurmSources(options.srt_slurm_paths) if options.srt_slurm_paths else None
    rules = select_rules(all_rules(), options.select, options.ignore)
    if lookup is None:
        lookup = result_cache.lookup(root, options)
    if lookup.report is not None:
        return lookup.report
    use_srtctl(options.srtctl)
    try:
        project = load_project(root).read_all()  # a bad file is exit 2, not a rule crash
        base = None
        if options.base is not None:
            view = own_base_view if as_base else read_base_view
            base = view(project, options.base)
        report = check_project(project, rules, options, base, sources)
        if base is not None:
            report = dataclasses.replace(report, changed=base.changed_files)
    finally:
        use_srtctl(False)
    if lookup.key is not None:
        result_cache.store(lookup.key, report)
    return report


def read_base_view(project: Project, rev: str) -> BaseView:
    """The changelog and master entries at `rev`, and the files changed since (via git)."""
    changelog_path = project.root / project.layout.changelog
    base = read_base(project.root, rev, [changelog_path, *project.master_files])
    return _base_view(project, rev, base.text, base.changed)


def own_base_view(project: Project, rev: str) -> BaseView:
    """The tree as its own base `rev`: its changelog and master entries, nothing changed."""

    def text(path: Path) -> str | None:
        if not path.is_file():
            return None
        return read_text_file(path, MAX_CONFIG_BYTES, errors="replace")

    return _base_view(project, rev, text, frozenset())


def _base_view(
    project: Project, rev: str, text_at: Callable[[Path], str | None], changed: frozenset[Path]
) -> BaseView:
    changelog_path = project.root / project.layout.changelog
    changelog = None
    text = text_at(changelog_path)
    if text is not None:
        changelog = _at_base(rev, lambda: parse_changelog(text, changelog_path))
    master_data: dict[str, Any] = {}
    for path in project.master_files:
        master_text = text_at(path)
        if master_text is None:
            continue
        data = _at_base(rev, lambda t=master_text, p=path: parse_yaml(t, p).data)  # type: ignore[misc]
        if isinstance(data, dict):
            master_data.update(data)
    return BaseView(rev, changelog, master_data, changed, changelog_text=text)


def _at_base(rev: str, load: Callable[[], Any]) -> Any:
    try:
        return load()
    except ConfigError as exc:
        raise InputError(
            f"at base {rev}: {exc.render()}",
            hint="the base revision's file must parse to compare against it",
        ) from None


def check_project(
    project: Project,
    rules: Sequence[Rule[Any]],
    options: CheckOptions,
    base: BaseView | None = None,
    sources: SrtSlurmSources | None = None,
) -> CheckReport:
    if sources is None and options.srt_slurm_paths:
        sources = SrtSlurmSources(options.srt_slurm_paths)
    subjects = Collector(project, sources).collect()
    found: set[Finding] = set()
    for rule in rules:
        for subject, where in _subjects_for(rule.subject, subjects, project, base):
            found.update(run_rule(rule, subject, where))
    internal_ignored = any(s.upper() == INTERNAL_ERROR_ID or s == "internal-error"
                           for s in options.ignore)  # fmt: skip
    findings = sorted(
        (f for f in found if not (internal_ignored and f.rule == INTERNAL_ERROR_ID)),
        key=Finding.sort_key,
    )
    return CheckReport(project.root, tuple(findings), tuple(r.id for r in rules))


def _acceptance_settings(project: Project, subjects: Subjects) -> list[AcceptanceSetting]:
    """Master settings, recipe environments and single-node scripts that pin synthetic
    acceptance (a malformed golden file: ConfigError, as for any tree file)."""
    golden = project.golden_al()
    found = list(collect_acceptance(subjects.deployments, golden))
    for path in project.single_node_scripts():
        shown = path.relative_to(project.root).as_posix()
        text = read_text_file(path, MAX_CONFIG_BYTES, error=ConfigError, errors="replace")
        found += script_settings(path, text, golden, shown)
    return found


def _recipe_subjects(
    kind: type, subjects: Subjects
) -> list[tuple[Any, Location | Callable[[], Location]]]:
    """The subjects of the tree's recipe files: retired, rejected, with duplicate keys, used."""
    if kind is RetiredRecipes:
        return [(r, Location(r.paths[0])) for r in subjects.retired]
    if kind is RecipeLoad:
        return [(load, Location(load.path)) for load in subjects.loads]
    if kind is DuplicateKeys:
        return [(d, Location(d.path)) for d in subjects.duplicates]
    # a use is located only if a rule crashes on it
    return [(u, functools.partial(locate, u.recipe)) for u in iter_recipe_uses(subjects)]


def _subjects_for(
    kind: type, subjects: Subjects, project: Project, base: BaseView | None
) -> list[tuple[Any, Location | Callable[[], Location]]]:
    if kind is MasterSubject:
        return [(s, s.config.locate()) for s in subjects.masters]
    if kind is MasterEntryError:
        return [(MasterEntryError(e), e.location) for e in project.master_errors]
    if kind is RecipeReference:
        return [(r, r.location) for r in subjects.references]
    if kind is UpstreamReferences:
        return [(u, u.references[0].location) for u in subjects.upstream]
    if kind in (RetiredRecipes, RecipeLoad, DuplicateKeys, RecipeUse):
        return _recipe_subjects(kind, subjects)
    if kind is Coverage:
        return [] if subjects.coverage is None else [(subjects.coverage, Location())]
    if kind is DeploymentSubject:
        return [(d, d.reference.location) for d in subjects.deployments]
    if kind is ClusterSubject:
        return [(c, c.cluster.locate()) for c in subjects.clusters]
    if kind is ImageUse:
        return [(i, i.location) for i in subjects.images]
    if kind is AcceptanceSetting:
        return [(s, s.location) for s in _acceptance_settings(project, subjects)]
    if kind is ChangelogSubject:
        if project.changelog is None:
            return []
        users = {path: tuple(keys) for path, keys in subjects.recipe_users.items()}
        subject = ChangelogSubject(project, project.changelog, base, users)
        return [(subject, Location(project.changelog.file))]
    raise TypeError(f"no subjects of type {kind.__name__}")
