"""Render a sweep: a JSON list of jobs, a GitHub Actions matrix split into chunks, or a table.

GitHub Actions rejects a matrix of more than 256 jobs, and InferenceX's workflows call one
reusable template per kind of job (`benchmark-tmpl.yml` for single-node rows,
`benchmark-multinode-tmpl.yml` for rows with `prefill`), reading each row as `matrix.config.*`.
The `github` shape keeps both habits:

    {
      "total": 1834,
      "chunk-size": 256,
      "single_node": {"1k1k": [{"config": [job, ...]}, ...], "8k1k": [...], "agentic": [...]},
      "multi_node":  {"8k1k": [{"config": [job, ...]}], "agentic": [...]},
      "evals": [...], "agentic_evals": [...], "multinode_evals": [...],
      "multinode_agentic_evals": [...]
    }

Each `{"config": [...]}` chunk holds at most 256 jobs of one kind and is itself a valid
`strategy.matrix` value: `matrix: ${{ fromJson(needs.sweep.outputs.m).single_node['8k1k'][0] }}`
gives `matrix.config.tp` and so on, as InferenceX's `run-sweep.yml` reads its buckets. To fan out
over however many chunks there are, iterate the chunk list in an outer matrix and hand each chunk
to a reusable workflow whose own matrix is `fromJson(inputs.chunk)`. Buckets are keyed by the
sequence-length name (`seq_len_name`) or `agentic`; empty buckets are left out.

Rows flagged `eval-only` (the separate eval rows of `--changed-since`, or an `--evals-only`
sweep) only run the eval and are not in those buckets: they are split as InferenceX's
changelog processing (`utils/process_changelog.py`) splits them for `run-sweep.yml`, which
dispatches each kind with its own inputs: `evals` (single-node fixed-seq-len),
`agentic_evals`, `multinode_evals`, `multinode_agentic_evals`, each a chunk list (`[]` when
empty, as the processing writes them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from inferbench.config.topology import topology_label
from inferbench.core.job import Job, JobWorkerBlock
from inferbench.core.seqlen import seq_len_name
from inferbench.engines.layout import WorkerLayout, worker_layout

GITHUB_MATRIX_LIMIT = 256


# What InferenceX's changelog processing writes into a row that has no such key: its output
# model (`ChangelogMatrixEntry` in utils/matrix_logic/validation.py) dumps every default it
# has, and `run-sweep.yml` / `benchmark-multinode-tmpl.yml` read them (`eval-only`,
# `eval-all-concs`, a worker's `additional-settings`). A sweep writes them as the generator
# does (absent); a `--changed-since` selection as the processing does.
_SINGLE_NODE_DEFAULTS: dict[str, Any] = {"eval-only": False}
_MULTINODE_DEFAULTS: dict[str, Any] = {"eval-only": False, "eval-all-concs": False}
_AGENTIC_DEFAULTS: dict[str, Any] = {"spec-decoding": "none"}
_WORKER_DEFAULTS: dict[str, Any] = {"pp": 1, "dcp-size": 1, "pcp-size": 1}


def changelog_row(job: Job) -> dict[str, Any]:
    """`job` as InferenceX's changelog processing writes its row: the generator's row with
    the processing's output-model defaults filled in."""
    row = job.to_wire()
    if job.is_agentic:
        defaults = _AGENTIC_DEFAULTS
    else:
        defaults = _MULTINODE_DEFAULTS if job.is_multinode else _SINGLE_NODE_DEFAULTS
    for key, value in defaults.items():
        row.setdefault(key, value)
    for name in ("prefill", "decode"):
        block = row.get(name)
        if isinstance(block, dict):
            for key, value in _WORKER_DEFAULTS.items():
                block.setdefault(key, value)
            block.setdefault("additional-settings", [])
    return row


def _row_writer(changelog: bool) -> Callable[[Job], dict[str, Any]]:
    return changelog_row if changelog else Job.to_wire


def jobs_to_json(jobs: Sequence[Job], *, changelog: bool = False) -> str:
    """The JSON list of jobs, InferenceX field names, one job per line-free object; with
    `changelog`, each row as the changelog processing writes it (`changelog_row`)."""
    write = _row_writer(changelog)
    return orjson.dumps([write(job) for job in jobs], option=orjson.OPT_INDENT_2).decode()


