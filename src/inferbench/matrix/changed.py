"""`--changed-since REV`: the jobs the changelog entries added since REV ask for, selected as
InferenceX's CI selects them (`utils/process_changelog.py`, called by `run-sweep.yml`).

The entries are those the added lines make up (`inferbench.config.changelog_diff`). Each entry's
keys resolve against the master configs (`*` the only wildcard). Entries with `all-evals` go
first; then, entry by entry:
- benchmark rows (unless the entry or the run is `evals-only`, or the entry `all-evals`): its
  keys' jobs with no evals marked, for the scenarios the entry names (`scenario-type`, else
  both) that no earlier entry already benchmarked for that key; an `append-only` entry keeps
  only the points its change adds to the jobs at REV (and refuses any other change);
- eval rows (unless `append-only`): the same keys' `--evals-only` jobs (`--all-evals` with
  `all-evals` on the entry or the run), again per key and scenario not already evaluated,
  multinode rows with a prefill ep below `eval-min-prefill-ep` dropped. Agentic entries get
  their eval rows too.
Benchmark rows carry InferenceX's `recipe-fingerprint`; eval rows are flagged `eval-only`.
The command-line filters (runner type, precision, ...) narrow every expansion, and
`--config-keys` narrows each entry's keys; `--evals-only` / `--all-evals` are InferenceX's
run-wide labels of the same names; `--no-evals` (inferbench's) leaves the eval rows out.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from inferbench.config.changelog import ChangelogItem, changelog_key_matches
from inferbench.config.master import MasterConfig
from inferbench.core.errors import ConfigError
from inferbench.core.job import Job, Scenario, inferencex_row, recipe_fingerprint
from inferbench.matrix.expand import ExpandContext, expand_masters
from inferbench.matrix.filters import EvalMode, SweepFilters

SCENARIOS: tuple[Scenario, ...] = ("fixed-seq-len", "agentic-coding")


@dataclass(frozen=True)
class ChangelogRun:
    """The run-wide modifiers: InferenceX's PR labels `evals-only` and `all-evals`, and
    inferbench's `no_evals` (benchmark rows only)."""

    evals_only: bool = False
    all_evals: bool = False
    no_evals: bool = False


@dataclass(frozen=True)
class BaseTree:
    """The master configs and expansion context at REV, for `append-only` entries."""

    masters: Mapping[str, MasterConfig]
    context: ExpandContext


def _resolve_keys(item: ChangelogItem, masters: Mapping[str, MasterConfig]) -> list[str]:
    keys: dict[str, None] = {}
    for pattern in item.entry.config_keys:
        matched = [k for k in masters if changelog_key_matches(pattern, k)]
        if not matched:
            raise ConfigError(
                f"changelog entry names {pattern!r}, which matches no master entry",
                location=item.location,
                hint="fix the key, or add the master entry it names",
            )
        keys.update(dict.fromkeys(matched))
    return list(keys)


def _unseen_groups(
    keys: Sequence[str], scenarios: tuple[Scenario, ...], seen: dict[str, set[Scenario]]
) -> dict[tuple[Scenario, ...], list[str]]:
    """Keys grouped by the entry's scenarios they were not yet swept for (marking them)."""
    groups: dict[tuple[Scenario, ...], list[str]] = {}
    for key in keys:
        unseen = tuple(s for s in SCENARIOS if s in scenarios and s not in seen[key])
        if unseen:
            seen[key].update(unseen)
            groups.setdefault(unseen, []).append(key)
    return groups


def _scoped(filters: SweepFilters, keys: list[str], scenarios: tuple[Scenario, ...]) -> Any:
    """`filters` for one expansion: these keys (narrowed by --config-keys), these scenarios
    (narrowed by --scenario-type); None when nothing is left."""
    if filters.config_keys:
        keys = [k for k in keys if any(changelog_key_matches(p, k) for p in filters.config_keys)]
    if filters.scenario_types:
        scenarios = tuple(s for s in scenarios if s in filters.scenario_types)
    if not keys or not scenarios:
        return None
    return replace(filters, config_keys=tuple(keys), scenario_types=scenarios)


