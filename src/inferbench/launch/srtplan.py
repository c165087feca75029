"""Plan a multinode job for srtctl: its source recipe, passed through, + srtslurm.yaml.

The recipe the job references (`CONFIG_FILE=recipes/...[:selector]`, from the tree or from
the srt-slurm ref the job's launcher clones, `config.srt_job`'s choice among the
`--srt-slurm` sources) is resolved as srtctl resolves it (`base:` + overrides merged) and
kept whole: every key it writes reaches srtctl, whether inferbench's schema knows it or
not. Only the fields inferbench owns are set, as data, never by editing text:

- `model.path`: the target cluster's `model_paths` alias for the job's weights;
- `model.container`: a name that resolves to the job's image (the master's `image`);
- the benchmark: `isl`/`osl` of an sa-bench block, and its `concurrencies` when the recipe
  has none or the user chose others (`PlanOptions.recipe_concurrencies`: InferenceX's
  launchers run the recipe unchanged, so its own concurrencies are what runs); `CONC` of an
  agentic (custom) block's environment.

The cluster file srtctl reads is written for the job from the cluster catalog
(`srtcluster.srtslurm_for`). The srtctl schema of that ref refuses at plan time what its
srtctl would refuse; srtctl itself is the judge of the result (`srtctl dry-run`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from inferbench.config.images import same_image
from inferbench.config.launcher_srt_ref import job_variables
from inferbench.config.srt_job import RunnerLaunchers, SrtChoice, choose, fallback
from inferbench.config.srt_slurm_refs import SrtSlurmSources
from inferbench.config.srtctl_schema import SrtctlSchema, schema_problems, srtctl_schema
from inferbench.core.errors import ConfigError, InputError, Location
from inferbench.engines import find_engine
from inferbench.launch.deployment import Deployment
from inferbench.launch.plan import Backend, Engine, Plan, RenderedFile
from inferbench.launch.planner import PlanOptions, bench_spec
from inferbench.launch.srtcluster import (
    ClusterSource,
    SrtctlCatalog,
    image_location,
    is_container_alias,
    srtctl_catalog,
    srtslurm_for,
)
from inferbench.launch.srtevals import eval_env

if TYPE_CHECKING:
    from inferbench.config.project import Project

RECIPE_FILE = "recipe.yaml"
SRTSLURM_FILE = "srtslurm.yaml"
OUTPUTS_DIR = "srtctl-outputs"
SA_BENCH = "sa-bench"


def dump_yaml(data: Any) -> str:
    """YAML that PyYAML's `safe_load` (srtctl's reader, YAML 1.1) reads back to `data`:
    strings such as `yes`, `on`, `1e3` or `4:00:00` come out quoted."""
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True)


def recipe_reference(dep: Deployment, project: Project) -> str:
    """The job's CONFIG_FILE as written (`recipes/x.yaml[:selector]`)."""
    written = dep.settings.get("CONFIG_FILE")
    if written:
        return written
    assert dep.config_file is not None
    path = Path(dep.config_file)
    recipe_root = Path(project.layout.recipes)
    if path.is_relative_to(recipe_root):
        path = Path(project.layout.recipe_prefix) / path.relative_to(recipe_root)
    return str(path) + (f":{dep.config_selector}" if dep.config_selector else "")


@dataclass(frozen=True)
class SrtSources:
    """The srt-slurm sources of a plan (`--srt-slurm`) and the tree's launcher routes,
    read once for every job of a run."""

    sources: SrtSlurmSources | None = None
    routes: RunnerLaunchers | None = None

    @classmethod
    def of(cls, given: SrtSources | SrtSlurmSources | Path | None) -> SrtSources:
        if isinstance(given, SrtSources):
            return given
        if isinstance(given, Path):
            given = SrtSlurmSources([given])
        return cls(given)


