"""What a sweep selects: the filters of `inferbench sweep`, as one frozen value.

Semantics follow InferenceX's `generate_sweep_configs.py`:
- `config_keys`: exact keys or globs (`*`, `?`, `[...]`, matched case-sensitively as the
  changelog's keys are); a glob that matches nothing, or an exact key that does not exist, is an
  error (so a typo never silently sweeps nothing).
- `model_prefixes`: the config key starts with one of them (InferenceX filters the key, not the
  `model-prefix` field; keys begin with the model prefix by convention).
- `precisions`, `frameworks`, `runner_types`: exact matches on the master entry's fields; a
  runner type that `runners.yaml` does not define is an error.
- `seq_lens`: (isl, osl) pairs, e.g. from `1k1k,8k1k`; it filters fixed-seq-len jobs only
  (agentic jobs have no lengths and stay, as in InferenceX; `scenario_types` drops them).
- `min_conc` / `max_conc`: see `inferbench.core.concurrency`.
- `max_tp`: drops single-node fixed-seq-len search-space entries with a larger `tp` (multinode
  and agentic entries are not filtered, as in InferenceX).
- `max_ep`: caps `ep` of single-node fixed-seq-len entries (a larger `ep` becomes `max_ep`, the
  entry is kept; multinode and agentic entries are left alone, as in InferenceX).
- `conc`: only these concurrencies (InferenceX's `test-config --conc`): each entry keeps the
  values of its own list or range that are among them, an entry with none left is dropped, and
  a value that no selected entry has is an error (the generator's "values must exist").
- `runner_node_filter`: substring of runner machine names (`runners.yaml` `labels:`); each job
  is repeated once per matching machine of its label, `runner` set to the machine, and an entry
  whose label has none is dropped. With `config_keys` (InferenceX's `test-config`) the label
  itself comes first when it matches too. A substring that matches no label or machine at all
  is an error.
- `runner_config`: another runners.yaml to read labels and hardware from (a path).
- `node_type`: single-node only, multinode only, or both.
- `scenario_types`: fixed-seq-len and/or agentic-coding (empty: both).
- `evals`: the eval policy, see `inferbench.matrix.evals`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from inferbench.config.changelog import is_glob, key_matches
from inferbench.core.concurrency import DEFAULT_STEP, MAX_CONCURRENCY
from inferbench.core.errors import InputError, Location
from inferbench.core.job import Scenario
from inferbench.core.suggest import did_you_mean

NodeType = Literal["all", "single-node", "multi-node"]

# The upper bounds of the numeric filters (sweep, plan and run take the same ones): past them
# a value is a typo, never a filter (no server runs 10^7 streams, no engine a TP or EP of 10^4).
MAX_PARALLEL = 4096
# field -> (the command line's option, its largest value)
_BOUNDS = {
    "min_conc": ("--min-concurrency", MAX_CONCURRENCY),
    "max_conc": ("--max-concurrency", MAX_CONCURRENCY),
    "max_tp": ("--max-tp", MAX_PARALLEL),
    "max_ep": ("--max-ep", MAX_PARALLEL),
}


# The filters' fields as the command line spells them (node type and eval mode aside).
_FLAGS = {
    "config_keys": "--config-keys",
    "model_prefixes": "--model-prefix",
    "precisions": "--precision",
    "frameworks": "--framework",
    "runner_types": "--runner-type",
    "seq_lens": "--seq-lens",
    "min_conc": "--min-conc",
    "max_conc": "--max-conc",
    "max_tp": "--max-tp",
    "max_ep": "--max-ep",
    "conc": "--conc",
    "runner_node_filter": "--runner-node-filter",
    "scenario_types": "--scenario-type",
}


class EvalMode(StrEnum):
    """`default`: mark evals on the usual rows; `none`: --no-evals; `only`: --evals-only;
    `all`: --all-evals (every eligible row is an eval, and only eval rows are emitted)."""

    DEFAULT = "default"
    NONE = "none"
    ONLY = "only"
    ALL = "all"


@dataclass(frozen=True)
class SweepFilters:
    config_keys: tuple[str, ...] = ()
    model_prefixes: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    frameworks: tuple[str, ...] = ()
    runner_types: tuple[str, ...] = ()
    seq_lens: tuple[tuple[int, int], ...] = ()
    min_conc: int | None = None
    max_conc: int | None = None
    max_tp: int | None = None
    max_ep: int | None = None
    conc: tuple[int, ...] = ()
    runner_node_filter: str | None = None
    runner_config: str | None = None
    node_type: NodeType = "all"
    scenario_types: tuple[Scenario, ...] = ()
    evals: EvalMode = EvalMode.DEFAULT
    step: int = DEFAULT_STEP

    @property
    def picks_concurrencies(self) -> bool:
        """The user chose concurrencies (--concurrency, --min-concurrency,
        --max-concurrency, --step-size), so a
        backend that would otherwise run a recipe's own must run the job's."""
        return (
            bool(self.conc)
            or self.min_conc is not None
            or self.max_conc is not None
            or (self.step != DEFAULT_STEP)
        )

    def __post_init__(self) -> None:
        for name, (flag, top) in _BOUNDS.items():
            value = getattr(self, name)
            if value is not None and not 1 <= value <= top:
                shown = value if len(str(value)) <= 24 else f"{str(value)[:21]}..."
                raise InputError(
                    f"must be between 1 and {top:,}, got {shown}",
                    location=Location(key=flag),
                    hint=f"give {flag} a value from 1 to {top:,}, or leave it out",
                )
        low, high = self.min_conc, self.max_conc
        if low is not None and high is not None and low > high:
            raise InputError(
                f"--min-concurrency {low} is above --max-concurrency {high}",
                hint="pass a --min-concurrency no larger than --max-concurrency",
            )
        bad = [c for c in self.conc if c <= 0]
        if bad:
            raise InputError(
                f"--concurrency must be positive integers, got {bad[0]}",
                location=Location(key="--concurrency"),
                hint="e.g. --concurrency 4,8",
            )
        if self.runner_node_filter is not None and not self.runner_node_filter:
            raise InputError(
                "--runner-node-filter is empty",
                location=Location(key="--runner-node-filter"),
                hint="give part of a runner machine name, e.g. --runner-node-filter b200-nb",
            )
        if self.step <= 1:
            raise InputError(
                f"--step-size must be greater than 1, got {self.step}", hint="e.g. --step-size 2"
            )

    def given(self) -> list[str]:
        """The options that narrow the sweep, as the command line spells them."""
        evals = {EvalMode.NONE: "--no-evals", EvalMode.ONLY: "--evals-only"}
        flags = {**_FLAGS, "node_type": f"--{self.node_type}", "evals": evals.get(self.evals)}
        return [
            flag
            for name, flag in flags.items()
            if flag and getattr(self, name) not in (None, (), "all", EvalMode.DEFAULT)
        ]

    def refuse_empty(self, selected: int, total: Callable[[], int]) -> None:
        """Filters that select nothing are a typo (a precision or runner misspelled), never
        a sweep: a CI job would pass having run nothing. The generator emits `[]` for them.
        `total` counts the tree's jobs unfiltered (only asked when nothing is selected)."""
        given = self.given()
        if selected or not given:
            return
        count = total()
        if not count:
            return
        raise InputError(
            f"the filters select none of the tree's {count} jobs",
            location=Location(key=", ".join(given)),
            hint="loosen or drop these filters; `inferbench sweep` lists every job",
        )

    def wants_node_type(self, multinode: bool) -> bool:
        if self.node_type == "all":
            return True
        return (self.node_type == "multi-node") == multinode

    def wants_scenario(self, scenario: Scenario) -> bool:
        return not self.scenario_types or scenario in self.scenario_types

    def wants_entry(self, key: str, precision: str, framework: str, runner: str) -> bool:
        """The per-entry filters other than config keys (resolved once by `select_keys`)."""
        if self.model_prefixes and not any(key.startswith(p) for p in self.model_prefixes):
            return False
        if self.precisions and precision not in self.precisions:
            return False
        if self.frameworks and framework not in self.frameworks:
            return False
        return not (self.runner_types and runner not in self.runner_types)

    def wants_seq_len(self, isl: int, osl: int) -> bool:
        return not self.seq_lens or (isl, osl) in self.seq_lens


