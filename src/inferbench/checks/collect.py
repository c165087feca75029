"""Walk a loaded project once and build every subject the rules run on.

Recipes are loaded once per (file, selector) and shared by every master entry naming them.
A recipe srtctl's schema rejects becomes a `RecipeLoad` subject and still gets every
cross-check; one inferbench cannot type at all is counted in `Coverage` instead.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from inferbench.checks.srt_choice import SrtChoice, choose_for_entry, fallback
from inferbench.checks.subjects import (
    ClusterSubject,
    Coverage,
    DeploymentSubject,
    DuplicateKeys,
    ImageUse,
    MasterSubject,
    RecipeLoad,
    RecipeReference,
    RecipeUse,
    RecipeWorkload,
    RetiredRecipes,
    Target,
    UpstreamReferences,
)
from inferbench.config.master import MasterConfig, MultiNodeSearchSpace, SearchSpacePoint
from inferbench.config.project import Project, real_path
from inferbench.config.recipe import (
    RECIPE_DUPLICATES,
    Recipe,
    RecipeFile,
    RecipeNotTyped,
    locate,
    schema_problems_of,
)
from inferbench.config.recipe_schema import RecipeProblem
from inferbench.config.settings import RecipeRef
from inferbench.config.srt_job import RunnerLaunchers
from inferbench.config.srt_slurm_refs import SrtSlurmSources, SrtTree
from inferbench.config.srtctl_loader import using_srtctl
from inferbench.config.srtctl_schema import SrtctlSchema
from inferbench.config.yamlio import KeyPath, preload
from inferbench.core.concurrency import expand_concurrency
from inferbench.core.errors import ConfigError, Location


@dataclass
class Subjects:
    masters: list[MasterSubject] = field(default_factory=list)
    references: list[RecipeReference] = field(default_factory=list)
    loads: list[RecipeLoad] = field(default_factory=list)
    duplicates: list[DuplicateKeys] = field(default_factory=list)
    coverage: Coverage | None = None
    uses: list[RecipeUse] = field(default_factory=list)
    deployments: list[DeploymentSubject] = field(default_factory=list)
    clusters: list[ClusterSubject] = field(default_factory=list)
    images: list[ImageUse] = field(default_factory=list)
    upstream: list[UpstreamReferences] = field(default_factory=list)
    retired: list[RetiredRecipes] = field(default_factory=list)
    recipe_users: dict[Path, list[str]] = field(default_factory=lambda: defaultdict(list))


def _config_file_index(space: MultiNodeSearchSpace) -> tuple[str, int]:
    """Which block and `additional-settings` item holds CONFIG_FILE."""
    for block_name in ("prefill", "decode"):
        block = getattr(space, block_name)
        for index, item in enumerate(block.additional_settings.raw):
            if item.partition("=")[0].strip() == "CONFIG_FILE":
                return block_name, index
    return "prefill", 0


def recipe_workload(
    recipe: Recipe, point: SearchSpacePoint | None, concurrencies: tuple[int, ...] = ()
) -> RecipeWorkload:
    """What runs against `recipe`: its own `benchmark` isl/osl and concurrencies where it
    states them (srtctl runs the recipe as written), else the master entry's (`point`)."""
    bench = recipe.benchmark
    isl, osl = (bench.isl, bench.osl) if bench is not None else (None, None)
    own_lengths = isl is not None and osl is not None
    if not own_lengths:
        isl, osl = (point.isl, point.osl) if point is not None else (isl, osl)
    own = tuple(bench.concurrencies or ()) if bench is not None else ()
    agentic = point is not None and point.scenario == "agentic-coding"
    return RecipeWorkload(isl, osl, own or concurrencies, own_lengths, bool(own), agentic=agentic)


def master_concurrencies(space: MultiNodeSearchSpace) -> tuple[int, ...]:
    return tuple(
        expand_concurrency(
            conc_list=space.conc_list, conc_start=space.conc_start, conc_end=space.conc_end
        )
    )