def job_srt(dep: Deployment, project: Project, srt: SrtSources) -> SrtChoice:
    """The srt-slurm tree the job's recipe is read and judged with: the ref its launcher
    clones, when a source holds it (`config.srt_job`, as `check` chooses)."""
    if srt.sources is None:
        return fallback(None)
    routes = srt.routes or RunnerLaunchers(project)
    reference = recipe_reference(dep, project)
    text = None
    try:  # the tree's recipe decides the launchers' power lane (USES_DCGM_POWER)
        local = project.resolve_recipe(reference)
        if local.exists:
            text = local.path.read_text(errors="replace")
    except (ConfigError, OSError):
        pass
    variables = job_variables(
        framework=dep.framework,
        model_prefix=dep.model_prefix,
        precision=dep.precision,
        model=dep.model,
        scenario=dep.scenario,
        spec_decoding=dep.spec_decoding,
        config_file=reference,
        recipe_text=text,
    )
    return choose(srt.sources, routes.clone_of(dep.runner, variables))


def source_recipe(
    dep: Deployment, project: Project, srt_slurm: SrtSources | SrtSlurmSources | Path | None = None
) -> tuple[dict[str, Any], str, SrtChoice]:
    """The job's recipe as srtctl resolves it (a fresh mapping), where it was found and the
    srt-slurm tree chosen for the job."""
    if not dep.config_file and "CONFIG_FILE" not in dep.settings:
        raise InputError(
            f"{dep.config_key}: {dep.framework} job has no CONFIG_FILE, "
            "so the job is not an srtctl job",
            location=Location(key="additional-settings"),
            hint="add CONFIG_FILE=recipes/<path>.yaml to its prefill/decode additional-settings,"
            " or run it with the launcher its framework uses",
        )
    srt = SrtSources.of(srt_slurm)
    reference = recipe_reference(dep, project)
    prefix = project.layout.recipe_prefix
    local = project.resolve_recipe(reference)
    choice = job_srt(dep, project, srt)  # its srtctl judges the tree's own recipes too
    if not local.exists and choice.tree is not None:
        choice.tree.fetch_recipes([local.reference.split(":", 1)[0].removeprefix(prefix)])
    root = choice.tree.root if choice.tree is not None else None
    resolved = project.resolve_recipe(reference, srt_slurm=root) if root else local
    # A repo path (benchmarks/multi_node/srt-slurm-recipes/...) names the tree's own file:
    # the launchers copy that folder into the srt-slurm clone at the same path, and srtctl
    # applies it there. Any other reference outside recipes/ is not srtctl's (an llm-d config
    # the launcher runs itself).
    repo_path = (project.root / reference.split(":", 1)[0]).resolve()
    in_repo = resolved.exists and resolved.path.resolve() == repo_path
    if not reference.startswith(prefix) and not in_repo:
        raise InputError(
            f"{dep.config_key}: CONFIG_FILE {reference!r} is not an srt-slurm recipe "
            f"({prefix}... or a recipe file of the tree), so the job is not an srtctl job",
            location=Location(key="CONFIG_FILE"),
            hint="run it with the launcher its framework uses",
        )
    if not resolved.exists:
        raise _missing(dep, resolved.reference, srt, choice)
    recipe_file = project.recipe_file(resolved.path)
    if resolved.selector is None and len(recipe_file.selectors()) > 1:
        data = copy.deepcopy(recipe_file.doc.data)  # srtctl submits every variant: keep all
    else:
        data = recipe_file.mapping(resolved.selector)
    shown = f"{resolved.origin} {resolved.reference}"
    if resolved.origin == "upstream" and choice.tree is not None:
        shown += f" of {choice.tree.label}"
    return data, shown, choice


def _missing(dep: Deployment, reference: str, srt: SrtSources, choice: SrtChoice) -> ConfigError:
    """Why a recipe is in no tree at hand, and which source would hold it."""
    location = Location(key="CONFIG_FILE")
    if choice.tree is not None:
        return ConfigError(
            f"{dep.config_key}: CONFIG_FILE {reference!r} is in neither the tree or "
            f"{choice.tree.label}/recipes"
            + ("" if choice.at_ref else f" (the launcher clones {choice.wanted})"),
            location=location,
            hint="fix the reference",
        )
    if srt.sources is None:
        return ConfigError(
            f"{dep.config_key}: CONFIG_FILE {reference!r} is in neither the tree or an "
            "srt-slurm source (none given)",
            location=location,
            hint="fix the reference, or pass --srt-slurm SOURCE (a clone, a bundle or a "
            "checkout of srt-slurm) to look in srt-slurm's recipes/",
        )
    return ConfigError(
        f"{dep.config_key}: CONFIG_FILE {reference!r} is in neither the tree or the "
        f"srt-slurm the launcher clones, {choice.wanted}: {choice.instead}",
        location=location,
        hint="pass --srt-slurm with a clone or bundle holding that ref, or a copy of it as "
        "--srt-slurm PATH@REF",
    )