def select_keys(
    patterns: Sequence[str], available: Iterable[str], invalid: Collection[str] = ()
) -> list[str]:
    """Resolve exact keys and globs against `available`, without duplicates, in the order
    InferenceX's `test-config` sweeps them: pattern by pattern, a glob's matches in tree order.
    A pattern that names only `invalid` entries (which failed validation: their error is
    reported instead) selects nothing.

    Raises InputError naming the first pattern that matches nothing.
    """
    keys = list(available)
    known = set(keys)
    wanted: dict[str, None] = {}  # insertion-ordered set
    for pattern in patterns:
        if is_glob(pattern):
            matches = [k for k in keys if key_matches(pattern, k)]
            if not matches and any(key_matches(pattern, k) for k in invalid):
                continue
            if not matches:
                raise InputError(
                    f"config-key pattern {pattern!r} matches no master entry",
                    hint="check the spelling; `inferbench sweep --format table` lists the keys",
                )
            wanted.update(dict.fromkeys(matches))
        elif pattern in known:
            wanted.setdefault(pattern)
        elif pattern not in invalid:
            raise InputError(
                f"config key {pattern!r} is not in any master file",
                hint=did_you_mean(pattern, keys)
                or "`inferbench sweep --format table` lists the keys",
            )
    return list(wanted)
