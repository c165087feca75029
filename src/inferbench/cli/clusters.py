"""`inferbench clusters`: the cluster catalog (`clusters/<name>.yaml`)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from inferbench.checks.render import display_path
from inferbench.cli.outputs import output_folder
from inferbench.config.cluster_import import (
    WriteStatus,
    import_cluster,
    select_tables,
    write_cluster_file,
)
from inferbench.config.launcher import read_launchers
from inferbench.config.master import load_masters
from inferbench.config.project import read_layout
from inferbench.config.runners import load_runners
from inferbench.core.errors import ConfigError, InputError

clusters_app = typer.Typer(
    name="clusters",
    help="The cluster catalog: import it from bash launchers.",
    no_args_is_help=True,
)


def _glob(root: Path, patterns: tuple[str, ...]) -> list[Path]:
    return sorted({p for pattern in patterns for p in root.glob(pattern) if p.is_file()})


@clusters_app.command("import")
def import_command(
    root: Path = typer.Option(Path("."), "--root", help="Benchmark tree root."),
    cluster: list[str] = typer.Option(
        [], "--cluster", help="Only this cluster (repeatable); default: every launcher."
    ),
    output: Path | None = typer.Option(
        None,
        "--output-dir",
        parser=output_folder("--output-dir"),
        help="Folder for the cluster files (default: the tree's clusters/).",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite a different existing file."),
) -> None:
    """Write clusters/<name>.yaml from runners/launch_<name>.sh model routing."""
    out = Console(highlight=False, soft_wrap=True, markup=False)
    err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)
    layout, _ = read_layout(root)
    launchers = _glob(root, layout.launchers)
    if not launchers:
        asked = f"--cluster {cluster[0]!r}: " if cluster else ""
        raise InputError(
            f"{asked}no launchers found under {root} ({', '.join(layout.launchers)})",
            hint="pass --root at a benchmark tree with runners/launch_<cluster>.sh "
            "(an InferenceX checkout)",
        )
    tables = select_tables(read_launchers(launchers), cluster)
    runners_path = root / layout.runners
    runners = load_runners(runners_path) if runners_path.is_file() else None
    masters = load_masters(_glob(root, layout.masters))
    target_dir = output if output is not None else root / "clusters"
    refused = 0
    for table in tables:
        shown = display_path(table.path, root)
        try:
            result = import_cluster(table, runners=runners, masters=masters)
        except ConfigError as exc:  # this launcher cannot be turned into a file; go on
            err.print(f"{shown}: warning: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
            continue
        path = target_dir / f"{table.cluster}.yaml"
        status = write_cluster_file(path, result.text, force=force)
        rows = len(result.cluster.models)
        out.print(f"{path}: {status.value} ({rows} model route{'s' if rows != 1 else ''})")
        for note in result.notes:
            out.print(f"  note: {note}")
        for branch in result.unreadable:
            err.print(
                f"{shown}:{branch.line}: warning: unreadable branch, skipped: {branch.reason}"
            )
        if status is WriteStatus.REFUSED:
            refused += 1
            err.print(f"  {path} exists and differs; not overwritten (use --force)")
    if refused:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add `inferbench clusters ...` to the root app."""
    app.add_typer(clusters_app, name="clusters")