def _set_model(
    data: dict[str, Any], dep: Deployment, cluster: ClusterSource, notes: list[str]
) -> str:
    """Set model.path and model.container; return the container name written."""
    model = data.get("model")
    if not isinstance(model, dict):
        raise ConfigError(
            f"{dep.config_key}: the recipe has no `model:` mapping", location=Location(key="model")
        )
    entry = cluster.cluster.model_entry(dep.model_prefix, dep.precision, dep.framework, dep.model)
    if entry is None:
        notes.append(
            f"cluster {cluster.cluster.name} stages no {dep.model_prefix}/{dep.precision}: "
            f"model.path kept as {model.get('path')!r}"
        )
    else:
        target = entry.alias or entry.path
        if model.get("path") != target:
            notes.append(f"model.path {model.get('path')!r} -> {target!r}")
        model["path"] = target
    written = str(model.get("container") or "")
    if not dep.image:
        return written
    location = image_location(cluster.cluster, dep.image)
    if is_container_alias(written) and location.startswith(("/", "./")):
        return written  # srtslurm.yaml maps the alias to the cluster's file of the image
    if same_image(written, location) and not is_container_alias(written):
        return written  # already the image, in a notation srtctl passes to pyxis
    # srtctl's preflight takes an alias only for a file; a registry image is written whole
    if not same_image(written, dep.image):
        notes.append(f"model.container {written!r} -> {location!r} (the job's image)")
    model["container"] = location
    return location


def _set_benchmark(
    data: dict[str, Any], dep: Deployment, notes: list[str], *, keep_concurrencies: bool = False
) -> None:
    bench = data.get("benchmark")
    if bench is None:
        bench = data["benchmark"] = {"type": SA_BENCH}
    if not isinstance(bench, dict):
        raise ConfigError(
            f"{dep.config_key}: `benchmark:` is not a mapping", location=Location(key="benchmark")
        )
    kind = bench.get("type", SA_BENCH)
    if dep.scenario == "agentic-coding":
        _set_agentic_concurrency(data, bench, dep, notes)
        return
    if kind == SA_BENCH or any(k in bench for k in ("isl", "osl", "concurrencies")):
        bench.update(isl=dep.isl, osl=dep.osl)
        ours = "x".join(str(c) for c in dep.concurrencies)
        own = bench.get("concurrencies")
        if keep_concurrencies and own is not None:
            if str(own) != ours:
                notes.append(
                    f"benchmark.concurrencies {own} kept, the recipe's own (the master entry"
                    f" lists {ours}; --concurrency, --min-concurrency or --max-concurrency run"
                    " those instead)"
                )
        else:
            bench["concurrencies"] = ours
    else:
        notes.append(f"benchmark type {kind}: run as the recipe writes it")


def _set_agentic_concurrency(
    data: dict[str, Any], bench: dict[str, Any], dep: Deployment, notes: list[str]
) -> None:
    """InferenceX's agentic client (benchmarks/multi_node/agentic_srt.sh) reads CONC, and
    CONC_LIST for several concurrencies on one deployment; the job's values replace the
    recipe's in the environments that name CONC, and the benchmark's gets them."""
    if not dep.concurrencies:
        return
    first = str(dep.concurrencies[0])
    envs = [bench.setdefault("env", {})]
    frontend = data.get("frontend")
    front_env = frontend.get("env") if isinstance(frontend, dict) else None
    if isinstance(front_env, dict) and "CONC" in front_env:
        envs.append(front_env)
    for env in envs:
        if not isinstance(env, dict):
            continue
        if "CONC" in env and str(env["CONC"]) != first:
            notes.append(f"CONC {env['CONC']} -> {first} (the job's concurrency)")
        env["CONC"] = first
        if len(dep.concurrencies) > 1:
            env["CONC_LIST"] = " ".join(str(c) for c in dep.concurrencies)


