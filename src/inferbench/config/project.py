"""Project discovery: find and load every file of a benchmark tree.

An optional `inferbench.toml` at the root names the files; without one the
InferenceX layout is assumed, so an InferenceX checkout works as it is:

    configs/*-master.yaml                     master configs
    configs/runners.yaml                      runner registry
      (`.github/configs/` instead in trees from before InferenceX moved them, 2026-07)
    perf-changelog.yaml                       perf changelog
    benchmarks/multi_node/srt-slurm-recipes/  srt-slurm recipes (CONFIG_FILE=recipes/...)
    runners/launch_*.sh                       bash launchers (read best-effort)
    clusters/*.yaml                           inferbench's cluster catalog

`inferbench.toml` may also give a job's server extra engine arguments (`[[engine-args]]`):
master entries keep InferenceX's schema, whose validator refuses keys it does not know.

Recipes are parsed on first use and cached (a tree can hold 450+). So are the changelog and
the launchers: `sweep` reads neither (unless --changed-since), and reading every launcher
and a 6,000-line changelog was a sixth of its time.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from pydantic import Field, ValidationError, field_validator

from inferbench.config.base import FrozenModel
from inferbench.config.master import EntryError, MasterConfig, load_masters, read_master_keys
from inferbench.config.recipe import Recipe, RecipeFile, load_recipe_file, split_reference
from inferbench.config.runners import Runners, load_runners
from inferbench.config.settings import RecipeRef
from inferbench.config.validate import unknown_key_hint
from inferbench.core.errors import ConfigError, Location
from inferbench.core.fsio import describe_file_type
from inferbench.core.fsread import MAX_CONFIG_BYTES, check_regular, present, read_text_file

if TYPE_CHECKING:
    from inferbench.config.changelog import Changelog
    from inferbench.config.cluster import ClusterFile
    from inferbench.config.golden_al import GoldenSet
    from inferbench.config.launcher import LauncherTable

CONFIG_FILE_NAME = "inferbench.toml"


class EngineArgsRule(FrozenModel):
    """Extra server arguments for the jobs whose config key matches one of `config-keys`
    (exact or globs `*` `?`), appended after the ones inferbench derives from the job."""

    config_keys: tuple[str, ...] = Field(alias="config-keys", min_length=1)
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)

    def matches(self, config_key: str | None) -> bool:
        return config_key is not None and any(
            fnmatch.fnmatchcase(config_key, pattern) for pattern in self.config_keys
        )


def _relative_pattern(pattern: str) -> None:
    # a config may only name files of its own tree: `/etc/*` or `../x` would read elsewhere
    parts = PurePosixPath(pattern.replace(os.sep, "/")).parts
    if not pattern or os.path.isabs(pattern) or pattern.startswith("~") or ".." in parts:
        raise ValueError(f"{pattern!r} is not a path inside the tree")


class ProjectLayout(FrozenModel):
    """Where a tree keeps its files (paths and globs relative to the root)."""

    masters: tuple[str, ...] = ("configs/*-master.yaml",)
    # master entries retired from sweeps; old changelog entries still name their keys
    deprecated: tuple[str, ...] = ("configs/deprecated/*.yaml",)
    runners: str = "configs/runners.yaml"
    changelog: str = "perf-changelog.yaml"
    recipes: str = "benchmarks/multi_node/srt-slurm-recipes"
    recipe_prefix: str = Field(default="recipes/", alias="recipe-prefix")
    launchers: tuple[str, ...] = ("runners/launch_*.sh",)
    clusters: tuple[str, ...] = ("clusters/*.yaml",)
    # golden acceptance lengths of speculative decoding, and the scripts that may pin one
    golden_al: tuple[str, ...] = Field(
        default=("golden_al_distribution/*.yaml",), alias="golden-al"
    )
    single_node_scripts: tuple[str, ...] = Field(
        default=("benchmarks/single_node/**/*.sh",), alias="single-node-scripts"
    )
    # Frameworks whose CONFIG_FILE is not an srt-slurm recipe: framework prefix -> the folder
    # it names a file in (InferenceX's llm-d launcher reads llm-d-recipes/<CONFIG_FILE>).
    foreign_recipes: dict[str, str] = Field(
        default_factory=lambda: {"llmd-": "benchmarks/multi_node/llm-d-recipes"},
        alias="foreign-recipes",
    )
    engine_args: tuple[EngineArgsRule, ...] = Field(default=(), alias="engine-args")

    @field_validator(
        "masters",
        "deprecated",
        "runners",
        "changelog",
        "recipes",
        "launchers",
        "clusters",
        "golden_al",
        "single_node_scripts",
    )
    @classmethod
    def _inside_tree(cls, value: str | tuple[str, ...]) -> str | tuple[str, ...]:
        for pattern in (value,) if isinstance(value, str) else value:
            _relative_pattern(pattern)
        return value

    @field_validator("foreign_recipes")
    @classmethod
    def _folders_inside_tree(cls, value: dict[str, str]) -> dict[str, str]:
        for folder in value.values():
            _relative_pattern(folder)
        return value

    def engine_overrides(self, config_key: str | None) -> tuple[tuple[str, ...], dict[str, str]]:
        """The extra server argv and env of a job: every matching rule, in file order."""
        args: list[str] = []
        env: dict[str, str] = {}
        for rule in self.engine_args:
            if rule.matches(config_key):
                args += rule.args
                env.update(rule.env)
        return tuple(args), env


@dataclass(frozen=True)
class ResolvedRecipe:
    """Where a CONFIG_FILE reference points."""

    reference: str
    path: Path
    selector: str | None
    origin: Literal["tree", "upstream"]
    exists: bool
    # `path` as a reader finds it: below the tree's root, or below the srt-slurm checkout
    shown_path: str = ""


@dataclass(frozen=True)
class Project:
    """A loaded tree. The changelog and the launchers are read on first use (a bad one
    raises ConfigError then), so a command pays only for what it reads."""

    root: Path
    layout: ProjectLayout
    layout_file: Path | None
    master_files: tuple[Path, ...]
    masters: Mapping[str, MasterConfig]
    runners: Runners | None
    clusters: Mapping[str, ClusterFile]
    recipe_root: Path
    # master entries that failed validation, left out of `masters` (`check` reports each)
    master_errors: tuple[EntryError, ...] = ()
    _recipe_files: dict[str, RecipeFile] = field(default_factory=dict, repr=False, compare=False)
    _resolved: dict[tuple[str, str | None], ResolvedRecipe] = field(
        default_factory=dict, repr=False, compare=False
    )

    _deprecated: list[frozenset[str]] = field(default_factory=list, repr=False, compare=False)

    def deprecated_keys(self) -> frozenset[str]:
        """The config keys of the archived master files (`layout.deprecated`), read once."""
        if not self._deprecated:
            keys: set[str] = set()
            for path in _glob(self.root, self.layout.deprecated):
                keys.update(read_master_keys(path))
            self._deprecated.append(frozenset(keys))
        return self._deprecated[0]

    @functools.cached_property
    def changelog(self) -> Changelog | None:
        from inferbench.config.changelog import load_changelog

        path = self.root / self.layout.changelog
        return load_changelog(path) if present(path, ConfigError) else None

    @functools.cached_property
    def launchers(self) -> Mapping[str, LauncherTable]:
        from inferbench.config.launcher import read_launchers

        return MappingProxyType(read_launchers(_glob(self.root, self.layout.launchers)))

    def read_all(self) -> Project:
        """Read the parts loaded on first use now, so that a bad one raises here."""
        _ = self.launchers, self.changelog
        return self

    # --- recipes -----------------------------------------------------------------
    def recipe_paths(self) -> list[Path]:
        """Every recipe file under the recipe root, sorted."""
        if not self.recipe_root.is_dir():
            return []
        return sorted(p for p in self.recipe_root.rglob("*.yaml") if p.is_file())

    def resolve_recipe(
        self, reference: RecipeRef | str, *, srt_slurm: Path | None = None
    ) -> ResolvedRecipe:
        """Map `recipes/<path>[:selector]` to a file; ConfigError if it escapes the tree.

        A file missing from the tree is looked up in an srt-slurm checkout (`srt_slurm`,
        whose `recipes/` InferenceX overlays) and reported with `exists=False` if absent.
        """
        key = (str(reference), None if srt_slurm is None else str(srt_slurm))
        cached = self._resolved.get(key)
        if cached is None:
            cached = self._resolve(reference, srt_slurm)
            self._resolved[key] = cached
        return cached

    def _resolve(self, reference: RecipeRef | str, srt_slurm: Path | None) -> ResolvedRecipe:
        if isinstance(reference, RecipeRef):
            text, selector = reference.path, reference.selector
        else:
            text, selector = split_reference(reference)
        shown = f"{text}:{selector}" if selector else text
        relative = self._relative(text, shown)
        if not text.startswith(self.layout.recipe_prefix):
            # srtctl resolves CONFIG_FILE from the srt-slurm checkout it runs in; InferenceX's
            # launchers copy repo paths (benchmarks/multi_node/srt-slurm-recipes/...) into it
            # at the same place, so such a path names the tree's own file
            in_repo = _inside(self.root, relative, shown, what="the tree")
            if in_repo.is_file():
                return ResolvedRecipe(shown, in_repo, selector, "tree", True, self._shown(in_repo))
        local = _inside(self.recipe_root, relative, shown)
        if local.is_file() or srt_slurm is None:
            exists = local.is_file()
            return ResolvedRecipe(shown, local, selector, "tree", exists, self._shown(local))
        upstream = _inside(Path(srt_slurm) / "recipes", relative, shown)
        where = (Path("recipes") / relative).as_posix()
        return ResolvedRecipe(shown, upstream, selector, "upstream", upstream.is_file(), where)

    def _shown(self, path: Path) -> str:
        """`path` (a real path) relative to the tree's root."""
        return Path(os.path.relpath(path, _real(str(self.root)))).as_posix()

    def _relative(self, text: str, shown: str) -> Path:
        prefix = self.layout.recipe_prefix
        if Path(text).is_absolute():
            raise ConfigError(
                f"recipe reference {shown!r} is an absolute path",
                hint=f"write it relative to the recipe root, starting with {prefix!r}",
            )
        return Path(text.removeprefix(prefix))

    def recipe_file(self, path: Path) -> RecipeFile:
        """The parsed recipe file at `path` (cached)."""
        key = os.path.abspath(path)
        cached = self._recipe_files.get(key)
        if cached is None:
            cached = load_recipe_file(Path(path))
            self._recipe_files[key] = cached
        return cached

    def recipe(self, reference: RecipeRef | str, *, srt_slurm: Path | None = None) -> Recipe:
        """The recipe a CONFIG_FILE reference names; ConfigError if missing or invalid."""
        resolved = self.resolve_recipe(reference, srt_slurm=srt_slurm)
        if not resolved.exists:
            raise ConfigError(
                f"CONFIG_FILE {resolved.reference!r}: no such recipe",
                location=Location(resolved.path),
                hint=f"recipes live under {self.recipe_root}",
            )
        return self.recipe_file(resolved.path).recipe(resolved.selector)

    def foreign_recipe(self, framework: str, reference: str) -> ResolvedRecipe | None:
        """Where a CONFIG_FILE of a framework that does not run srtctl points (None: the
        framework runs srtctl). ConfigError if it leaves that folder."""
        for prefix, folder in self.layout.foreign_recipes.items():
            if framework.startswith(prefix):
                path = _inside(self.root / folder, Path(reference), reference)
                exists = path.is_file()
                return ResolvedRecipe(reference, path, None, "tree", exists, self._shown(path))
        return None

    # --- clusters ----------------------------------------------------------------
    def golden_al(self) -> GoldenSet:
        """The golden acceptance-length curves (`layout.golden_al`; ConfigError on a bad one)."""
        from inferbench.config.golden_al import load_golden

        return load_golden(_glob(self.root, self.layout.golden_al))

    def single_node_scripts(self) -> list[Path]:
        return _glob(self.root, self.layout.single_node_scripts)

    def clusters_for_runner(self, runner_label: str) -> list[ClusterFile]:
        return [c for c in self.clusters.values() if c.cluster.serves(runner_label)]


