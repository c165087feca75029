"""The typed objects rules run on, built once per run from a loaded `Project`.

Each subject carries the config objects a rule needs and where they were written, so a rule
never opens a file or reads YAML itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inferbench.config.changelog import Changelog
from inferbench.config.cluster import Cluster, ClusterFile
from inferbench.config.launcher import LauncherTable
from inferbench.config.master import MasterConfig, MultiNodeSearchSpace, SearchSpacePoint
from inferbench.config.project import Project, ResolvedRecipe
from inferbench.config.recipe import Recipe
from inferbench.config.recipe_schema import RecipeProblem
from inferbench.config.settings import RecipeRef
from inferbench.config.yamlio import DuplicateKey
from inferbench.core.errors import ConfigError, Location


@dataclass(frozen=True)
class MasterEntryError:
    """A master entry that failed validation (left out of the project's masters)."""

    error: ConfigError


@dataclass(frozen=True)
class MasterSubject:
    """One master entry."""

    project: Project
    config: MasterConfig


@dataclass(frozen=True)
class RecipeReference:
    """One CONFIG_FILE reference of a multinode search-space entry, and how it resolved.

    `resolved` is None when resolving failed (`error` says why: an absolute path or one that
    leaves the recipe tree). `upstream` marks a reference that is not in this tree but would
    be in srt-slurm's own `recipes/` (checkable only with --srt-slurm).
    """

    config: MasterConfig
    point: SearchSpacePoint
    ref: RecipeRef
    location: Location
    resolved: ResolvedRecipe | None
    error: ConfigError | None = None
    upstream: bool = False


@dataclass(frozen=True)
class UpstreamReferences:
    """Every reference that could only be resolved in the upstream srt-slurm checkout."""

    references: tuple[RecipeReference, ...]


@dataclass(frozen=True)
class RecipeLoad:
    """A recipe file (or variant) srtctl's schema rejects, with every reason, or one whose
    values srtctl takes but no benchmark can run (`unusable`).

    `cross_checked` is False when inferbench could not type it at all, or its counts are
    unusable (the recipe then drops out of the later checks, and the check summary counts it).
    """

    path: Path
    selector: str | None
    problems: tuple[RecipeProblem, ...]
    referenced_from: Location | None = None
    cross_checked: bool = True
    unusable: tuple[RecipeProblem, ...] = ()


@dataclass(frozen=True)
class DuplicateKeys:
    """The keys a recipe file writes twice in one mapping (srtctl keeps the later value)."""

    path: Path
    duplicates: tuple[DuplicateKey, ...]


@dataclass(frozen=True)
class Coverage:
    """What the cross-checks could not reach, and why (one line per reason)."""

    pairs: int  # master-entry/recipe pairs (CONFIG_FILE references)
    skipped: tuple[tuple[str, int], ...]  # (reason, pairs not cross-checked)
    recipes_not_typed: int  # recipe files or variants left out of every recipe check
    # (the srt-slurm a job clones, or why that is not known; how it was judged instead;
    # pairs): pairs not judged at the srt-slurm ref their launcher clones
    not_at_ref: tuple[tuple[str, str, int], ...] = ()


@dataclass(frozen=True)
class RecipeWorkload:
    """What will be run against a recipe: its own benchmark's lengths and concurrencies where
    it states them (srtctl runs those), else the master entry's. `agentic`: the concurrency
    counts users replaying agentic traces, idle between turns, not requests in flight."""

    isl: int | None
    osl: int | None
    concurrencies: tuple[int, ...]
    own_lengths: bool = False
    own_concurrencies: bool = False
    agentic: bool = False


@dataclass(frozen=True)
class RecipeUse:
    """One loaded recipe variant with the workload it serves. `deployed`: an active master
    entry runs it (False for a recipe no master entry names, e.g. one only
    `configs/deprecated/` used: InferenceX's CI never runs it)."""

    recipe: Recipe
    workload: RecipeWorkload
    deployed: bool = True


@dataclass(frozen=True)
class RetiredRecipes:
    """The tree's recipe files no active master entry names and no launcher routes a job to
    (InferenceX's CI never runs them): reported once, and left out of every recipe check."""

    paths: tuple[Path, ...]
    references: tuple[str, ...]  # each as a CONFIG_FILE would name it (`recipes/...`)


@dataclass(frozen=True)
class Target:
    """Where a deployment runs: the cluster catalogs (or launcher tables) serving its runner."""

    clusters: tuple[ClusterFile, ...]
    launchers: tuple[LauncherTable, ...]
    # the cluster files `clusters import` writes for `launchers`: what only a catalog says
    # (whose weights an alias holds) is read from them, so both give the same findings
    imported: tuple[Cluster, ...] = ()

    @property
    def known(self) -> bool:
        return bool(self.clusters or self.launchers)


@dataclass(frozen=True)
class DeploymentSubject:
    """A multinode search-space entry together with the recipe variant it deploys."""

    project: Project
    config: MasterConfig
    point: SearchSpacePoint
    space: MultiNodeSearchSpace
    reference: RecipeReference
    use: RecipeUse
    target: Target
    concurrencies: tuple[int, ...]  # the master's, expanded

    @property
    def recipe(self) -> Recipe:
        return self.use.recipe

    def locate(self, *path: str | int) -> Location:
        """A key inside this search-space entry."""
        return self.config.locate((*self.point.path, *path))


@dataclass(frozen=True)
class ClusterSubject:
    project: Project
    cluster: ClusterFile


@dataclass(frozen=True)
class ImageUse:
    """One container image reference: a master `image`, a recipe `container`, a cluster alias."""

    reference: str
    location: Location
    owner: str  # "master image", "recipe container", "cluster container alias"


@dataclass(frozen=True)
class BaseView:
    """The tree at the `--base` revision: its changelog, master entries and what changed."""

    rev: str
    changelog: Changelog | None
    master_data: Mapping[str, Any]  # config key -> entry data at the base
    changed_files: frozenset[Path]
    changelog_text: str | None = None  # the changelog file as it was at the base


@dataclass(frozen=True)
class ChangelogSubject:
    project: Project
    changelog: Changelog
    base: BaseView | None
    recipe_users: Mapping[Path, tuple[str, ...]]  # recipe file -> config keys deploying it
