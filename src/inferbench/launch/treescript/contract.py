"""The environment a benchmark script gets in InferenceX, for one job at one concurrency.

From `.github/workflows/benchmark-tmpl.yml` (its `env:` block and the launch step's
RESULT_FILENAME and GPU_COUNT), the inputs `run-sweep.yml` passes for single-node and agentic
rows (agentic: isl, osl and max-model-len '0'), and what the launchers export: RUNNER_NAME,
the `--export=ALL,K=V` (srun) and `-e K=V` (docker) values of the launcher that picked the
script (PORT=8888, AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache, ...), and the mount of
the checkout that benchmark_lib.sh defaults INFMAX_CONTAINER_WORKSPACE to. Values are the
container's paths (`/workspace`, `/tmp`, `/mnt/hf_hub_cache/`, `/aiperf_mmap_cache`); a run
maps them onto its folders (stage.Mounts).

Left out, on purpose:
- the secrets (HF_TOKEN, MODAL_TOKEN_ID, MODAL_TOKEN_SECRET): a local run inherits them from
  the caller's environment, and a plan never shows them;
- GITHUB_STEP_SUMMARY (the workflow empties it; nothing on this machine reads it) and
  RESULT_FILENAME_BASE (only the launch step reads it, to build RESULT_FILENAME);
- launcher exports whose value the launcher computes (`UCX_NET_DEVICES=$UCX_NET_DEVICES`,
  `-e HF_TOKEN` without a value: forwarded from the launcher's own environment) and the
  launchers' PORT (the run picks a free port; 8888 unless told otherwise).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from inferbench.launch.deployment import Deployment
from inferbench.launch.treescript.stage import (
    CONTAINER_TMP,
    CONTAINER_WORKSPACE,
    Mounts,
    run_mounts,
)

DEFAULT_PORT = 8888  # what the launchers export (benchmark_lib.sh falls back to it too)
RANDOM_RANGE_RATIO = "0.8"  # benchmark-tmpl.yml's env (the input default is the same)
AGENTIC_SCENARIO = "agentic-coding"
HF_HUB_CACHE = "/mnt/hf_hub_cache/"  # benchmark-tmpl.yml's env; launchers mount the host cache
# benchmark-tmpl.yml's env: SWE-bench scoring on Modal (GPU runners lack Docker), and the
# broken nodes its launchers' `salloc` leaves out
SWEBENCH_USE_MODAL = "true"
SALLOC_EXCLUDE = "b300-005,b300-006"
WORKFLOW_PYCACHE = "/tmp/inferencex-pycache"  # benchmark-tmpl.yml's PYTHONPYCACHEPREFIX
# variables whose value is a cache the launchers mount from the host (beside the checkout)
MOUNTED_CACHES = ("HF_HUB_CACHE", "AIPERF_DATASET_MMAP_CACHE_DIR")
# the caller's values, never container paths (a staged model is a path on this machine)
CALLER_VALUES = frozenset({"MODEL", "MODEL_PATH"})


def _bool(value: bool) -> str:
    return "true" if value else "false"


def exp_name(dep: Deployment, conc: int) -> str:
    """The job's exp-name at `conc`: agentic names carry the concurrency (`_conc4_`)."""
    name = dep.job.exp_name
    first = dep.job.concurrencies[0]
    return re.sub(rf"_conc{first}(?=_|$)", f"_conc{conc}", name) if dep.agentic else name


def result_filename(dep: Deployment, conc: int, runner_name: str) -> str:
    """benchmark-tmpl.yml's RESULT_FILENAME_BASE (no recipe fingerprint: a plain sweep)."""
    job = dep.job
    return (
        f"{exp_name(dep, conc)}_{dep.precision}_{dep.framework}_tp{dep.tp}-pp{dep.pp}"
        f"-dcp{job.dcp_size or 1}-pcp{job.pcp_size or 1}-ep{dep.ep}-dpa{_bool(dep.dp_attn)}"
        f"_disagg-{_bool(dep.disagg)}_spec-{dep.spec_decoding}_conc{conc}_{runner_name}"
    )


