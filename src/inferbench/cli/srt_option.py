"""`--srt-slurm`, declared once for `check`, `plan` and `run`."""

from __future__ import annotations

import typer

SRT_SLURM = typer.Option(
    None,
    "--srt-slurm",
    metavar="SOURCE",
    help="srt-slurm source (repeatable): a git clone or bundle (every ref it holds), or a "
    "copy PATH[@REF] (the ref it is; with no @REF it stands in for every ref only when given "
    "alone). Each job's recipe is read and judged at the ref its launcher clones.",
)