@functools.lru_cache(maxsize=1024)
def _real(path: str) -> str:
    return os.path.realpath(path)


def real_path(path: str | Path) -> str:
    """`os.path.realpath`, with the (few, repeated) parent folders resolved once: a tree's
    hundreds of recipe paths share a few dozen folders."""
    text = os.fspath(path)
    head, name = os.path.split(text)
    if not name or name in (".", ".."):
        return _real(text)
    joined = os.path.join(_real(head or "."), name)
    return os.path.realpath(joined) if os.path.islink(joined) else joined


def _is_inside(base: Path, path: Path) -> bool:
    target, root = real_path(path), _real(str(base))
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def _inside(base: Path, relative: Path, shown: str, what: str = "the recipe tree") -> Path:
    """`base / relative` with symlinks resolved; ConfigError if that leaves `base`."""
    target = real_path(base / relative)
    root = _real(str(base))
    if target != root and not target.startswith(root.rstrip(os.sep) + os.sep):
        raise ConfigError(
            f"recipe reference {shown!r} points outside {what}",
            hint=f"keep references inside {base}",
        )
    return Path(target)


# Where InferenceX kept `configs/` before it moved them to the root (upstream #1992).
_OLD_CONFIGS = ".github/configs"


def default_layout(root: Path) -> ProjectLayout:
    """The InferenceX layout of the tree at `root`: `configs/`, or `.github/configs/` in a
    tree from before the move when that is where its master configs are."""
    layout = ProjectLayout()
    if _glob(root, layout.masters) or not _glob(root, (f"{_OLD_CONFIGS}/*-master.yaml",)):
        return layout
    moved = {
        "masters": tuple(f"{_OLD_CONFIGS}/{p.removeprefix('configs/')}" for p in layout.masters),
        "deprecated": tuple(
            f"{_OLD_CONFIGS}/{p.removeprefix('configs/')}" for p in layout.deprecated
        ),
        "runners": f"{_OLD_CONFIGS}/{layout.runners.removeprefix('configs/')}",
    }
    return layout.model_copy(update=moved)