def script_env(
    dep: Deployment,
    conc: int,
    *,
    workspace: str = CONTAINER_WORKSPACE,
    runner_name: str,
    port: int = DEFAULT_PORT,
    run_eval: bool = False,
    eval_only: bool = False,
    launcher_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The variables benchmark-tmpl.yml and the launcher set for the script (container
    paths: `workspace` is where the launchers mount the checkout)."""
    job = dep.job
    agentic = dep.agentic
    backend = job.kv_offload_backend
    gpus = dep.tp * dep.pp * (job.pcp_size or 1)
    env = {
        "RANDOM_RANGE_RATIO": RANDOM_RANGE_RATIO,
        "HF_HUB_CACHE": HF_HUB_CACHE,
        "EXP_NAME": exp_name(dep, conc),
        "RECIPE_FINGERPRINT": job.recipe_fingerprint or "",
        "MODEL": dep.model,
        "MODEL_PREFIX": dep.model_prefix,
        "ISL": "0" if agentic else str(dep.isl),
        "OSL": "0" if agentic else str(dep.osl),
        "MAX_MODEL_LEN": "0" if agentic else str(dep.max_model_len or 0),
        "IMAGE": dep.image,
        "FRAMEWORK": dep.framework,
        "PRECISION": dep.precision,
        "TP": str(dep.tp),
        "PP_SIZE": str(dep.pp),
        "DCP_SIZE": str(job.dcp_size or 1),
        "PCP_SIZE": str(job.pcp_size or 1),
        "EP_SIZE": str(dep.ep),
        "DP_ATTENTION": _bool(dep.dp_attn),
        "CONC": str(conc),
        "SPEC_DECODING": dep.spec_decoding,
        "DISAGG": _bool(dep.disagg),
        "RUN_EVAL": _bool(run_eval),
        "EVAL_ONLY": _bool(eval_only),
        "SCENARIO_TYPE": AGENTIC_SCENARIO if agentic else "fixed-seq-len",
        "SCENARIO_SUBDIR": "agentic/" if agentic else "fixed_seq_len/",
        "IS_AGENTIC": "1" if agentic else "0",
        "KV_OFFLOADING": job.kv_offloading or "",
        "KV_OFFLOAD_BACKEND": backend.name if backend is not None else "",
        "KV_OFFLOAD_BACKEND_METADATA": _json(backend.model_dump(exclude_none=True))
        if backend is not None
        else "",
        "ROUTER_METADATA": _json(job.router.model_dump(exclude_none=True))
        if job.router is not None
        else "",
        "KV_P2P_TRANSFER": job.kv_p2p_transfer or "",
        "TOTAL_CPU_DRAM_GB": str(job.total_cpu_dram_gb or 0),
        "DURATION": str(job.duration or 3600),
        "REQUIRE_POWER": "0",
        "AIPERF_EXPERIMENTAL_FAST": "0",
        "EVAL_LIMIT": "",
        "SWEBENCH_GEN_MODE": "",
        "AIPERF_FAILED_REQUEST_THRESHOLD": "0.10",
        "RESULT_DIR": f"{workspace}/results",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPYCACHEPREFIX": WORKFLOW_PYCACHE,
        "SWEBENCH_USE_MODAL": SWEBENCH_USE_MODAL,
        "SALLOC_EXCLUDE": SALLOC_EXCLUDE,
        **(launcher_env or {}),
        "INFMAX_CONTAINER_WORKSPACE": workspace,
        "RUNNER_NAME": runner_name,
        "RUNNER_TYPE": dep.runner,
        "RESULT_FILENAME": result_filename(dep, conc, runner_name),
        "GPU_COUNT": str(gpus),
        "PORT": str(port),
        "GITHUB_WORKSPACE": workspace,
    }
    return env


def _json(data: object) -> str:
    """As run-sweep.yml passes an object input: GitHub's toJSON, indented by two spaces,
    keys in the master config's order (the models' field order)."""
    return json.dumps(data, indent=2, ensure_ascii=False)


def run_mounts_for(
    contract: Mapping[str, str], workspace: Path, tmp: Path, hf_cache: Path
) -> Mounts:
    """The mounts of one run of the script: the checkout at `workspace`, the container's
    /tmp at `tmp`, the HF cache at `hf_cache`, every other cache a launcher mounts in `tmp`."""
    others: list[tuple[str, Path]] = []
    for name in MOUNTED_CACHES:
        container = contract.get(name, "")
        if container.startswith("/") and not container.startswith(f"{CONTAINER_TMP}/"):
            local = hf_cache if name == "HF_HUB_CACHE" else tmp / name.lower()
            local.mkdir(parents=True, exist_ok=True)
            others.append((container, local))
    return run_mounts(workspace, tmp, tuple(others))


def local_env(contract: Mapping[str, str], mounts: Mounts) -> dict[str, str]:
    """The contract with its container paths as this run's folders; TMPDIR is the run's."""
    env = {k: v if k in CALLER_VALUES else mounts.map(v) for k, v in contract.items()}
    env["TMPDIR"] = mounts.tmp
    return env