def _variant_sections(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        section
        for key, section in data.items()
        if key.startswith(("override_", "zip_override_")) and isinstance(section, dict)
    ]


def _set_in_variants(data: dict[str, Any], base: dict[str, Any], notes: list[str]) -> bool:
    """Give every variant that overrides an owned field the base's value; True when some
    variant sets its own concurrencies (srtctl submits each variant as its own job)."""
    own_concurrencies = False
    for section in _variant_sections(data):
        model = section.get("model")
        if isinstance(model, dict):
            for key in ("path", "container"):
                if key in model:
                    model[key] = base["model"].get(key)
        bench = section.get("benchmark")
        if isinstance(bench, dict):
            own_concurrencies |= "concurrencies" in bench
    if own_concurrencies:
        notes.append("every variant keeps its own benchmark.concurrencies")
    return own_concurrencies


def rendered_recipe(
    dep: Deployment,
    project: Project,
    cluster: ClusterSource,
    srt_slurm: SrtSources | SrtSlurmSources | Path | None = None,
    *,
    recipe_concurrencies: bool = True,
) -> tuple[dict[str, Any], str, list[str], SrtChoice]:
    """The job's recipe with inferbench's fields set, the container name it uses, notes and
    the srt-slurm tree chosen. A reference to an override file with several variants keeps
    the whole file (srtctl submits each variant); the owned fields are then set in `base:`
    and in the variants. With `recipe_concurrencies`, a recipe's own
    `benchmark.concurrencies` are kept."""
    data, shown, choice = source_recipe(dep, project, srt_slurm)
    notes = [f"recipe {shown} for cluster {cluster.cluster.name} ({cluster.origin})"]
    if choice.at_ref and choice.tree is not None:
        notes.append(f"srt-slurm {choice.tree.label}: the ref the job's launcher clones")
    base = data.get("base") if isinstance(data.get("base"), dict) else None
    target = base if base is not None else data
    container = _set_model(target, dep, cluster, notes)
    keep = (base is not None and _set_in_variants(data, target, notes)) or recipe_concurrencies
    _set_benchmark(target, dep, notes, keep_concurrencies=keep)
    return data, container, notes, choice


def srt_warning(choice: SrtChoice, given: bool) -> str | None:
    """What a plan says when its recipe is not read and judged at the ref the job clones
    (`given`: some --srt-slurm source was given)."""
    if choice.at_ref or not given:
        return None
    return f"the job's launcher clones srt-slurm {choice.wanted}; {choice.instead}"


def refuse_if_srtctl_rejects(
    dep: Deployment, data: dict[str, Any], schema: SrtctlSchema | None = None
) -> None:
    """Stop at plan time where srtctl's schema (`schema`: the ref's; default the bundled
    one) rejects the rendered recipe (keys of another srt-slurm version, typically), with
    srtctl's reason, rather than at `srtctl apply`. An override file kept whole is left to
    srtctl (its variants are resolved there)."""
    if "base" in data:
        return
    schema = schema or srtctl_schema()
    problems = schema_problems(data, schema)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        of = "" if schema.origin == "bundled" else f" of {schema.origin}"
        raise ConfigError(
            f"{dep.config_key}: srtctl {schema.version}{of} rejects its recipe: "
            f"{problems[0].render()}{more}",
            location=Location(key=".".join(str(p) for p in problems[0].path) or None),
            hint="the recipe is written for another srt-slurm version: run it with the srtctl "
            "its launcher clones, or update the recipe",
        )


def recipe_engine(data: dict[str, Any]) -> Engine:
    backend = (data.get("base") or data).get("backend")
    kind = backend.get("type", "sglang") if isinstance(backend, dict) else "sglang"
    spec = find_engine(str(kind))
    return Engine(spec.key) if spec is not None else Engine.SIM


