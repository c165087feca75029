"""`--changed-since REV`: the jobs of the config keys named by changelog entries appended since REV.

The changelog at REV is read with git (`inferbench.checks.gitbase`); its entry count N marks
where the new entries begin, so the entries CI benchmarks are the current file's entries from
index N on (the changelog is append-only; the checker reports edits to old entries). A changelog
absent at REV makes every entry new. Each new entry is expanded on its own, with its flags:
`evals-only` -> `EvalMode.ONLY`, `all-evals` -> `EvalMode.ALL`, `scenario-type` -> only those
scenarios; the command-line filters apply on top (`--config-keys` narrows the entry's keys).
Jobs that two entries both select are emitted once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from inferbench.checks.gitbase import read_base
from inferbench.config.changelog import Changelog, ChangelogItem, key_matches
from inferbench.config.master import MasterConfig
from inferbench.config.yamlio import parse_yaml
from inferbench.errors import ConfigError, InputError
from inferbench.matrix.expand import ExpandContext, dedupe, expand_masters
from inferbench.matrix.filters import EvalMode, SweepFilters
from inferbench.matrix.job import Job


def base_entry_count(root: Path, changelog_file: Path, rev: str) -> int:
    """How many entries the changelog had at `rev` (0 when the file did not exist there)."""
    try:
        base = read_base(root, rev, [changelog_file])
    except InputError as exc:  # its wording names check's --base flag
        raise InputError(exc.message.replace("--base", "--changed-since"), hint=exc.hint) from None
    text = base.text(changelog_file)
    if text is None:
        return 0
    doc = parse_yaml(text, Path(f"{rev}:{changelog_file.name}"))
    return len(doc.data) if isinstance(doc.data, list) else 0


def appended_items(root: Path, changelog: Changelog, rev: str) -> tuple[ChangelogItem, ...]:
    """The changelog entries appended since `rev`."""
    return changelog.items[base_entry_count(root, changelog.file, rev) :]


def _entry_keys(
    item: ChangelogItem, masters: Mapping[str, MasterConfig], narrow: tuple[str, ...]
) -> list[str]:
    keys: list[str] = []
    for pattern in item.entry.config_keys:
        matched = [k for k in masters if key_matches(pattern, k)]
        if not matched:
            raise ConfigError(
                f"changelog entry names {pattern!r}, which matches no master entry",
                location=item.location,
                hint="fix the key, or add the master entry it names",
            )
        keys.extend(k for k in matched if k not in keys)
    if narrow:
        keys = [k for k in keys if any(key_matches(p, k) for p in narrow)]
    return keys


def _entry_filters(item: ChangelogItem, keys: list[str], filters: SweepFilters) -> SweepFilters:
    entry = item.entry
    evals = filters.evals
    if entry.all_evals:
        evals = EvalMode.ALL
    elif entry.evals_only:
        evals = EvalMode.ONLY
    scenarios = entry.scenario_type or filters.scenario_types
    if entry.scenario_type and filters.scenario_types:
        scenarios = tuple(s for s in entry.scenario_type if s in filters.scenario_types)
    return replace(filters, config_keys=tuple(keys), evals=evals, scenario_types=scenarios)


def changed_jobs(
    items: tuple[ChangelogItem, ...],
    masters: Mapping[str, MasterConfig],
    filters: SweepFilters,
    context: ExpandContext,
) -> list[Job]:
    """The jobs the new changelog entries ask for, each entry expanded with its own flags."""
    jobs: list[Job] = []
    for item in items:
        keys = _entry_keys(item, masters, filters.config_keys)
        if not keys:
            continue
        entry_filters = _entry_filters(item, keys, filters)
        if entry_filters.scenario_types or not item.entry.scenario_type:
            jobs.extend(expand_masters(masters, entry_filters, context))
    return dedupe(jobs)
