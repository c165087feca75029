"""Loading srt-slurm recipes, including `base:` + `override_*` / `zip_override_*` variants.

A file with a top-level `base:` key is an override file. Selectors, as srtctl takes
them after `file.yaml:`: `base`, `override_<name>`, `zip_override_<name>` (every
variant of the group) and `zip_override_<name>[i]`. Without a selector srtctl
submits every variant but not the base. Merging: mappings merge recursively,
lists and scalars replace, `null` deletes the key.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from inferbench.config.recipe_schema import (
    Benchmark,
    EngineConfigs,
    Recipe,
    RecipeBackend,
    RecipeModelSpec,
    RecipeProblem,
    Resources,
    WorkerMode,
    parse_concurrencies,
)
from inferbench.config.recipe_values import unusable_values
from inferbench.config.srtctl_loader import recipe_problems
from inferbench.config.srtctl_schema import (
    SchemaProblem,
    SrtctlSchema,
    same_as_bundled,
    schema_problems,
)
from inferbench.config.validate import config_error_from, unknown_key_hint
from inferbench.config.yamlio import KeyPath, PositionedDoc, format_path, load_yaml
from inferbench.core.errors import ConfigError, Location

_SELECTOR = re.compile(r"(base|override_[\w.-]+|zip_override_[\w.-]+)(?:\[(\d+)\])?\Z")


@dataclass(frozen=True)
class RecipeSource:
    """Where a recipe came from: the file, its selector, and which sections were merged."""

    doc: PositionedDoc
    selector: str | None
    sections: tuple[KeyPath, ...] = ((),)  # searched last-first when locating a key

    @property
    def file(self) -> Path:
        return self.doc.file

    def locate(self, path: KeyPath = ()) -> Location:
        """The position of `path` in whichever merged section wrote it last."""
        for section in reversed(self.sections):
            if _has_path(self.doc.data, section + path):
                return _relabel(self.doc.locate(section + path), path)
        return _relabel(self.doc.locate(self.sections[0] + path), path)

    @property
    def reference(self) -> str:
        return f"{self.file}:{self.selector}" if self.selector else str(self.file)


def _relabel(location: Location, path: KeyPath) -> Location:
    return Location(location.file, location.line, location.column, format_path(path) or None)


def _has_path(data: Any, path: KeyPath) -> bool:
    for part in path:
        if isinstance(data, dict):
            if part not in data:
                return False
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and -len(data) <= part < len(data):
            data = data[part]
        else:
            return False
    return True


def deep_merge(base: Any, override: Any) -> Any:
    """srt-slurm's merge: dicts recursively, lists/scalars replace, None deletes."""
    if not isinstance(base, dict) or not isinstance(override, dict):
        return copy.deepcopy(override)
    merged = dict(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _zip_length(section: Any, where: str) -> int:
    lengths: set[int] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for child in value.values():
                walk(child)
        elif isinstance(value, list) and len(value) != 1:
            lengths.add(len(value))

    walk(section)
    if len(lengths) > 1:
        raise ValueError(f"{where}: list lengths {sorted(lengths)} are incompatible")
    return lengths.pop() if lengths else 1


def _zip_slice(value: Any, index: int) -> Any:
    if isinstance(value, dict):
        return {k: _zip_slice(v, index) for k, v in value.items()}
    if isinstance(value, list):
        return copy.deepcopy(value[0 if len(value) == 1 else index])
    return value


@dataclass(frozen=True)
class RecipeFile:
    """One parsed recipe file; variants are validated lazily and cached."""

    doc: PositionedDoc
    _cache: dict[str | None, Recipe] = field(default_factory=dict, compare=False, repr=False)

    @property
    def path(self) -> Path:
        return self.doc.file

    @property
    def is_override_file(self) -> bool:
        return isinstance(self.doc.data, dict) and "base" in self.doc.data

    def selectors(self) -> list[str]:
        """Every variant srtctl submits without a selector (the base excluded).
        Empty for a plain recipe file."""
        if not self.is_override_file:
            return []
        out: list[str] = []
        for key, section in self.doc.data.items():
            if key.startswith("override_"):
                out.append(key)
            elif key.startswith("zip_override_"):
                n = self._zip_count(key, section)
                out.extend(f"{key}[{i}]" for i in range(n))
        return out

    def _only_variant(self) -> str:
        choices = self.selectors()
        if len(choices) != 1:
            raise ConfigError(
                f"override file has {len(choices)} variants; name one",
                location=self.doc.locate(),
                hint="reference it as file.yaml:<selector>, one of: "
                + ", ".join(["base", *choices]),
            )
        return choices[0]

    def recipe(self, selector: str | None = None) -> Recipe:
        """The recipe for `selector` (`None`: the file itself, or its only variant)."""
        if selector in self._cache:
            return self._cache[selector]
        if selector is None and self.is_override_file:
            recipe = self.recipe(self._only_variant())
        else:
            data, sections = self._assemble(selector)
            recipe = _validate(data, RecipeSource(self.doc, selector, sections))
        self._cache[selector] = recipe
        return recipe

    def mapping(self, selector: str | None = None) -> dict[str, Any]:
        """The recipe for `selector` as srtctl resolves it, unvalidated and as a fresh copy:
        every key the file writes is kept, whether inferbench's schema knows it or not."""
        if selector is None and self.is_override_file:
            selector = self._only_variant()
        data, sections = self._assemble(selector)
        if not isinstance(data, dict):
            raise ConfigError(
                "a recipe must be a mapping",
                location=self.doc.locate(sections[0]),
                hint="an srt-slurm recipe has name, model, resources and backend keys",
            )
        return copy.deepcopy(data)

    def variants(self, selector: str | None = None) -> list[Recipe]:
        """All recipes `selector` stands for: a whole zip group, every variant (None on an
        override file), or a single one."""
        if selector is None:
            names: list[str | None] = [*self.selectors()] or [None]
            return [self.recipe(name) for name in names]
        match = _SELECTOR.match(selector)
        if match and match.group(1).startswith("zip_override_") and match.group(2) is None:
            n = self._zip_count(selector, self._section(selector))
            return [self.recipe(f"{selector}[{i}]") for i in range(n)]
        return [self.recipe(selector)]

    def _section(self, key: str) -> Any:
        data = self.doc.data
        if not isinstance(data, dict) or key not in data:
            raise ConfigError(
                f"no section {key!r} in this recipe file",
                location=self.doc.locate(),
                hint="sections here: " + ", ".join(str(k) for k in (data or {})),
            )
        return data[key]

    def _zip_count(self, key: str, section: Any) -> int:
        try:
            return _zip_length(section, key)
        except ValueError as exc:
            raise ConfigError(str(exc), location=self.doc.locate((key,))) from None

    def _assemble(self, selector: str | None) -> tuple[Any, tuple[KeyPath, ...]]:
        data = self.doc.data
        if selector is None:
            return data, ((),)
        if not self.is_override_file:
            raise ConfigError(
                f"selector {selector!r} given, but this recipe has no `base:` variants",
                location=self.doc.locate(),
                hint="drop the `:selector` from the reference",
            )
        match = _SELECTOR.match(selector)
        if match is None:
            raise ConfigError(
                f"malformed selector {selector!r}",
                location=self.doc.locate(),
                hint="use base, override_<name>, zip_override_<name> or zip_override_<name>[i]",
            )
        key, index = match.group(1), match.group(2)
        base = self._section("base")
        if key == "base":
            return base, (("base",),)
        section = self._section(key)
        if key.startswith("override_"):
            merged = deep_merge(base, section)
            if isinstance(merged, dict) and "name" not in (section or {}):
                merged["name"] = f"{base.get('name', 'unnamed')}_{key.removeprefix('override_')}"
            return merged, (("base",), (key,))
        return self._zip_variant(base, key, section, index)

    def _zip_variant(
        self, base: Any, key: str, section: Any, index: str | None
    ) -> tuple[Any, tuple[KeyPath, ...]]:
        n = self._zip_count(key, section)
        if index is None or int(index) >= n:
            raise ConfigError(
                f"{key} has {n} variants; pick one with {key}[0..{n - 1}]",
                location=self.doc.locate((key,)),
            )
        i = int(index)
        piece = _zip_slice(section, i)
        merged = deep_merge(base, piece)
        names = section.get("name") if isinstance(section, dict) else None
        if isinstance(merged, dict) and not isinstance(names, list):
            group = key.removeprefix("zip_override_")
            merged["name"] = f"{base.get('name', 'unnamed')}_{group}_{i}"
        return merged, (("base",), (key,))


def _validate(data: Any, source: RecipeSource) -> Recipe:
    """The typed recipe, carrying every reason srtctl's schema rejects it.

    A recipe srtctl rejects still loads when inferbench can read the fields it types, so
    that every cross-check runs on it; keys whose values inferbench cannot type are left
    out of the typed view (and named in the problems). Only a recipe that cannot be typed
    even then (no `resources`, say) raises ConfigError.
    """
    if not isinstance(data, dict):
        raise ConfigError(
            "a recipe must be a mapping",
            location=source.locate(),
            hint="an srt-slurm recipe has name, model, resources and backend keys",
        )
    problems = _problems(recipe_problems(data), source, "srtctl")
    typed: Any = data
    for _ in range(_LENIENT_ROUNDS):
        try:
            recipe = Recipe.model_validate(typed)
            break
        except ValidationError as exc:
            error = config_error_from(
                exc, source.doc, Recipe, data=typed, locator=lambda path: source.locate(path)
            )
            if not problems:  # srtctl's schema accepts what inferbench cannot type
                raise RecipeNotTyped(
                    f"inferbench cannot type this recipe (srtctl accepts it): {error.message}",
                    location=error.location,
                    hint="its checks are skipped; inferbench types sglang, vllm and trtllm",
                ) from None
            pruned = _without(typed, [tuple(e["loc"]) for e in exc.errors(include_url=False)])
            if pruned is None:
                first = problems[0]
                raise ConfigError(first.message, location=first.location, hint=first.hint) from None
            typed = pruned
    else:
        raise ConfigError("recipe cannot be typed", location=source.locate())
    recipe._source = source
    recipe._problems = tuple(problems)
    recipe._unusable = tuple(
        RecipeProblem(v.message, source.locate(v.path), v.hint) for v in unusable_values(data)
    )
    return recipe


_LENIENT_ROUNDS = 4


def _problems(found: list[SchemaProblem], source: RecipeSource, judge: str) -> list[RecipeProblem]:
    return [
        RecipeProblem(
            f"{judge} rejects it: {p.render()}",
            source.locate(p.path),
            unknown_key_hint(str(p.path[-1]), list(p.allowed)) if p.allowed else None,
        )
        for p in found
    ]


def schema_problems_of(
    recipe_file: RecipeFile, recipe: Recipe, schema: SrtctlSchema
) -> tuple[RecipeProblem, ...]:
    """Why the srtctl of `schema` (an srt-slurm ref's) rejects one loaded variant, named
    after that ref (`srtctl at NVIDIA/srt-slurm@v1.0.50 rejects it: ...`)."""
    source = recipe.source
    at_ref = "@" in schema.origin  # a ref's schema (not the bundled one or a checkout's)
    if source is None or same_as_bundled(schema):  # the verdicts it got when loaded
        if not at_ref:
            return recipe.problems
        return tuple(
            replace(p, message=p.message.replace("srtctl", f"srtctl at {schema.origin}", 1))
            for p in recipe.problems
        )
    data, _ = recipe_file._assemble(source.selector)
    judge = f"srtctl at {schema.origin}" if at_ref else "srtctl"
    return tuple(_problems(schema_problems(data, schema), source, judge))


class RecipeNotTyped(ConfigError):
    """A recipe srtctl's schema accepts but inferbench cannot type (e.g. the mocker
    backend): not invalid, only beyond inferbench's checks."""


def _without(data: dict[str, Any], locs: list[tuple[Any, ...]]) -> dict[str, Any] | None:
    """`data` less the keys at `locs` (pydantic error paths); None when a path cannot be
    dropped (a required key that is missing, or nothing left to drop)."""
    pruned = copy.deepcopy(data)
    dropped = False
    for loc in locs:
        keys = [part for part in loc if isinstance(part, str | int)]
        parent = _walk(pruned, keys[:-1])
        if keys and isinstance(parent, dict) and keys[-1] in parent and keys[0] in _OPTIONAL:
            del parent[keys[-1]]
            dropped = True
    return pruned if dropped else None


def _walk(data: Any, keys: list[str | int]) -> Any:
    for part in keys:
        in_list = isinstance(data, list) and isinstance(part, int) and part < len(data)
        if not (in_list or (isinstance(data, dict) and part in data)):
            return None
        data = data[part]
    return data


# Top-level sections a recipe can do without; a bad value below them is left untyped.
_OPTIONAL = frozenset(
    {"backend", "frontend", "dynamo", "benchmark", "health_check", "slurm", "sbatch_directives",
     "srun_options", "environment", "container_mounts", "setup_script"}
)  # fmt: skip


def split_reference(reference: str) -> tuple[str, str | None]:
    """`dir/x.yaml:override_a` -> (`dir/x.yaml`, `override_a`)."""
    path, sep, selector = reference.rpartition(":")
    if sep and path and selector and _SELECTOR.match(selector):
        return path, selector
    return reference, None


# srtctl reads recipes with PyYAML, where a repeated key's last value wins
RECIPE_DUPLICATES = "last"


def load_recipe_file(path: Path) -> RecipeFile:
    return RecipeFile(load_yaml(path, duplicates=RECIPE_DUPLICATES))


def load_recipe(path: Path | str, selector: str | None = None, *, strict: bool = True) -> Recipe:
    """Load one recipe; `path` may carry the selector (`file.yaml:override_x`). `strict`:
    a recipe srtctl's schema rejects, or one with values no benchmark can run
    (`recipe_values`), raises ConfigError (its first problem, with a count)."""
    if selector is None:
        text, selector = split_reference(str(path))
        path = Path(text)
    recipe = load_recipe_file(Path(path)).recipe(selector)
    problems = recipe.problems + recipe.unusable
    if strict and problems:
        first, more = problems[0], len(problems) - 1
        message = first.message + (f" (and {more} more)" if more else "")
        raise ConfigError(message, location=first.location, hint=first.hint)
    return recipe


def locate(recipe: Recipe, path: KeyPath = ()) -> Location:
    """Where `path` of `recipe` was written (file:line:col), if it was loaded from a file."""
    source = recipe.source
    if isinstance(source, RecipeSource):
        return source.locate(path)
    return Location(key=format_path(path) or None)


__all__ = [
    "RecipeBackend",
    "Benchmark",
    "EngineConfigs",
    "RecipeModelSpec",
    "Recipe",
    "RecipeFile",
    "RecipeSource",
    "Resources",
    "WorkerMode",
    "deep_merge",
    "load_recipe",
    "load_recipe_file",
    "locate",
    "parse_concurrencies",
    "split_reference",
]
