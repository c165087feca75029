"""Eval artifacts laid out as InferenceX's collector reads them.

InferenceX's `utils/collect_eval_results.py` takes a folder of job artifacts
(`eval_results/<artifact>/`), each holding `meta_env.json` (the job's identity, written by
`benchmark_lib.sh`'s `_write_lm_eval_meta_json`) beside lm-eval's own `results_<time>.json`
files, flat; several eval concurrencies of one job are staged as `results_<time>_conc<C>.json`
with `eval_concs` / `completed_eval_concs` / `failed_eval_concs` in the meta file
(`_stage_lm_eval_artifacts`). lm-eval itself writes its files two folders down
(`<output_path>/<model>/results_<time>.json`); they are copied up here, unchanged.

`inferbench eval --result-dir D` makes D such an artifact; a run makes one per job under
`<run>/eval_results/<fingerprint>/`, so `collect_eval_results.py <run>/eval_results <name>`
reads a whole run.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import orjson

from inferbench.core.fsio import atomic_write_bytes
from inferbench.core.job import Job

META_FILE = "meta_env.json"
ARTIFACTS_DIR = "eval_results"  # a run's folder of per-job artifacts, as InferenceX's CI names it


def stage_lm_eval_files(raw_dir: Path, artifact: Path, conc: int | None = None) -> list[Path]:
    """Copy lm-eval's newest results file and its samples logs from `raw_dir` (any depth) into
    `artifact`, flat; with `conc`, named `<stem>_conc<C>` as InferenceX stages batched evals."""
    results = sorted(raw_dir.rglob("results_*.json"), key=lambda p: p.stat().st_mtime)
    if not results:
        return []
    newest = results[-1]
    stamp = newest.stem.removeprefix("results_")
    files = [newest, *sorted(newest.parent.glob(f"samples_*_{stamp}.jsonl"))]
    artifact.mkdir(parents=True, exist_ok=True)
    staged = []
    for source in files:
        stem = source.stem if conc is None else f"{source.stem}_conc{conc}"
        target = artifact / f"{stem}{source.suffix}"
        tmp = target.with_name(f".{target.name}.tmp")
        shutil.copyfile(source, tmp)
        tmp.replace(target)
        staged.append(target)
    return staged


def _bool(value: bool | None) -> bool:
    return bool(value)


def meta_env(
    job: Job | None,
    *,
    model: str,
    conc: int,
    eval_concs: Sequence[int] = (),
    completed: Sequence[int] = (),
    failed: Sequence[int] = (),
) -> dict[str, object]:
    """`meta_env.json` for an eval of `job` (None: an endpoint alone, identity unknown) in
    InferenceX's field names; a multinode job's roles come from its prefill/decode blocks."""
    out: dict[str, object] = {"is_multinode": False}
    if job is None:
        out.update(framework="unknown", precision="unknown", spec_decoding="", tp=1, ep=1)
        out.update(dp_attention=False, infmax_model_prefix="unknown", hw="unknown")
        out.update(isl="0", osl="0", recipe_fingerprint="")
    else:
        prefill, decode = job.prefill, job.decode
        tp = job.tp or (prefill.tp if prefill else 1)
        ep = job.ep or (prefill.ep if prefill else 1)
        dp = job.dp_attn if job.dp_attn is not None else bool(prefill and prefill.dp_attn)
        out.update(
            is_multinode=prefill is not None,
            framework=job.framework,
            precision=job.precision,
            spec_decoding=job.spec_decoding,
            recipe_fingerprint=job.recipe_fingerprint or "",
            tp=tp,
            pp=job.pp or 1,
            dcp_size=job.dcp_size or 1,
            pcp_size=job.pcp_size or 1,
            ep=ep,
            dp_attention=_bool(dp),
            infmax_model_prefix=job.model_prefix,
            hw=job.runner,
            isl=str(job.isl or 0),
            osl=str(job.osl or 0),
        )
        for role, block in (("prefill", prefill), ("decode", decode)):
            out.update(
                {
                    f"{role}_tp": block.tp if block else tp,
                    f"{role}_pp": block.pp if block else job.pp or 1,
                    f"{role}_dcp_size": block.dcp_size if block else job.dcp_size or 1,
                    f"{role}_pcp_size": block.pcp_size if block else job.pcp_size or 1,
                    f"{role}_ep": block.ep if block else ep,
                    f"{role}_dp_attention": block.dp_attn if block else _bool(dp),
                    f"{role}_num_workers": block.num_worker if block else 1,
                }
            )
    out["conc"] = conc
    if eval_concs:
        out.update(
            eval_concs=list(eval_concs),
            completed_eval_concs=list(completed),
            failed_eval_concs=list(failed),
        )
    out["model"] = model
    return out


def write_meta_env(artifact: Path, meta: dict[str, object]) -> Path:
    artifact.mkdir(parents=True, exist_ok=True)
    path = artifact / META_FILE
    atomic_write_bytes(path, orjson.dumps(meta, option=orjson.OPT_INDENT_2))
    return path
