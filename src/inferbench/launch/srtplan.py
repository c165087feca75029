"""Plan a multinode job for srtctl: its recipe with structured overrides + srtslurm.yaml.

The recipe the job references (`CONFIG_FILE=recipes/...[:selector]`) is loaded and
validated by the config stage, then re-rendered with overrides applied as data, never by
editing text: `model.path` becomes the target cluster's `model_paths` alias for the job's
model, `benchmark.isl/osl/concurrencies` come from the job. The cluster file srtctl reads
is generated from the cluster catalog (`Cluster.srtslurm_config()`).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from inferbench.errors import ConfigError, InputError, Location
from inferbench.launch.deployment import Deployment
from inferbench.launch.plan import Backend, Engine, Plan, RenderedFile
from inferbench.launch.planner import PlanOptions, bench_spec
from inferbench.launch.shellsafe import check_cluster

RECIPE_FILE = "recipe.yaml"
SRTSLURM_FILE = "srtslurm.yaml"
OUTPUTS_DIR = "srtctl-outputs"


def dump_yaml(data: Any) -> str:
    """YAML in the order written; YAML 1.1 quoting, as srtctl reads it with PyYAML (1.1),
    so `yes`, `on`, `1e3` or `4:00:00` stay strings there."""
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.version = (1, 1)
    buf = io.StringIO()
    yaml.dump(data, buf)
    return buf.getvalue()


def pick_cluster(project: Any, dep: Deployment, name: str | None) -> Any:
    """The catalog cluster that runs `dep`: the one named, else the one serving its runner."""
    clusters = getattr(project, "clusters", {})
    if name is not None:
        if name not in clusters:
            raise InputError(
                f"unknown cluster {name!r}",
                location=Location(key="--cluster"),
                hint=f"the cluster catalog defines: {', '.join(sorted(clusters)) or 'none'}",
            )
        check_cluster(clusters[name])  # its values reach srtctl's sbatch script
        return clusters[name].cluster
    serving = project.clusters_for_runner(dep.runner)
    if not serving:
        raise InputError(
            f"no cluster in the catalog serves runner {dep.runner!r}",
            location=Location(key="runner"),
            hint="add a clusters/<name>.yaml listing it under runners, or pass --cluster",
        )
    check_cluster(serving[0])
    return serving[0].cluster


def rendered_recipe(
    dep: Deployment, project: Any, cluster: Any
) -> tuple[dict[str, Any], list[str]]:
    """The job's recipe as a mapping with the overrides applied, and notes on what changed."""
    if not dep.config_file:
        raise InputError(
            f"{dep.config_key}: multinode job without CONFIG_FILE",
            location=Location(key="additional-settings"),
            hint="add CONFIG_FILE=recipes/<path>.yaml to its prefill/decode additional-settings",
        )
    root = Path(project.root).resolve()
    path = (root / dep.config_file).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        raise ConfigError(
            f"{dep.config_key}: CONFIG_FILE {dep.config_file!r} is not a recipe in the tree",
            location=Location(key="CONFIG_FILE"),
        )
    recipe = project.recipe_file(path).recipe(dep.config_selector)
    data: dict[str, Any] = recipe.model_dump(mode="json", by_alias=True, exclude_unset=True)
    shown = dep.config_file + (f":{dep.config_selector}" if dep.config_selector else "")
    notes: list[str] = [f"recipe {shown} for cluster {cluster.name}"]
    entry = cluster.model_entry(dep.model_prefix, dep.precision, dep.framework)
    if entry is None:
        notes.append(f"cluster {cluster.name} stages no {dep.model_prefix}/{dep.precision}")
    else:
        target = entry.alias or entry.path
        if data["model"].get("path") != target:
            notes.append(f"model.path {data['model'].get('path')!r} -> {target!r}")
        data["model"]["path"] = target
    bench = dict(data.get("benchmark") or {"type": "sa-bench"})
    bench.update(
        isl=dep.isl, osl=dep.osl, concurrencies="x".join(str(c) for c in dep.concurrencies)
    )
    data["benchmark"] = bench
    return data, notes


def srtctl_plan(
    dep: Deployment,
    project: Any,
    cluster_name: str | None,
    job_dir: str,
    options: PlanOptions | None = None,
) -> Plan:
    """Rendered recipe.yaml + srtslurm.yaml and the `srtctl apply` that submits them."""
    from inferbench.config.recipe_schema import Recipe

    if not dep.multinode:
        raise InputError(
            f"{dep.config_key}: a single-node job does not run through srtctl",
            location=Location(key="backend"),
            hint="use --backend slurm or --backend local",
        )
    cluster = pick_cluster(project, dep, cluster_name)
    data, notes = rendered_recipe(dep, project, cluster)
    try:
        Recipe.model_validate(data)  # the overrides keep the recipe schema-valid
    except ValueError as exc:
        raise ConfigError(f"rendered recipe is invalid: {exc}") from None
    recipe_path = f"{job_dir}/rendered/{RECIPE_FILE}"
    return Plan(
        backend=Backend.SRTCTL,
        engine=Engine(dep.framework.removeprefix("dynamo-").replace("trt", "trtllm"))
        if dep.framework.removeprefix("dynamo-") in ("vllm", "sglang", "trt")
        else Engine.SIM,
        fingerprint=dep.fingerprint,
        config_key=dep.config_key,
        files=(
            RenderedFile(name=RECIPE_FILE, content=dump_yaml(data)),
            RenderedFile(name=SRTSLURM_FILE, content=dump_yaml(cluster.srtslurm_config())),
        ),
        submit=("srtctl", "apply", "-f", recipe_path, "--json", "-o", f"{job_dir}/{OUTPUTS_DIR}"),
        submit_env={"SRTSLURM_CONFIG": f"{job_dir}/rendered/{SRTSLURM_FILE}"},
        bench=bench_spec(dep, options or PlanOptions()),
        notes=tuple(notes),
    )