def changed_jobs(
    items: Sequence[ChangelogItem],
    masters: Mapping[str, MasterConfig],
    filters: SweepFilters,
    context: ExpandContext,
    *,
    run: ChangelogRun = ChangelogRun(),
    base: BaseTree | None = None,
) -> list[Job]:
    """The benchmark rows, then the eval rows, that the added entries ask for."""
    resolved = [(item, _resolve_keys(item, masters)) for item in items]
    append_only = [item.entry.append_only for item, _ in resolved]
    if any(append_only):
        _check_append_only(resolved, run, masters, base)
    resolved.sort(key=lambda pair: not pair[0].entry.all_evals)  # stable: all-evals first
    bench: list[Job] = []
    evals: list[Job] = []
    bench_seen: dict[str, set[Scenario]] = defaultdict(set)
    eval_seen: dict[str, set[Scenario]] = defaultdict(set)
    for item, keys in resolved:
        entry = item.entry
        scenarios = entry.scenario_type or SCENARIOS
        if not (run.evals_only or entry.evals_only or entry.all_evals):
            for group, group_keys in _unseen_groups(keys, scenarios, bench_seen).items():
                scoped = _scoped(filters, group_keys, group)
                if scoped is None:
                    continue
                jobs = expand_masters(
                    masters, replace(scoped, evals=EvalMode.NONE), context, require_conc=False
                )
                if entry.append_only:
                    assert base is not None
                    old = expand_masters(
                        base.masters,
                        replace(scoped, evals=EvalMode.NONE),
                        base.context,
                        require_conc=False,
                    )
                    jobs = append_only_delta(old, jobs, item)
                bench.extend(jobs)
        if entry.append_only:
            continue
        mode = EvalMode.ALL if (run.all_evals or entry.all_evals) else EvalMode.ONLY
        for group, group_keys in _unseen_groups(keys, scenarios, eval_seen).items():
            scoped = _scoped(filters, group_keys, group)
            if scoped is None or run.no_evals:
                continue
            jobs = expand_masters(masters, replace(scoped, evals=mode), context, require_conc=False)
            evals.extend(_min_prefill_ep(jobs, entry.eval_min_prefill_ep))
    return [job.evolve(recipe_fingerprint=recipe_fingerprint(job)) for job in bench] + evals


def _min_prefill_ep(jobs: list[Job], threshold: int | None) -> list[Job]:
    if threshold is None:
        return jobs
    return [j for j in jobs if j.prefill is None or j.prefill.ep >= threshold]


# ---- append-only -------------------------------------------------------------------------


def _check_append_only(
    resolved: list[tuple[ChangelogItem, list[str]]],
    run: ChangelogRun,
    masters: Mapping[str, MasterConfig],
    base: BaseTree | None,
) -> None:
    first = resolved[0][0]
    if not all(item.entry.append_only for item, _ in resolved):
        raise ConfigError(
            "append-only entries cannot share a sweep with regular changelog entries",
            location=first.location,
            hint="land the append-only entry in its own change",
        )
    if run.evals_only or run.all_evals:
        raise ConfigError(
            "append-only sweeps cannot use --all-evals or --evals-only",
            location=first.location,
        )
    if base is None:
        raise ConfigError("append-only needs the master configs at the base revision")
    selected: dict[str, set[Scenario]] = defaultdict(set)
    for item, keys in resolved:
        for key in keys:
            selected[key].update(item.entry.scenario_type or SCENARIOS)
    missing = sorted(k for k in selected if k not in base.masters)
    if missing:
        raise ConfigError(
            f"append-only needs every selected config at the base revision; missing: {missing}",
            location=first.location,
            hint="a new config is not an append: drop append-only",
        )
    _check_scope(masters, base.masters, selected, first)


def _raw(config: MasterConfig | None) -> Any:
    return None if config is None else config.doc.data[config.key]