class Collector:
    """Builds `Subjects` for one project; `srt_slurm` (a checkout, or the sources
    `--srt-slurm` names) resolves upstream recipe references, at each job's ref."""

    def __init__(self, project: Project, srt_slurm: Path | SrtSlurmSources | None = None) -> None:
        self.project = project
        if isinstance(srt_slurm, Path):
            srt_slurm = SrtSlurmSources([srt_slurm])
        self.sources = srt_slurm
        self.out = Subjects()
        self._variants: dict[tuple[Path, str | None], list[Recipe] | ConfigError] = {}
        self._judged: set[tuple[Path, str | None, int]] = set()  # (file, variant, schema)
        self._choices: dict[tuple[str, KeyPath], SrtChoice] = {}
        self._not_at_ref: dict[tuple[str, str], int] = defaultdict(int)
        self._routes = RunnerLaunchers(project)  # which launchers serve a runner
        self._files_seen: set[Path] = set()

    def collect(self) -> Subjects:
        project, out = self.project, self.out
        preload(self._recipe_files(), duplicates=RECIPE_DUPLICATES)
        for config in project.masters.values():
            out.masters.append(MasterSubject(project, config))
            out.images.append(ImageUse(config.entry.image, config.locate(("image",)), "image"))
            for point in config.entry.search_spaces():
                if isinstance(point.space, MultiNodeSearchSpace) and point.space.config_file:
                    self._reference(config, point, point.space, point.space.config_file)
        upstream = tuple(r for r in out.references if r.upstream)
        if upstream:
            out.upstream.append(UpstreamReferences(upstream))
        self._unreferenced_recipes()
        out.coverage = self._coverage()
        aliases = {a for c in project.clusters.values() for a in c.cluster.containers}
        aliases |= {a for c in project.clusters.values() for a in c.cluster.image_aliases}
        aliases |= {a for t in project.launchers.values() for a in t.container_aliases}
        for use in out.uses:
            container = use.recipe.model.container
            if container not in aliases and not container.endswith(".sqsh"):
                where = locate(use.recipe, ("model", "container"))
                out.images.append(ImageUse(container, where, "container"))
        for cluster in project.clusters.values():
            out.clusters.append(ClusterSubject(project, cluster))
            for alias, image in cluster.cluster.containers.items():
                if not image.endswith(".sqsh"):
                    where = cluster.locate(("containers", alias))
                    out.images.append(ImageUse(image, where, f"container alias {alias!r}"))
        return out

    def _recipe_files(self) -> list[Path]:
        """Every recipe file the checks will read: the tree's, and the srt-slurm files its
        master entries name."""
        files = self.project.recipe_paths()
        if self.sources is None:
            return files
        upstream: list[tuple[RecipeRef, SrtChoice]] = []
        wanted: dict[int, tuple[SrtTree, list[str]]] = {}  # unpacked ref -> recipes to fetch
        for config in self.project.masters.values():
            for point in config.entry.search_spaces():
                space = point.space
                if not isinstance(space, MultiNodeSearchSpace) or not space.config_file:
                    continue
                try:
                    if self.project.foreign_recipe(config.entry.framework, str(space.config_file)):
                        continue
                    if self.project.resolve_recipe(space.config_file).exists:
                        continue  # the tree's own file
                except ConfigError:
                    continue
                choice = self._choice(config, point, space)
                if choice.tree is None:
                    continue
                upstream.append((space.config_file, choice))
                text = space.config_file.path.removeprefix(self.project.layout.recipe_prefix)
                wanted.setdefault(id(choice.tree), (choice.tree, []))[1].append(text)
        for tree, relative in wanted.values():
            tree.fetch_recipes(relative)
        for reference, choice in upstream:
            assert choice.tree is not None
            try:
                resolved = self.project.resolve_recipe(reference, srt_slurm=choice.tree.root)
            except ConfigError:
                continue
            if resolved.exists and resolved.origin == "upstream":
                files.append(resolved.path)
        return files

    def _choice(
        self, config: MasterConfig, point: SearchSpacePoint, space: MultiNodeSearchSpace
    ) -> SrtChoice:
        """The srt-slurm tree this search-space entry's job runs (cached per entry)."""
        key = (config.key, point.path)
        cached = self._choices.get(key)
        if cached is None and self.sources is None:  # the bundled schema, whatever the ref
            cached = self._choices[key] = fallback(None)
        if cached is None:
            text = None
            try:
                local = self.project.resolve_recipe(space.config_file or "", srt_slurm=None)
                if local.exists:
                    text = local.path.read_text(errors="replace")
            except (ConfigError, OSError):
                pass
            cached = self._choices[key] = choose_for_entry(
                self.sources, self._routes, config, point, space, text
            )
        return cached

    def _reference(
        self,
        config: MasterConfig,
        point: SearchSpacePoint,
        space: MultiNodeSearchSpace,
        ref: RecipeRef,
    ) -> None:
        block, index = _config_file_index(space)
        where = config.locate((*point.path, block, "additional-settings", index))
        try:
            foreign = self.project.foreign_recipe(config.entry.framework, str(ref))
            choice = self._choice(config, point, space)
            root = choice.tree.root if choice.tree is not None else None
            resolved = foreign or self.project.resolve_recipe(ref, srt_slurm=root)
        except ConfigError as exc:
            self.out.references.append(RecipeReference(config, point, ref, where, None, exc))
            return
        # Not in this tree, and not in a folder the tree owns: srt-slurm's own recipes/, at
        # whichever ref the launcher clones (a given checkout may be another ref).
        upstream = (
            foreign is None and not resolved.exists and not self._tree_owns(resolved.reference)
        )
        reference = RecipeReference(config, point, ref, where, resolved, upstream=upstream)
        self.out.references.append(reference)
        if foreign is None and not choice.at_ref and self.sources is not None:
            # (without any source, the bundled schema judges, as documented)
            self._not_at_ref[(choice.wanted, choice.instead)] += 1
        if not resolved.exists or foreign is not None:  # an llm-d recipe: existence only
            return
        self.out.recipe_users[resolved.path].append(config.key)
        recipes = self._load(resolved.path, resolved.selector, where, choice.schema)
        target = self._target(config.entry.runner)
        concurrencies = master_concurrencies(space)
        for recipe in recipes:
            use = RecipeUse(recipe, recipe_workload(recipe, point, concurrencies))
            self.out.uses.append(use)
            self.out.deployments.append(
                DeploymentSubject(
                    self.project, config, point, space, reference, use, target, concurrencies
                )
            )

    def _tree_owns(self, reference: str) -> bool:
        """The folder the reference names exists in this tree's recipe root."""
        text = reference.partition(":")[0].removeprefix(self.project.layout.recipe_prefix)
        return (self.project.recipe_root / text).parent.is_dir()

    def _load(
        self,
        path: Path,
        selector: str | None,
        where: Location | None,
        schema: SrtctlSchema | None,
    ) -> list[Recipe]:
        """The variants `selector` stands for, each judged once by `schema` (None: by no
        schema, its ref not at hand)."""
        key = (path, selector)  # resolve_recipe already gives a resolved path
        cached = self._variants.get(key)
        if cached is None:
            cached = self._variants[key] = self._read(path, selector, where)
        if isinstance(cached, ConfigError):
            return []
        if schema is not None:
            self._judge(self.project.recipe_file(path), cached, where, schema)
        # a count of 0 or -7 would only mislead the cross-checks
        return [recipe for recipe in cached if not recipe.unusable]

    def _judge(
        self,
        recipe_file: RecipeFile,
        recipes: list[Recipe],
        where: Location | None,
        schema: SrtctlSchema,
    ) -> None:
        """IB203's subjects: each variant's schema problems, once per schema."""
        for recipe in recipes:
            variant = recipe.source.selector if recipe.source is not None else None
            key = (recipe_file.path, variant, id(schema))
            if key in self._judged:
                continue
            self._judged.add(key)
            if using_srtctl():  # the installed srtctl judged it when it was loaded
                problems = recipe.problems
            else:
                problems = schema_problems_of(recipe_file, recipe, schema)
            if problems:
                self.out.loads.append(RecipeLoad(recipe_file.path, variant, problems, where))

    def _read(
        self, path: Path, selector: str | None, where: Location | None
    ) -> list[Recipe] | ConfigError:
        try:
            recipe_file = self.project.recipe_file(path)
        except ConfigError as exc:  # unreadable YAML
            self.out.loads.append(RecipeLoad(path, selector, (_problem(exc),), where, False))
            return exc
        if path not in self._files_seen:
            self._files_seen.add(path)
            if recipe_file.doc.duplicates:
                self.out.duplicates.append(DuplicateKeys(path, recipe_file.doc.duplicates))
        try:
            recipes = recipe_file.variants(selector)
        except RecipeNotTyped as exc:  # valid for srtctl; only out of inferbench's reach
            self.out.loads.append(RecipeLoad(path, selector, (), where, False))
            return exc
        except ConfigError as exc:
            self.out.loads.append(RecipeLoad(path, selector, (_problem(exc),), where, False))
            return exc
        for recipe in recipes:
            if recipe.unusable:
                variant = recipe.source.selector if recipe.source is not None else selector
                load = RecipeLoad(path, variant, (), where, False, recipe.unusable)
                self.out.loads.append(load)
        return recipes

    def _coverage(self) -> Coverage:
        """How many master-entry/recipe pairs the cross-checks could not reach, and why."""
        reasons: dict[str, int] = defaultdict(int)
        for ref in self.out.references:
            resolved = ref.resolved
            if resolved is None:
                reasons["CONFIG_FILE leaves the recipe tree (IB202)"] += 1
            elif ref.upstream:
                reasons["recipe not in this tree but in srt-slurm's recipes/ (IB001)"] += 1
            elif not resolved.exists:
                reasons["CONFIG_FILE names no file (IB201)"] += 1
            elif isinstance(
                loaded := self._variants.get((resolved.path, resolved.selector)), ConfigError
            ):
                reasons["recipe cannot be read at all (IB203)"] += 1
            elif loaded is not None and all(recipe.unusable for recipe in loaded):
                reasons["recipe holds values no benchmark can run (IB211)"] += 1
        not_typed = sum(1 for load in self.out.loads if not load.cross_checked)
        not_at_ref = tuple((w, i, n) for (w, i), n in sorted(self._not_at_ref.items()))
        return Coverage(
            len(self.out.references), tuple(sorted(reasons.items())), not_typed, not_at_ref
        )

    def _unreferenced_recipes(self) -> None:
        """Recipes no active entry names: those a launcher routes a job to are checked on
        their own (nothing runs them now; a job may); the others are retired, reported once
        and left out of every recipe check."""
        referenced = {os.fspath(path) for path, _ in self._variants}
        routes = launcher_routes(self.project)
        retired: list[tuple[Path, str]] = []
        for path in self.project.recipe_paths():
            if os.fspath(path) in referenced or real_path(path) in referenced:
                continue
            reference = (
                self.project.layout.recipe_prefix
                + path.relative_to(self.project.recipe_root).as_posix()
            )
            if not any(fnmatch.fnmatchcase(reference, glob) for glob in routes):
                retired.append((path, reference))
                continue
            for recipe in self._load(path, None, None, fallback(self.sources).schema):
                self.out.uses.append(RecipeUse(recipe, recipe_workload(recipe, None), False))
        if retired:
            paths, references = zip(*retired, strict=True)
            self.out.retired.append(RetiredRecipes(paths, references))

    def _target(self, runner: str) -> Target:
        clusters = tuple(self.project.clusters_for_runner(runner))
        if clusters or not self.project.launchers:
            return Target(clusters, ())
        return self._launcher_target(runner)

    def _launcher_target(self, runner: str) -> Target:
        tables = self._routes.serving(runner)
        return Target((), tables, self._routes.imported(tables))


# `[[ ... "$CONFIG_FILE" == recipes/vllm/minimax-m3/b300-fp4/8k1k/mtp/*.yaml ... ]]`: a
# launcher branch for jobs whose recipe matches the glob
_CONFIG_FILE_TEST = re.compile(r'"?\$\{?CONFIG_FILE\}?"?\s*==\s*"?([^\s"\])]+)')


def launcher_routes(project: Project) -> frozenset[str]:
    """The CONFIG_FILE globs the tree's launchers test: a recipe matching one has a route."""
    globs: set[str] = set()
    for table in project.launchers.values():
        try:
            text = table.path.read_text(errors="replace")
        except OSError:
            continue
        globs.update(_CONFIG_FILE_TEST.findall(text))
    return frozenset(globs)


def _problem(exc: ConfigError) -> RecipeProblem:
    return RecipeProblem(exc.message, exc.location, exc.hint)


def iter_recipe_uses(subjects: Subjects) -> Iterator[RecipeUse]:
    """Each distinct (recipe variant, workload) once."""
    seen: set[tuple[int, RecipeWorkload]] = set()
    for use in subjects.uses:
        key = (id(use.recipe), use.workload)
        if key not in seen:
            seen.add(key)
            yield use
