"""The `inferbench` entry point. Each command group lives in its own module with `register(app)`."""

from __future__ import annotations

import sys
from importlib import import_module

import typer
from rich.console import Console

from inferbench import __version__
from inferbench.errors import InferbenchError

# One module per command group; each defines `register(app: typer.Typer) -> None`.
COMMAND_MODULES = (
    "check",
    "sweep",
    "clusters",
    "bench",
    "sim",
    "run",
    "results",
    "report",
)

app = typer.Typer(
    name="inferbench",
    help="Continuous LLM-inference benchmarking: check, sweep, run, measure, store, plot.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"inferbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    _state["debug"] = debug


for _name in COMMAND_MODULES:
    import_module(f"inferbench.cli.{_name}").register(app)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a user error prints one line and exits with its code (2 for bad input)."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        app(args=argv, standalone_mode=False)
    except InferbenchError as exc:
        if _state["debug"]:
            raise
        err.print(f"[bold red]error:[/] {exc.render()}", markup=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(1)
    except Exception as exc:  # click usage errors arrive here in non-standalone mode
        from click.exceptions import ClickException

        if isinstance(exc, ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise


if __name__ == "__main__":
    main()