def read_layout(root: Path) -> tuple[ProjectLayout, Path | None]:
    """The layout from `inferbench.toml` if present, else the InferenceX defaults."""
    path = root / CONFIG_FILE_NAME
    if not present(path, ConfigError):
        return default_layout(root), None
    text = read_text_file(path, MAX_CONFIG_BYTES, error=ConfigError, what="project file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", location=Location(path)) from None
    for key in ("masters", "launchers", "clusters"):
        if isinstance(data.get(key), str):
            data[key] = [data[key]]
    try:
        return ProjectLayout.model_validate(data), path
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        key = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            model = EngineArgsRule if err["loc"][0] == "engine-args" else ProjectLayout
            allowed = [f.alias or n for n, f in model.model_fields.items()]
            hint = unknown_key_hint(key, allowed)
            raise ConfigError(
                f"unknown key {key!r}", location=Location(path, key=key), hint=hint
            ) from None
        message = str(err["msg"]).removeprefix("Value error, ")
        hint = (
            "give a path relative to the tree's root, without '..', e.g. configs/*-master.yaml"
            if "inside the tree" in message
            else None
        )
        raise ConfigError(message, location=Location(path, key=key), hint=hint) from None


def _glob(root: Path, patterns: tuple[str, ...]) -> list[Path]:
    """The files the patterns match; a FIFO or device they match is refused by name (read,
    it would block or never end; skipped, its configs would vanish without a word)."""
    found: set[Path] = set()
    for pattern in patterns:
        _readable_folder(root, pattern)
        for path in root.glob(pattern):
            if path.is_symlink() and not _is_inside(root, path):
                # a link may not lead a config out of the tree
                raise ConfigError(
                    f"links to {os.path.realpath(path)}, outside the tree",
                    location=Location(path),
                    hint=f"copy the file into {root} instead of linking to it",
                )
            if path.is_file():
                found.add(path)
            elif not path.is_dir():
                check_regular(path, ConfigError)
    return sorted(found)


