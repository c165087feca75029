"""The sweep filter options `inferbench sweep`, `plan` and `run` share, and their translation
into the library's `SweepFilters`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from inferbench.core.concurrency import DEFAULT_STEP
from inferbench.core.errors import InputError, Location
from inferbench.core.job import Scenario
from inferbench.core.seqlen import parse_seq_len
from inferbench.matrix.filters import EvalMode, NodeType, SweepFilters


def split_values(values: list[str] | None) -> tuple[str, ...]:
    """Repeated options and comma-separated values, in order, blanks dropped."""
    out: list[str] = []
    for value in values or []:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return tuple(out)


def _seq_lens(values: list[str] | None) -> tuple[tuple[int, int], ...]:
    pairs = []
    for name in split_values(values):
        try:
            pairs.append(parse_seq_len(name))
        except ValueError as exc:
            raise InputError(f"--seq-lens: {exc}", hint="use names like 1k1k,8k1k") from None
    return tuple(pairs)


def _concs(values: list[str] | None) -> tuple[int, ...]:
    out: list[int] = []
    for text in split_values(values):
        # srt-slurm's 4x8x16, as `bench` and `sim` take it
        parts = text.split("x") if re.fullmatch(r"\d+(x\d+)+", text) else [text]
        try:
            out.extend(int(part) for part in parts)
        except ValueError:
            raise InputError(
                f"--concurrency: {text!r} is not an integer",
                hint="e.g. --concurrency 4,8 or --concurrency 4 --concurrency 8",
            ) from None
    return tuple(out)


_SCENARIOS: tuple[Scenario, ...] = ("fixed-seq-len", "agentic-coding")


def _scenarios(values: list[str] | None) -> tuple[Scenario, ...]:
    chosen: list[Scenario] = []
    for name in split_values(values):
        match = [s for s in _SCENARIOS if s == name]
        if not match:
            raise InputError(
                f"--scenario-type {name!r} is not one of {', '.join(_SCENARIOS)}",
                hint=f"use {' or '.join(_SCENARIOS)}",
            )
        chosen.append(match[0])
    return tuple(chosen)


def eval_mode(no_evals: bool, evals_only: bool, all_evals: bool) -> EvalMode:
    """`--no-evals` / `--evals-only` / `--all-evals`, as InferenceX's generator takes them."""
    if no_evals and (evals_only or all_evals):
        raise InputError("--no-evals cannot be combined with --evals-only or --all-evals")
    if all_evals:
        return EvalMode.ALL
    if evals_only:
        return EvalMode.ONLY
    return EvalMode.NONE if no_evals else EvalMode.DEFAULT


def _node_type(single_node: bool, multi_node: bool) -> NodeType:
    if single_node and multi_node:
        # InferenceX reads both as neither (every job): a reader of the command line would
        # expect an intersection (nothing), so the two together are refused
        raise InputError(
            "--single-node and --multi-node together select every job, as neither does",
            location=Location(key="--single-node"),
            hint="pass one of them, or neither for every job",
        )
    if not single_node and not multi_node:
        return "all"
    return "single-node" if single_node else "multi-node"


@dataclass(frozen=True)
class FilterOptions:
    """Which jobs of the tree to take, as the command line gives them (see `SweepFilters`)."""

    config_keys: Annotated[
        list[str] | None,
        typer.Option("--config-keys", help="Config keys or globs (* ?); repeat or comma-separate."),
    ] = None
    model_prefix: Annotated[
        list[str] | None, typer.Option("--model-prefix", help="Config-key prefix.")
    ] = None
    precision: Annotated[list[str] | None, typer.Option("--precision", help="e.g. fp4, fp8.")] = (
        None
    )
    framework: Annotated[
        list[str] | None, typer.Option("--framework", help="e.g. vllm, sglang, trt.")
    ] = None
    runner_type: Annotated[
        list[str] | None, typer.Option("--runner-type", help="Runner label, e.g. h200.")
    ] = None
    seq_lens: Annotated[list[str] | None, typer.Option("--seq-lens", help="e.g. 1k1k,8k1k.")] = None
    min_conc: Annotated[
        int | None, typer.Option("--min-concurrency", help="Lowest concurrency to keep.")
    ] = None
    max_conc: Annotated[
        int | None, typer.Option("--max-concurrency", help="Highest concurrency to keep.")
    ] = None
    max_tp: Annotated[
        int | None, typer.Option("--max-tp", help="Drop single-node entries above this tp.")
    ] = None
    max_ep: Annotated[
        int | None, typer.Option("--max-ep", help="Cap single-node ep at this value.")
    ] = None
    conc: Annotated[
        list[str] | None,
        typer.Option(
            "--concurrency",
            help="Only these concurrencies, 4,8 or 4x8 (each must exist in an entry).",
        ),
    ] = None
    runner_node_filter: Annotated[
        str | None,
        typer.Option(
            "--runner-node-filter", help="One job per runner machine whose name contains this."
        ),
    ] = None
    runner_config: Annotated[
        Path | None,
        typer.Option("--runner-config", help="Another runners.yaml (labels and hardware)."),
    ] = None
    single_node: Annotated[bool, typer.Option("--single-node", help="Single-node jobs only.")] = (
        False
    )
    multi_node: Annotated[bool, typer.Option("--multi-node", help="Multinode jobs only.")] = False
    step_size: Annotated[
        int,
        typer.Option("--step-size", help="Growth factor of concurrency ranges."),
    ] = DEFAULT_STEP
    scenario_type: Annotated[
        list[str] | None,
        typer.Option("--scenario-type", help="fixed-seq-len and/or agentic-coding."),
    ] = None

    def sweep_filters(self, *, evals: EvalMode = EvalMode.DEFAULT) -> SweepFilters:
        """The library's filters; bad values raise InputError (exit 2)."""
        return SweepFilters(
            config_keys=split_values(self.config_keys),
            model_prefixes=split_values(self.model_prefix),
            precisions=split_values(self.precision),
            frameworks=split_values(self.framework),
            runner_types=split_values(self.runner_type),
            seq_lens=_seq_lens(self.seq_lens),
            min_conc=self.min_conc,
            max_conc=self.max_conc,
            max_tp=self.max_tp,
            max_ep=self.max_ep,
            conc=_concs(self.conc),
            runner_node_filter=self.runner_node_filter,
            runner_config=str(self.runner_config) if self.runner_config is not None else None,
            node_type=_node_type(self.single_node, self.multi_node),
            scenario_types=_scenarios(self.scenario_type),
            evals=evals,
            step=self.step_size,
        )