def chunked(items: Sequence[Any], size: int = GITHUB_MATRIX_LIMIT) -> list[list[Any]]:
    """`items` in order, split into lists of at most `size`."""
    if size <= 0:
        raise ValueError("chunk size must be positive")
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def _bucket(job: Job) -> tuple[str, str]:
    group = "multi_node" if job.is_multinode else "single_node"
    if job.is_agentic or job.isl is None or job.osl is None:
        return group, "agentic"
    return group, seq_len_name(job.isl, job.osl)


EVAL_BUCKETS = ("evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals")


def _eval_bucket(job: Job) -> str:
    """process_changelog's split: by `prefill` (multinode) and scenario."""
    return EVAL_BUCKETS[2 * job.is_multinode + (job.scenario == "agentic-coding")]


def github_matrix(
    jobs: Sequence[Job], chunk_size: int = GITHUB_MATRIX_LIMIT, *, changelog: bool = False
) -> dict[str, Any]:
    """The chunked GitHub Actions matrix object described in the module docstring (rows as
    the changelog processing writes them with `changelog`)."""
    write = _row_writer(changelog)
    buckets: dict[str, dict[str, list[dict[str, Any]]]] = {"single_node": {}, "multi_node": {}}
    evals: dict[str, list[dict[str, Any]]] = {name: [] for name in EVAL_BUCKETS}
    for job in jobs:
        if job.eval_only:
            evals[_eval_bucket(job)].append(write(job))
            continue
        group, name = _bucket(job)
        buckets[group].setdefault(name, []).append(write(job))
    out: dict[str, Any] = {"total": len(jobs), "chunk-size": chunk_size}
    for group, named in buckets.items():
        out[group] = {name: _chunks(rows, chunk_size) for name, rows in named.items()}
    for name, rows in evals.items():
        out[name] = _chunks(rows, chunk_size)
    return out


def _chunks(rows: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    return [{"config": chunk} for chunk in chunked(rows, size)]


def github_to_json(
    jobs: Sequence[Job], chunk_size: int = GITHUB_MATRIX_LIMIT, *, changelog: bool = False
) -> str:
    """Compact JSON (one line), as `$GITHUB_OUTPUT` wants it."""
    return orjson.dumps(github_matrix(jobs, chunk_size, changelog=changelog)).decode()


def _layout(block: JobWorkerBlock) -> WorkerLayout:
    return worker_layout(
        block.tp, block.ep, block.dp_attn, block.pp, block.pcp_size, block.dcp_size
    )


def topology(job: Job) -> str:
    """The job's topology label (`config.topology.topology_label`): `TP8`, `DEP8`,
    `2P1D DEP2/DEP8`, `2xTP8` for aggregated multinode workers."""
    if job.prefill is not None and job.decode is not None:
        if job.decode.num_worker == 0:  # aggregated: the workers are the prefill block
            return topology_label(_layout(job.prefill), decode_workers=job.prefill.num_worker)
        return topology_label(
            _layout(job.decode),
            prefill=_layout(job.prefill),
            prefill_workers=job.prefill.num_worker,
            decode_workers=job.decode.num_worker,
        )
    layout = worker_layout(
        job.tp or 1,
        job.ep or 1,
        bool(job.dp_attn),
        job.pp or 1,
        job.pcp_size or 1,
        job.dcp_size or 1,
    )
    return topology_label(layout)


# The table's columns, in order; a renderer may leave out the later-ranked ones when narrow.
JOB_COLUMNS = ("config-key", "runner", "seq", "topology", "spec", "conc", "eval", "fp")


def job_row(job: Job) -> tuple[str, ...]:
    """One job as the cells of `JOB_COLUMNS` (concurrencies `4, 8, 16`: a list may wrap)."""
    seq = "agentic" if job.is_agentic else seq_len_name(job.isl or 0, job.osl or 0)
    evals = "eval-only" if job.eval_only else ("yes" if job.run_eval else "")
    return (
        job.config_key,
        job.runner,
        seq,
        topology(job),
        "" if job.spec_decoding == "none" else job.spec_decoding,
        ", ".join(str(c) for c in job.concurrencies),
        evals,
        job.fingerprint_short,
    )
