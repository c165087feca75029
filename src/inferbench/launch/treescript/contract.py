"""The environment a benchmark script gets in InferenceX, for one job at one concurrency.

From `.github/workflows/benchmark-tmpl.yml` (its `env:` block and the launch step's
RESULT_FILENAME and GPU_COUNT), the inputs `run-sweep.yml` passes for single-node and agentic
rows (agentic: isl, osl and max-model-len '0'), and what the launchers export (PORT=8888,
RUNNER_NAME). Secrets (HF_TOKEN, ...) are not part of it: a local run inherits them from the
caller's environment. `/workspace` (the launchers' mount of the checkout) is the staged
workspace folder.
"""

from __future__ import annotations

import json
import re

from inferbench.launch.deployment import Deployment

DEFAULT_PORT = 8888  # what the launchers export (benchmark_lib.sh falls back to it too)
RANDOM_RANGE_RATIO = "0.8"  # benchmark-tmpl.yml's env (the input default is the same)
AGENTIC_SCENARIO = "agentic-coding"


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
    workspace: str,
    runner_name: str,
    port: int = DEFAULT_PORT,
    run_eval: bool = False,
    eval_only: bool = False,
) -> dict[str, str]:
    """The variables benchmark-tmpl.yml and the launcher set for the script."""
    job = dep.job
    agentic = dep.agentic
    backend = job.kv_offload_backend
    gpus = dep.tp * dep.pp * (job.pcp_size or 1)
    env = {
        "RANDOM_RANGE_RATIO": RANDOM_RANGE_RATIO,
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
        "ROUTER_METADATA": _json(job.router.model_dump()) if job.router is not None else "",
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
        "PYTHONPYCACHEPREFIX": f"{workspace}/.pycache",  # the workflow: /tmp/inferencex-pycache
        "RUNNER_NAME": runner_name,
        "RUNNER_TYPE": dep.runner,
        "RESULT_FILENAME": result_filename(dep, conc, runner_name),
        "GPU_COUNT": str(gpus),
        "PORT": str(port),
        "GITHUB_WORKSPACE": workspace,
    }
    return env


def _json(data: object) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))