def _check_scope(
    head: Mapping[str, MasterConfig],
    base: Mapping[str, MasterConfig],
    selected: Mapping[str, set[Scenario]],
    item: ChangelogItem,
) -> None:
    """No change outside the selected configs and scenarios (InferenceX's scope check)."""
    unrelated = sorted(
        k
        for k in head.keys() | base.keys()
        if k not in selected and _raw(head.get(k)) != _raw(base.get(k))
    )
    if unrelated:
        raise ConfigError(
            f"append-only change edits configs its changelog entry does not select: {unrelated}",
            location=item.location,
        )
    for key, allowed in selected.items():
        old, new = _raw(base[key]), _raw(head[key])
        old_scenarios, new_scenarios = old.get("scenarios", {}), new.get("scenarios", {})
        if old_scenarios.keys() != new_scenarios.keys():
            raise ConfigError(
                f"append-only added or removed a scenario in config {key!r}",
                location=head[key].locate(("scenarios",)),
            )
        outside = old_scenarios.keys() - allowed
        old_top = {k: v for k, v in old.items() if k != "scenarios"}
        new_top = {k: v for k, v in new.items() if k != "scenarios"}
        if outside and old_top != new_top:
            raise ConfigError(
                f"append-only changed config-wide fields of {key!r} that reach scenarios "
                "outside its changelog scope",
                location=head[key].locate(),
            )
        for scenario in outside:
            if old_scenarios[scenario] != new_scenarios[scenario]:
                raise ConfigError(
                    f"append-only changed {key!r} / {scenario!r}, outside its changelog scope",
                    location=head[key].locate(("scenarios", scenario)),
                )


def _curve(job: Job) -> str:
    row = inferencex_row(job)
    for key in ("conc", "exp-name", "recipe-fingerprint"):
        row.pop(key, None)
    return json.dumps(row, sort_keys=True)


def _series(job: Job) -> tuple[Any, ...]:
    """The published curve a point belongs to (InferenceX's visual series key)."""
    agentic = job.is_agentic
    offload = "off" if job.kv_offloading in (None, "", "none") else "on"
    return (
        job.model,
        job.model_prefix,
        job.precision,
        job.framework,
        job.runner,
        job.disagg,
        "agentic_traces" if agentic else "single_turn",
        None if agentic else job.isl,
        None if agentic else job.osl,
        offload,
        "" if agentic else job.spec_decoding,
        job.prefill.hardware if job.prefill else None,
        job.decode.hardware if job.decode else None,
    )


def append_only_delta(old: Sequence[Job], new: Sequence[Job], item: ChangelogItem) -> list[Job]:
    """Only the points `new` adds to `old`; every old curve and point must stay unchanged."""

    def fail(message: str) -> ConfigError:
        return ConfigError(
            message, location=item.location, hint="drop append-only, or only add points"
        )

    old_points: dict[str, set[int]] = defaultdict(set)
    new_points: dict[str, set[int]] = defaultdict(set)
    for job in old:
        old_points[_curve(job)].update(job.concurrencies)
    for job in new:
        new_points[_curve(job)].update(job.concurrencies)
    if not old_points:
        raise fail("append-only needs an existing curve at the base revision")
    if old_points.keys() - new_points.keys():
        raise fail("append-only may not remove or modify existing generated recipes")
    for curve, points in old_points.items():
        gone = sorted(points - new_points[curve])
        if gone:
            raise fail(f"append-only may not remove concurrency points: {gone}")
    delta: list[Job] = []
    emitted: dict[str, set[int]] = defaultdict(set)
    for job in new:
        curve = _curve(job)
        added = new_points[curve] - old_points.get(curve, set())
        fresh = [c for c in job.concurrencies if c in added and c not in emitted[curve]]
        emitted[curve].update(fresh)
        if not fresh:
            continue
        if isinstance(job.conc, int):
            delta.append(job)
        else:
            delta.append(job.evolve(conc=tuple(fresh)))
    if not delta:
        raise fail("append-only did not add any generated points")
    images: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    for job in old:
        images[_series(job)].add(job.image)
    for job in delta:
        if images.get(_series(job), set()) != {job.image}:
            raise fail(
                "append-only additions must belong to an existing curve with one unchanged image"
            )
    return delta
