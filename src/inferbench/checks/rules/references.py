"""CONFIG_FILE references: they resolve, stay inside the tree, and name loadable recipes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.checks.subjects import (
    Coverage,
    DuplicateKeys,
    RecipeLoad,
    RecipeReference,
    RetiredRecipes,
    UpstreamReferences,
)
from inferbench.core.errors import Location


@rule(
    "IB001",
    "recipe-not-checkable",
    Severity.WARNING,
    UpstreamReferences,
    "recipe references into upstream srt-slurm cannot be checked without --srt-slurm",
    hint="pass --srt-slurm DIR (a checkout of srt-slurm at the pinned ref) to check them",
)
def recipe_not_checkable(subject: UpstreamReferences) -> Iterator[Problem]:
    refs = subject.references
    absent = [r for r in refs if r.resolved is not None and r.resolved.origin == "upstream"]
    unresolved = [r for r in refs if r not in absent]
    if unresolved:
        first = unresolved[0]
        others = f" and {len(unresolved) - 1} more" if len(unresolved) > 1 else ""
        yield Problem(
            f"CONFIG_FILE {str(first.ref)!r}{others} not in this tree; they would resolve in "
            "srt-slurm's recipes/ overlay and were not checked",
            first.location,
        )
    if absent:
        first = absent[0]
        others = f" and {len(absent) - 1} more" if len(absent) > 1 else ""
        yield Problem(
            f"CONFIG_FILE {str(first.ref)!r}{others} neither in this tree nor in the srt-slurm "
            "checkout given; the launcher may clone another srt-slurm ref, so they were not "
            "checked",
            first.location,
            hint="point --srt-slurm at the ref the launcher clones for these entries",
        )


@rule(
    "IB201",
    "config-file-missing",
    Severity.ERROR,
    RecipeReference,
    "CONFIG_FILE names a recipe file that exists",
    hint="fix the path (CONFIG_FILE=recipes/<path under the recipe root>.yaml) or add the recipe",
)
def config_file_missing(ref: RecipeReference) -> Iterator[Problem]:
    resolved = ref.resolved
    if resolved is None or resolved.exists or ref.upstream:
        return
    where = (
        "this tree nor in the srt-slurm checkout" if resolved.origin == "upstream" else "this tree"
    )
    shown = resolved.shown_path or resolved.path.name
    siblings = sorted(p.name for p in resolved.path.parent.glob("*.yaml"))[:5]
    hint = "files there: " + ", ".join(siblings) if siblings else None
    yield Problem(
        f"CONFIG_FILE {resolved.reference!r} does not exist in {where} ({shown})",
        ref.location,
        hint=hint or "fix the path (CONFIG_FILE=recipes/<path under the recipe root>.yaml)",
    )


@rule(
    "IB202",
    "config-file-outside-tree",
    Severity.ERROR,
    RecipeReference,
    "CONFIG_FILE stays inside the recipe tree (no absolute paths, no `..` escapes)",
    hint="name the recipe relative to the recipe root (CONFIG_FILE=recipes/<path>.yaml)",
)
def config_file_outside_tree(ref: RecipeReference) -> Iterator[Problem]:
    if ref.error is not None:
        yield Problem(ref.error.message, ref.location, hint=ref.error.hint)


@rule(
    "IB203",
    "recipe-schema",
    Severity.ERROR,
    RecipeLoad,
    "srtctl's schema accepts the recipe (no unknown keys, right types); srtctl's reason",
    hint="srtctl rejects unknown keys at every level (engine flag maps and environments "
    "are free) and values of another type; check the key and its type against srt-slurm's "
    "src/srtctl/core/schema.py",
)
def recipe_schema(load: RecipeLoad) -> Iterator[Problem]:
    for problem in load.problems:
        where = problem.location if problem.location.file is not None else Location(load.path)
        yield Problem(problem.message, where, hint=problem.hint)


@rule(
    "IB211",
    "recipe-value-unusable",
    Severity.ERROR,
    RecipeLoad,
    "the recipe's name and resource counts are usable (srtctl takes a negative or fractional "
    "GPU count, truncating 1.5 to 1, and any name)",
    hint="write whole counts (GPUs 1 or more, nodes and workers 0 or more) and a plain name",
)
def recipe_value_unusable(load: RecipeLoad) -> Iterator[Problem]:
    for problem in load.unusable:
        yield Problem(problem.message, problem.location, hint=problem.hint)


@rule(
    "IB210",
    "recipe-duplicate-key",
    Severity.WARNING,
    DuplicateKeys,
    "no key is written twice in one mapping (srtctl silently keeps the later value)",
    hint="delete the definition that is not meant to apply",
)
def recipe_duplicate_key(subject: DuplicateKeys) -> Iterator[Problem]:
    for dup in subject.duplicates:
        key = (dup.location.key or "").rpartition(".")[2]
        yield Problem(
            f"{key!r} is written again here (first at line {dup.first_line}); srtctl reads "
            "only this later value",
            dup.location,
        )


@rule(
    "IB212",
    "recipe-retired",
    Severity.INFO,
    RetiredRecipes,
    "recipes no active master entry names and no launcher routes a job to are retired: "
    "reported once, not checked rule by rule",
    hint="delete the retired recipes, or name one from a master entry's CONFIG_FILE to "
    "have it run and checked",
)
def recipe_retired(subject: RetiredRecipes) -> Iterator[Problem]:
    folders = Counter(ref.rpartition("/")[0] for ref in subject.references)
    shown = ", ".join(f"{folder}/ ({n})" for folder, n in sorted(folders.items())[:3])
    more = f" and {len(folders) - 3} more folders" if len(folders) > 3 else ""
    yield Problem(
        f"{len(subject.references)} recipe file(s) are retired (no active master entry names "
        f"them, no launcher routes a job to them) and were not checked: {shown}{more}",
        Location(subject.paths[0]),
    )


@rule(
    "IB002",
    "cross-check-coverage",
    Severity.INFO,
    Coverage,
    "how many master-entry/recipe pairs the cross-checks could not reach, and why",
    hint="pass --srt-slurm with the srt-slurm refs the launchers clone (a refs bundle or "
    "checkouts), and fix the references IB201/IB202/IB203 name",
)
def cross_check_coverage(coverage: Coverage) -> Iterator[Problem]:
    skipped = sum(n for _, n in coverage.skipped)
    if skipped:
        why = "; ".join(f"{n} {reason}" for reason, n in coverage.skipped)
        yield Problem(
            f"{skipped} of {coverage.pairs} master-entry/recipe pairs were not cross-checked: {why}"
        )
    not_at_ref = sum(n for _, _, n in coverage.not_at_ref)
    if not_at_ref:
        why = "; ".join(f"{n} {clone} ({instead})" for clone, instead, n in coverage.not_at_ref)
        yield Problem(
            f"{not_at_ref} of {coverage.pairs} master-entry/recipe pairs were not checked at "
            f"the srt-slurm ref their launcher clones: {why}"
        )
    if coverage.recipes_not_typed:
        yield Problem(
            f"{coverage.recipes_not_typed} recipe file(s) or variant(s) could not be read at "
            "all, or hold values no benchmark can run, and got no recipe checks (see IB203, "
            "IB211)"
        )
