"""Which jobs also run an accuracy eval (`run-eval`), following InferenceX's policy.

Default (`EvalMode.DEFAULT`), on fixed-seq-len 8k1k jobs only, concurrencies below 16 ignored:
- single-node: group by (model, runner, framework, precision, isl, osl, spec-decoding, dp-attn);
  mark every job at the group's highest concurrency and at its median concurrency, the median
  being the upper middle of the sorted distinct concurrencies (`values[len // 2]`, as InferenceX
  picks it: 16, 32, 64, 128 -> 64);
- multinode: per topology (jobs with one fingerprint), mark the job holding the highest eligible
  concurrency and set `eval-conc` to it.
`EvalMode.ONLY` (--evals-only) also marks agentic jobs (single-node: the highest concurrency per
(model, runner, framework, precision); multinode: as fixed-seq-len multinode) and keeps only the
marked jobs, flagged `eval-only`. `EvalMode.ALL` (--all-evals) marks every 8k1k fixed-seq-len and
every agentic job, merging each multinode topology's concurrencies into one eval job
(`eval-all-concs`, or `eval-conc` = the highest for agentic), and keeps only eval jobs.
`EvalMode.NONE` (--no-evals) marks nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence

from inferbench.core.job import Job
from inferbench.matrix.filters import EvalMode

EVAL_SEQ_LEN = (8192, 1024)
MIN_EVAL_CONC = 16


def apply_eval_mode(jobs: Sequence[Job], mode: EvalMode) -> list[Job]:
    """The jobs with `run-eval` (and, for ONLY/ALL, `eval-only`) set per `mode`."""
    if mode is EvalMode.NONE:
        return list(jobs)
    marked = mark_default(jobs, include_agentic=mode in (EvalMode.ONLY, EvalMode.ALL))
    if mode is EvalMode.ALL:
        marked = mark_all(marked)
    if mode is EvalMode.DEFAULT:
        return marked
    return [job.evolve(eval_only=True) for job in marked if job.run_eval]


def _is_eval_seq(job: Job) -> bool:
    return not job.is_agentic and (job.isl, job.osl) == EVAL_SEQ_LEN


def _eligible(job: Job) -> list[int]:
    return sorted(c for c in job.concurrencies if c >= MIN_EVAL_CONC)


def _single_node_picks(jobs: Sequence[Job]) -> set[int]:
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for i, job in enumerate(jobs):
        if job.is_multinode or not _is_eval_seq(job) or not _eligible(job):
            continue
        key = (job.model, job.runner, job.framework, job.precision, job.isl, job.osl)
        groups[(*key, job.spec_decoding, job.dp_attn)].append(i)
    picks: set[int] = set()
    for members in groups.values():
        values = sorted({jobs[i].concurrencies[0] for i in members})
        targets = {values[-1], values[len(values) // 2]}
        picks.update(i for i in members if jobs[i].concurrencies[0] in targets)
    return picks


def _topology_picks(jobs: Sequence[Job], agentic: bool) -> dict[int, int]:
    """Multinode: per fingerprint, the job index holding the highest eligible conc -> that conc."""
    best: dict[str, tuple[int, int]] = {}
    for i, job in enumerate(jobs):
        if not job.is_multinode or job.is_agentic != agentic:
            continue
        if not agentic and not _is_eval_seq(job):
            continue
        eligible = _eligible(job)
        if not eligible:
            continue
        current = best.get(job.fingerprint)
        if current is None or eligible[-1] > current[1]:
            best[job.fingerprint] = (i, eligible[-1])
    return dict(best.values())


def _agentic_single_node_picks(jobs: Sequence[Job]) -> set[int]:
    best: dict[Hashable, tuple[int, int]] = {}
    for i, job in enumerate(jobs):
        if job.is_multinode or not job.is_agentic:
            continue
        key = (job.model, job.runner, job.framework, job.precision)
        conc = max(job.concurrencies)
        if key not in best or conc > best[key][1]:
            best[key] = (i, conc)
    return {i for i, _ in best.values()}


def mark_default(jobs: Sequence[Job], *, include_agentic: bool = False) -> list[Job]:
    """InferenceX's default eval selection; every other job gets `run-eval: false`."""
    picks = _single_node_picks(jobs)
    eval_conc = _topology_picks(jobs, agentic=False)
    if include_agentic:
        picks |= _agentic_single_node_picks(jobs)
        eval_conc.update(_topology_picks(jobs, agentic=True))
    out: list[Job] = []
    for i, job in enumerate(jobs):
        if i in eval_conc:
            out.append(job.evolve(run_eval=True, eval_conc=eval_conc[i]))
        elif i in picks:
            out.append(job.evolve(run_eval=True))
        elif job.run_eval or job.run_eval is None:
            out.append(job.evolve(run_eval=False, eval_conc=None))
        else:
            out.append(job)
    return out


def mark_all(jobs: Sequence[Job]) -> list[Job]:
    """--all-evals: every 8k1k and agentic job is an eval; multinode topologies merge their
    concurrencies into one eval job (run in sequence on one deployment)."""
    out: list[Job] = []
    merged: dict[str, int] = {}  # fingerprint -> index in `out`
    for job in jobs:
        if not job.is_agentic and not _is_eval_seq(job):
            out.append(job)
            continue
        if not job.is_multinode:
            out.append(job.evolve(run_eval=True))
            continue
        at = merged.get(job.fingerprint)
        concs = set(job.concurrencies)
        if at is not None:
            concs |= set(out[at].concurrencies)
        marks: dict[str, object] = {"conc": tuple(sorted(concs)), "run_eval": True}
        if job.is_agentic:
            marks.update(eval_conc=max(concs), eval_all_concs=None)
        else:
            marks.update(eval_conc=None, eval_all_concs=True)
        if at is None:
            merged[job.fingerprint] = len(out)
            out.append(job.evolve(**marks))
        else:
            out[at] = out[at].evolve(**marks)
    return out
