"""The `inferbench` entry point. Each command group lives in its own module with `register(app)`."""

from __future__ import annotations

import sys
from importlib import import_module

import typer
from rich.console import Console

from inferbench import __version__
from inferbench.errors import InferbenchError

# Command name -> the module that defines it; each module has `register(app: typer.Typer)`.
# Only the module of the command being run is imported, so `inferbench check` does not pay
# for SQLAlchemy, NumPy or aiohttp at start-up.
COMMANDS = {
    "check": "check",
    "sweep": "sweep",
    "clusters": "clusters",
    "bench": "bench",
    "replay": "replay",
    "traces": "traces",
    "eval": "eval",
    "sim": "sim",
    "run": "run",
    "plan": "run",
    "demo": "run",
    "results": "results",
    "report": "report",
}

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"inferbench {__version__}")
        raise typer.Exit()


def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    _state["debug"] = debug


def build_app(command: str | None = None) -> typer.Typer:
    """The root app with every command group, or only the one that defines `command`."""
    root = typer.Typer(
        name="inferbench",
        help="Continuous LLM-inference benchmarking: check, sweep, run, measure, store, plot.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    root.callback()(_root)
    wanted = COMMANDS.get(command or "")
    modules = [wanted] if wanted else list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        import_module(f"inferbench.cli.{name}").register(root)
    return root


def __getattr__(name: str) -> typer.Typer:
    # `from inferbench.cli.main import app` (tests, Typer's CliRunner) gets the full app.
    if name == "app":
        return build_app()
    raise AttributeError(name)


def _command_of(args: list[str]) -> str | None:
    """The first argument that is not a root option (none of them takes a value)."""
    return next((arg for arg in args if not arg.startswith("-")), None)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a user error prints one line and exits with its code (2 for bad input)."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # standalone_mode=False makes click return a typer.Exit's code instead of exiting.
        rc = build_app(_command_of(args))(args=args, standalone_mode=False, prog_name="inferbench")
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
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":
    main()
