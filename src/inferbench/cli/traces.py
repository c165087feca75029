"""`inferbench traces`: generate, read and check agentic traces (parse, call, render)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from inferbench.bench.traces.context import ContextRule
from inferbench.bench.traces.source import open_traces, parse_synth
from inferbench.bench.traces.synth import synth_jsonl
from inferbench.cli.outputs import output_file
from inferbench.core.errors import InputError
from inferbench.core.fsio import write_output
from inferbench.core.limits import MAX_SESSIONS, MAX_TOKENS

traces_app = typer.Typer(help="Agentic traces: synth, show.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(traces_app, name="traces")


@traces_app.command("synth")
def synth(
    output: Path = typer.Option(
        ..., "--output", "-o", parser=output_file("--output"), help="JSONL file to write"
    ),
    spec: str = typer.Option(
        "",
        "--spec",
        help="k=v,...: sessions, seed, turns, first_input, input, output, sigma,"
        " delay, max_context, subagent_p, subagent_max, subagent_turns, shared_prefix",
    ),
    sessions: int | None = typer.Option(
        None,
        "--sessions",
        max=MAX_SESSIONS,
        help=f"shortcut for sessions= (at most {MAX_SESSIONS:,})",
    ),
    seed: int | None = typer.Option(None, "--seed", help="shortcut for seed="),
) -> None:
    """Write seeded synthetic sessions in inferbench's JSONL trace format."""
    parts = [spec] + [
        f"{k}={v}" for k, v in (("sessions", sessions), ("seed", seed)) if v is not None
    ]
    parsed = parse_synth(",".join(p for p in parts if p))
    write_output(output, synth_jsonl(parsed), "--output")
    Console(stderr=True).print(
        f"wrote {output} ({parsed.sessions} sessions, seed {parsed.seed})", markup=False
    )


@traces_app.command("show")
def show(
    path: Path | None = typer.Argument(
        None, help="File or folder of traces (the same as --trace).", show_default=False
    ),
    trace: Path | None = typer.Option(None, "--trace", help="file or folder of traces"),
    dataset: str | None = typer.Option(None, "--dataset", help="ORG/NAME in the local HF cache"),
    hf_cache: Path | None = typer.Option(None, "--hf-cache", help="hub cache root"),
    synth: str | None = typer.Option(None, "--synth", help="k=v,... (see traces synth)"),
    max_model_len: int | None = typer.Option(
        None,
        "--max-model-len",
        max=MAX_TOKENS,
        help="context length: a request over it follows --context-rule",
    ),
    context_rule: ContextRule = typer.Option(
        ContextRule.TRIM,
        "--context-rule",
        help="over --max-model-len: trim (end that conversation) or reject (exit 2)",
    ),
) -> None:
    """Read traces (checking every line) and print what they hold."""
    if path is not None and trace is not None and path != trace:
        raise InputError(f"two traces given: {path} and --trace {trace}", hint="give the file once")
    traces = open_traces(
        trace=path or trace,
        dataset=dataset,
        cache=hf_cache,
        synth=synth,
        max_model_len=max_model_len,
        rule=context_rule,
    )
    table = Table(title=f"traces: {traces.source}"[:120], show_header=False)
    for key, value in traces.summary().items():
        table.add_row(key, f"{value:.1f}" if isinstance(value, float) else str(value))
    console = Console()
    console.print(table)
    for note in traces.notes:
        console.print(f"[yellow]{escape(str(note))}[/]")
