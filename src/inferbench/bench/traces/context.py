"""The rule for requests longer than the model's context (prompt + output > max-model-len).

`trim` (default): in each conversation, the first request that does not fit ends that
conversation: it and every later step of the same stream are left out (its context only
grows, so nothing after it would fit either); a subagent stream is trimmed the same way on
its own. A trace whose root conversation keeps no request is dropped. What was left out is
counted in the trace set's notes and the result file.
`reject`: any request that does not fit is an error naming its trace and line (exit 2).
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from pathlib import Path

from inferbench.bench.traces.errors import trace_error
from inferbench.bench.traces.model import Fork, Stream, Trace, TraceSet, Turn
from inferbench.core.errors import InputError, Location


class ContextRule(StrEnum):
    TRIM = "trim"
    REJECT = "reject"


def _trim(stream: Stream, limit: int) -> tuple[Stream, int]:
    kept: list[Turn | Fork] = []
    cut = 0
    for i, step in enumerate(stream.steps):
        if isinstance(step, Turn):
            if step.input_len + step.output > limit:
                cut += sum(1 for later in stream.steps[i:] for _ in _turns(later))
                break
            kept.append(step)
            continue
        branches = []
        for branch in step.branches:
            trimmed, n = _trim(branch, limit)
            cut += n
            branches.append(trimmed)
        kept.append(replace(step, branches=tuple(branches)))
    return Stream(stream.name, tuple(kept)), cut


def _turns(step: Turn | Fork) -> list[Turn]:
    if isinstance(step, Turn):
        return [step]
    return [t for b in step.branches for _, t in b.turns()]


def apply_context_rule(
    traces: TraceSet, max_model_len: int | None, rule: ContextRule = ContextRule.TRIM
) -> TraceSet:
    if not max_model_len:
        return traces
    kept: list[Trace] = []
    cut_requests = dropped = 0
    for trace in traces.traces:
        if trace.longest <= max_model_len:
            kept.append(trace)
            continue
        if rule is ContextRule.REJECT:
            name, turn = next(
                (s, t) for s, t in trace.turns() if t.input_len + t.output > max_model_len
            )
            file, _, _ = trace.source.rpartition(":")
            raise trace_error(
                Path(file or trace.source),
                turn.line or None,
                f"{trace.id}.{name}",
                f"request of {turn.input_len} + {turn.output} tokens is longer than the"
                f" context ({max_model_len})",
                hint="raise max-model-len, or trim traces with --context-rule trim",
            )
        root, cut = _trim(trace.root, max_model_len)
        cut_requests += cut
        if any(isinstance(s, Turn) for s in root.steps):
            kept.append(replace(trace, root=root))
        else:
            dropped += 1
    if traces.traces and not kept:  # nothing left to replay: say so, not divide by zero
        raise InputError(
            f"no trace fits a context of {max_model_len} tokens: all {dropped} were dropped",
            location=Location(key="--max-model-len"),
            hint="raise --max-model-len to the server's context length",
        )
    notes = list(traces.notes)
    if cut_requests:
        notes.append(
            f"context {max_model_len}: trimmed {cut_requests} requests, dropped {dropped} traces"
        )
    return TraceSet(tuple(kept), traces.format, traces.source, tuple(notes))
