"""Assemble a Record from identity, provenance and a bench file, deriving its metrics."""

from __future__ import annotations

from pydantic import ValidationError

from inferbench.core.errors import InputError, Location
from inferbench.results.benchfile import REPLACE_HINT, BenchFile
from inferbench.results.derived import energy_per_token, per_gpu_throughput
from inferbench.results.record import Derived, Energy, Identity, Metrics, Provenance, Record
from inferbench.results.validity import judge_point


def derive(identity: Identity, metrics: Metrics, bench: BenchFile | None = None) -> Derived:
    """Every derived metric of a point, each from its one definition."""
    input_tps = metrics.total_input_tokens / metrics.duration_s
    tput = per_gpu_throughput(
        identity,
        total_tps=metrics.total_token_throughput,
        output_tps=metrics.output_throughput,
        input_tps=input_tps,
    )
    attempted = metrics.completed + metrics.failed
    energy: Energy | None = None
    if bench is not None and not bench.power and bench.power_note:
        energy = Energy(
            joules=None,
            joules_per_output_token=None,
            joules_per_total_token=None,
            gpus=0,
            samples=0,
            valid=False,
            reasons=(bench.power_note,),
        )
    if bench is not None and bench.power:
        if bench.window is None:
            energy = Energy(
                joules=None,
                joules_per_output_token=None,
                joules_per_total_token=None,
                gpus=len({s.gpu for s in bench.power}),
                samples=len(bench.power),
                valid=False,
                reasons=("result has no benchmark window (start/end times)",),
            )
        else:
            energy = energy_per_token(
                bench.power,
                window=bench.window,
                output_tokens=metrics.total_output_tokens,
                total_tokens=metrics.total_input_tokens + metrics.total_output_tokens,
            )
    return Derived(
        total_tput_per_gpu=tput.total_per_gpu,
        output_tput_per_gpu=tput.output_per_gpu,
        input_tput_per_gpu=tput.input_per_gpu,
        output_tput_per_decode_gpu=tput.output_per_decode_gpu,
        input_tput_per_prefill_gpu=tput.input_per_prefill_gpu,
        interactivity=bench.interactivity if bench is not None else None,
        failure_rate=metrics.failed / attempted if attempted else 0.0,
        energy=energy,
    )


def build_record(identity: Identity, provenance: Provenance, bench: BenchFile) -> Record:
    block = bench.point.inferbench if bench.point is not None else None
    if block is not None:  # the client knows what it asked: fixed lengths, no EOS stop
        fixed = block.workload.kind in ("random", "shared_prefix") and block.request.ignore_eos
        lengths = block.lengths
    else:  # plain sa-bench: random prompts with --ignore-eos, as InferenceX runs it
        fixed, lengths = identity.dataset == "random", None
    try:
        return Record(
            identity=identity,
            provenance=provenance,
            metrics=bench.metrics,
            derived=derive(identity, bench.metrics, bench),
            agentic=block.agentic if block is not None else None,
            validity=judge_point(
                identity,
                bench.metrics,
                lengths=lengths,
                fixed_lengths=fixed and (block is None or block.agentic is None),
            ),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise InputError(
            f"invalid record: {key}: {first['msg']}",
            location=Location(bench.path),
            hint=REPLACE_HINT,
        ) from None
