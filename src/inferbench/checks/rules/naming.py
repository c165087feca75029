"""Names that encode content: config keys, and recipe file names' topology tokens."""

from __future__ import annotations

from collections.abc import Iterator

from inferbench.checks.engine_limits import flag_path, serving_limits, written
from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.checks.subjects import MasterSubject, RecipeUse
from inferbench.checks.topology_match import worker_matches
from inferbench.config.recipe import Recipe, RecipeSource, WorkerMode, locate
from inferbench.config.topology import TokenKind, TopologyToken, parse_tokens, worker_word
from inferbench.core.seqlen import seq_len_name, shorthand_matches


@rule(
    "IB601",
    "config-key-naming",
    Severity.WARNING,
    MasterSubject,
    "config key is <model-prefix>-<precision>-<gpu>-<framework>[-suffix]",
    hint="rename the key to <model-prefix>-<precision>-<gpu>-<framework>[-suffix] (and the "
    "changelog entries naming it)",
)
def config_key_naming(subject: MasterSubject) -> Iterator[Problem]:
    entry, key = subject.config.entry, subject.config.key
    gpu = entry.runner.removeprefix("cluster:").split("-")[0]
    expected = f"{entry.model_prefix}-{entry.precision}-{gpu}-{entry.framework}"
    if key != expected and not key.startswith(expected + "-"):
        yield Problem(
            f"config key {key!r} does not start with {expected!r} "
            "(model-prefix, precision, runner GPU, framework)",
            subject.config.locate(),
            hint=f"rename it {expected}[-suffix], or fix the field that disagrees",
        )


def _name_tokens(recipe: Recipe) -> tuple[str, list[TopologyToken]] | None:
    """The tokens of `<dir>/<file>` of a plain recipe file (override files hold many
    variants under one name, so their names are not held to each variant)."""
    source = recipe.source
    if not isinstance(source, RecipeSource) or source.selector is not None:
        return None
    shown = f"{source.file.parent.name}/{source.file.name}"
    return shown, parse_tokens(f"{source.file.parent.name}/{source.file.stem}")


def _worker_problems(recipe: Recipe, shown: str, workers: list[TopologyToken]) -> Iterator[Problem]:
    modes: tuple[WorkerMode, ...] = recipe.modes
    if recipe.disaggregated and len(workers) == 1:
        token = workers[0]
        if not any(worker_matches(token, recipe.layout(m)) for m in modes):
            words = "/".join(worker_word(recipe.layout(m)) for m in modes)
            yield Problem(
                f"file name {shown!r} says {token.text} but the workers are {words}",
                locate(recipe, flag_path(recipe, modes[-1], None)),
            )
        return
    for token, mode in zip(workers, modes, strict=False):
        layout = recipe.layout(mode)
        if not worker_matches(token, layout):
            yield Problem(
                f"file name {shown!r} says {token.text} for {mode} but its engine flags are "
                f"{worker_word(layout)} ({layout.describe()})",
                locate(recipe, flag_path(recipe, mode, None)),
            )


def _content_problem(recipe: Recipe, shown: str, token: TopologyToken) -> Problem | None:
    res, bench = recipe.resources, recipe.benchmark
    if token.kind is TokenKind.PD:
        have = (res.workers("prefill"), res.workers("decode")) if recipe.disaggregated else None
        # upstream names count workers (2p1d) or, in some trees, nodes (12p4d for 6 DEP8
        # prefill workers on 4-GPU nodes): either reading is the recipe's
        nodes = (res.prefill_nodes, res.decode_nodes) if recipe.disaggregated else None
        if (token.first, token.second) not in (have, nodes):
            actual = f"{have[0]}P{have[1]}D" if have else "aggregated"
            return Problem(
                f"file name {shown!r} says {token.text} but the recipe is {actual}",
                locate(recipe, ("resources", "prefill_workers" if have else "agg_workers")),
            )
    isl, osl = (bench.isl, bench.osl) if bench else (None, None)
    seq = token.kind is TokenKind.SEQ
    if seq and isl and osl and not shorthand_matches(token.first, token.second, isl, osl):
        return Problem(
            f"file name {shown!r} says {token.text} but the benchmark is "
            f"{seq_len_name(isl, osl)} (isl {isl}, osl {osl})",
            locate(recipe, ("benchmark", "isl")),
        )
    conc = bench.concurrencies if bench else None
    # `c16` may name the concurrency per decode worker (srt-slurm's ctx1_gen3 recipes)
    per_worker = {c // max(res.workers(recipe.modes[-1]), 1) for c in conc or ()}
    if token.kind is TokenKind.CONC and conc and token.first not in {*conc, *per_worker}:
        return Problem(
            f"file name {shown!r} says {token.text} but concurrencies are {list(conc)}",
            locate(recipe, ("benchmark", "concurrencies")),
        )
    if token.kind is TokenKind.BATCH:
        limits = serving_limits(recipe)
        seqs = limits.seqs
        if seqs is not None and seqs != token.first:
            return Problem(
                f"file name {shown!r} says {token.text} but {limits.mode} "
                f"{written(limits.max_num_seqs)} is {seqs}",
                locate(recipe, flag_path(recipe, limits.mode, limits.max_num_seqs)),
            )
    return None


@rule(
    "IB602",
    "recipe-name-topology",
    Severity.ERROR,
    RecipeUse,
    "topology tokens in the recipe file name (2p1d, dep8, tp4, 8k1k, c2048, batch64) match it",
    hint="rename the file to what the recipe deploys, or fix the recipe",
)
def recipe_name_topology(use: RecipeUse) -> Iterator[Problem]:
    named = _name_tokens(use.recipe)
    if named is None:
        return
    shown, tokens = named
    workers = [t for t in tokens if t.kind is TokenKind.WORKER]
    yield from _worker_problems(use.recipe, shown, workers)
    for token in tokens:
        problem = _content_problem(use.recipe, shown, token)
        if problem is not None:
            yield problem