def _readable_folder(root: Path, pattern: str) -> None:
    """The folder a pattern lists must be readable: `glob` finds nothing in one it may not
    read, and the configs in it would vanish without a word."""
    fixed = []
    for part in Path(pattern).parts[:-1]:
        if any(c in part for c in "*?["):
            break
        fixed.append(part)
    folder = root.joinpath(*fixed)
    try:
        os.scandir(folder).close()
    except (FileNotFoundError, NotADirectoryError):
        present(folder, ConfigError)  # a link to nothing is refused; a missing folder is none
        return
    except OSError as exc:
        raise ConfigError(
            f"cannot read folder: {exc.strerror}",
            location=Location(folder),
            hint="check its permissions (the configs in it would be left out)",
        ) from None


def load_project(root: Path) -> Project:
    """Discover the benchmark tree at `root` and load its masters, runners and clusters (bad
    input raises ConfigError; a master entry that fails validation is kept in
    `master_errors` instead, the others still loaded; the other parts are read on first use,
    see `Project`)."""
    root = Path(root)
    if not root.is_dir():
        what = "not found" if not os.path.lexists(root) else "not a directory"
        if os.path.exists(root) and not root.is_file():
            what = f"is {describe_file_type(os.stat(root).st_mode)}, not a directory"
        raise ConfigError(
            what,
            location=Location(root),
            hint="give the root folder of a benchmark tree (an InferenceX checkout)",
        )
    layout, layout_file = read_layout(root)
    master_files = _glob(root, layout.masters)
    if not master_files and layout_file is None:
        raise ConfigError(
            "no master configs found (looked for configs/*-master.yaml and"
            f" {_OLD_CONFIGS}/*-master.yaml)",
            location=Location(root),
            hint=f"run inside a benchmark tree, pass --root, or add {CONFIG_FILE_NAME}",
        )
    runners_path = root / layout.runners
    clusters: dict[str, ClusterFile] = {}
    cluster_files = _glob(root, layout.clusters)
    if cluster_files:  # (an InferenceX tree has none: not even the module is imported)
        from inferbench.config.cluster import load_cluster

        for path in cluster_files:
            loaded = load_cluster(path)
            clusters[loaded.cluster.name] = loaded
    master_errors: list[EntryError] = []
    masters = load_masters(master_files, master_errors)
    return Project(
        root=root,
        layout=layout,
        layout_file=layout_file,
        master_files=tuple(master_files),
        masters=MappingProxyType(masters),
        master_errors=tuple(master_errors),
        runners=load_runners(runners_path) if present(runners_path, ConfigError) else None,
        clusters=MappingProxyType(clusters),
        recipe_root=root / layout.recipes,
    )