def srtctl_plan(
    dep: Deployment,
    project: Project | None,
    cluster_name: str | None,
    job_dir: str,
    options: PlanOptions | None = None,
    *,
    catalog: SrtctlCatalog | None = None,
    srt_slurm: SrtSources | SrtSlurmSources | Path | None = None,
) -> Plan:
    """Rendered recipe.yaml + srtslurm.yaml and the `srtctl apply` that submits them; the
    recipe is read and judged at the srt-slurm ref the job's launcher clones when one of the
    `srt_slurm` sources holds it."""
    options = options or PlanOptions()
    if not dep.multinode:
        raise InputError(
            f"{dep.config_key}: a single-node job does not run through srtctl",
            location=Location(key="backend"),
            hint="use --backend slurm or --backend local",
        )
    if project is None:
        raise InputError(
            "an srtctl plan needs the benchmark tree (its recipes and cluster catalog)",
            location=Location(key="--root"),
            hint="pass --root PATH/TO/TREE",
        )
    catalog = catalog if catalog is not None else srtctl_catalog(project)
    cluster = catalog.named(cluster_name) if cluster_name else catalog.serving(dep.runner)
    srt = SrtSources.of(srt_slurm)
    data, container, notes, choice = rendered_recipe(
        dep, project, cluster, srt, recipe_concurrencies=options.recipe_concurrencies
    )
    if choice.schema is not None:  # none: a ref no source holds, left to its srtctl
        refuse_if_srtctl_rejects(dep, data, choice.schema)
    srtslurm = srtslurm_for(cluster, dep, container, srtctl_root=options.srtctl_root)
    recipe_path = f"{job_dir}/rendered/{RECIPE_FILE}"
    bench, warnings = bench_spec(dep, options), []
    away = srt_warning(choice, srt.sources is not None)
    if away:
        warnings.append(away)
    submit_env = {"SRTSLURM_CONFIG": f"{job_dir}/rendered/{SRTSLURM_FILE}"}
    evals = eval_env(dep, project.root, bench.eval) if bench.eval is not None else None
    if isinstance(evals, dict) and bench.eval is not None:
        submit_env.update(evals)
        extra = bench.eval.concurrencies[1:]
        if extra:
            warnings.append(
                f"srt-slurm runs one eval, at concurrency {bench.eval.concurrencies[0]}; "
                f"not at {', '.join(map(str, extra))}"
            )
            bench = bench.model_copy(
                update={
                    "eval": bench.eval.model_copy(
                        update={"concurrencies": (bench.eval.concurrencies[0],)}
                    )
                }
            )
    elif bench.eval is not None:
        if bench.eval.only:
            raise InputError(
                f"{dep.config_key}: an eval-only job runs no benchmark, and {evals}",
                location=Location(key="run-eval"),
                hint="run multinode evals with the InferenceX launcher (srt-slurm's "
                "post-benchmark lm-eval), or leave out --evals-only",
            )
        warnings.append(
            f"marked run-eval (concurrency "
            f"{', '.join(map(str, bench.eval.concurrencies))}), but {evals}: "
            "only the benchmark runs"
        )
        bench = bench.model_copy(update={"eval": None})  # the plan says what will run
    return Plan(
        backend=Backend.SRTCTL,
        engine=recipe_engine(data),
        fingerprint=dep.fingerprint,
        config_key=dep.config_key,
        files=(
            RenderedFile(name=RECIPE_FILE, content=dump_yaml(data)),
            RenderedFile(name=SRTSLURM_FILE, content=dump_yaml(srtslurm)),
        ),
        submit=("srtctl", "apply", "-f", recipe_path, "--json", "-o", f"{job_dir}/{OUTPUTS_DIR}"),
        submit_env=submit_env,
        bench=bench,
        notes=tuple(notes),
        warnings=tuple(warnings),
    )


def eval_gap(deployments: Sequence[Deployment], options: PlanOptions, tree: Path) -> str | None:
    """The warning a run on the srtctl backend prints when some of its jobs are marked
    `run-eval` and srt-slurm cannot run their evals from this tree (see `srtevals`)."""
    if not options.evals:
        return None
    marked = [d for d in deployments if d.multinode and d.eval_concurrencies]
    if not marked:
        return None
    plan = bench_spec(marked[0], options).eval
    why = eval_env(marked[0], tree, plan) if plan is not None else None
    if not isinstance(why, str):
        return None
    return (
        f"{len(marked)} of {len(deployments)} jobs are marked run-eval, but {why} "
        "(their benchmarks run, an eval-only job is not planned); pass --no-evals to "
        "silence this"
    )
