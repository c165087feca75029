"""Synthetic acceptance pinned to InferenceX's golden acceptance length (IB310).

Under the AgentX guidelines (golden_al_distribution/README.md) a run that simulates
speculative-decoding acceptance may pick any draft length, but must use the committed AL of
its model, thinking mode and draft length, written in its engine's spelling; TensorRT-LLM's
knob counts accepted draft tokens only, so it takes the AL minus 1. A model with no golden
file yet is a warning: InferenceX asks the sign-off to name where the value comes from.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferbench.checks.acceptance import (
    ENGINE_NAMES,
    MASTER,
    SGLANG,
    TRTLLM,
    VLLM,
    AcceptanceSetting,
    Knob,
)
from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.config.golden_al import GoldenCurve

_READS = {"vllm": VLLM, "sglang": SGLANG, "trtllm": TRTLLM}
_COLLECT = (
    "collect the curve with InferenceX's speedbench-al.yml workflow and commit it under "
    "golden_al_distribution/, or turn synthetic acceptance off until it exists"
)


@rule(
    "IB310",
    "golden-acceptance-length",
    Severity.ERROR,
    AcceptanceSetting,
    "synthetic acceptance is the golden AL of the model, thinking mode and draft length, in "
    "the engine's spelling (TensorRT-LLM: AL minus 1)",
    hint="set the golden AL of golden_al_distribution/ for the model, thinking mode and draft "
    "length, in the engine's own knob (TensorRT-LLM: AL minus 1)",
)
def golden_acceptance_length(s: AcceptanceSetting) -> Iterator[Problem]:
    where, knob = s.location, s.knob
    if s.model_prefix is None:
        return
    folder = s.golden.folder
    if not s.golden.for_prefix(s.model_prefix):
        yield Problem(
            f"{knob.name} pins {s.owner} to {s.written or '(nothing)'}, but {folder}/ has no "
            f"golden AL file for model prefix {s.model_prefix!r}: expected a committed curve",
            where,
            hint=_COLLECT,
            severity=Severity.WARNING,
        )
        return
    curves = s.golden.select(s.model_prefix, s.speculative)
    if not curves:
        names = ", ".join(c.file.name for c in s.golden.for_prefix(s.model_prefix))
        yield Problem(
            f"no golden curve in {folder}/ is for the speculative method of {s.owner} "
            f"(model prefix {s.model_prefix!r} has {names})",
            where,
            hint=_COLLECT,
            severity=Severity.WARNING,
        )
        return
    if s.draft_length is None:
        yield Problem(
            f"{knob.name} is set for {s.owner}, but its draft length cannot be read, so its "
            f"golden AL cannot be looked up",
            where,
            hint="write the draft length as a number (num_speculative_tokens, "
            "speculative-num-steps, max_draft_len), or NUM_SPEC_TOKENS=<n> in the entry",
            severity=Severity.WARNING,
        )
        return
    k, mode = s.draft_length, s.thinking
    golden = [(c, al) for c in curves if (al := c.al(mode, k)) is not None]
    if not golden:
        yield _no_golden_point(s, curves)
        return
    speller = _READS.get(s.engine or "")
    if speller is not None and knob is not speller and knob is not MASTER:
        curve, al = golden[0]
        yield Problem(
            f"{ENGINE_NAMES[s.engine or '']} does not read {knob.name} ({s.owner}): the run "
            f"decodes with real acceptance; expected {speller.name} = {speller.show(al, k)} "
            f"(golden AL {al:.2f}, {mode}, draft length {k}, {curve.where(mode, k)})",
            where,
            hint=f"write {speller.name} (= {speller.show(al, k)}) instead of {knob.name}"
            + _off_by_one(speller),
        )
        return
    value = s.value
    if knob is MASTER and not s.written:
        curve, al = golden[0]
        yield Problem(
            f"SYNTHETIC_ACCEPTANCE=true without SYNTHETIC_ACCEPTANCE_LENGTH ({s.owner}): "
            f"expected {al:.2f}, the golden AL ({mode}, draft length {k}, "
            f"{curve.where(mode, k)})",
            where,
            hint=f'add - "SYNTHETIC_ACCEPTANCE_LENGTH={al:.2f}"',
        )
        return
    if value is None:
        yield Problem(
            f"{knob.name} is {s.written!r}, not a number ({s.owner})",
            where,
            hint=s.fix(knob.show(golden[0][1], k)) + _off_by_one(knob),
        )
        return
    if any(knob.matches(value, al, k) for _, al in golden):
        return
    expected = " or ".join(
        f"{knob.show(al, k)} (golden AL {al:.2f}, {c.where(mode, k)})" for c, al in golden
    )
    yield Problem(
        f"{knob.name} is {s.written}{_as_al(knob, value, k)} for {s.owner}; {s.model_prefix} "
        f"{mode} with draft length {k}: expected {expected}",
        where,
        hint=" or ".join(dict.fromkeys(s.fix(knob.show(al, k)) for _, al in golden))
        + _off_by_one(knob),
    )


def _no_golden_point(s: AcceptanceSetting, curves: tuple[GoldenCurve, ...]) -> Problem:
    k, mode = s.draft_length or 0, s.thinking
    with_mode = [c for c in curves if mode in c.lengths]
    if not with_mode:
        names = ", ".join(c.file.name for c in curves)
        message = f"{names} has no {mode} curve ({s.owner} runs {mode})"
        hint = _COLLECT.replace("the curve", f"the {mode} curve")
    else:
        lengths = sorted(with_mode[0].lengths[mode])
        message = (
            f"{with_mode[0].file.name} has no {mode} AL for draft length {k} ({s.owner}); it "
            f"has {lengths[0]}..{lengths[-1]}"
        )
        hint = f"use a draft length the curve has ({lengths[0]}..{lengths[-1]}), or {_COLLECT}"
    return Problem(f"{s.knob.name}: {message}", s.location, hint=hint, severity=Severity.WARNING)


def _as_al(knob: Knob, value: float, k: int) -> str:
    if knob.per_draft:
        return f" (AL {1 + value * k:.2f} at draft length {k})"
    if knob.offset:
        return f" (AL {value - knob.offset:.2f})"
    return ""


def _off_by_one(knob: Knob) -> str:
    if knob.offset:
        return " (TensorRT-LLM counts accepted draft tokens only: the golden AL minus 1)"
    if knob.per_draft:
        return " ((AL - 1) / draft length)"
    return ""
