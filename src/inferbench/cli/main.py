"""The `inferbench` entry point. Each command group lives in its own module with `register(app)`."""

from __future__ import annotations

import functools
import signal
import sys
from importlib import import_module
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from inferbench import __version__
from inferbench.cli.vocabulary import VocabularyGroup
from inferbench.core.errors import InferbenchError
from inferbench.core.lifetime import (
    EXIT_TERMINATED,
    Terminated,
    exit_promptly,
    sigterm_as_interrupt,
    terminated,
)

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
    "capacity": "capacity",
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
        cls=VocabularyGroup,  # old option spellings still work, with a note
        help="Continuous LLM-inference benchmarking: check, sweep, run, measure, store, plot.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    root.callback()(_root)
    wanted = COMMANDS.get(command or "")
    modules = [wanted] if wanted else list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        import_module(f"inferbench.cli.{name}").register(root)
    return root


@functools.cache
def _command(module: str | None) -> Any:
    """The click command of `build_app` for a command's module, built once per process: the
    conversion reads every command's signature (tens of ms), and tests call main() often."""
    return typer.main.get_command(build_app(module))


def __getattr__(name: str) -> typer.Typer:
    # `from inferbench.cli.main import app` (tests, Typer's CliRunner) gets the full app.
    if name == "app":
        return build_app()
    raise AttributeError(name)


def _command_of(args: list[str]) -> str | None:
    """The first argument that is not a root option (none of them takes a value)."""
    return next((arg for arg in args if not arg.startswith("-")), None)


def _usage_error_types() -> tuple[type[Exception], ...]:
    """The exception classes of a usage error: typer raises its vendored click's
    (`typer._click`, a `TyperException`), libraries built on click raise click's own."""
    from click.exceptions import ClickException

    vendored = getattr(typer, "TyperException", None)
    return (ClickException,) + ((vendored,) if isinstance(vendored, type) else ())


def _show_usage_error(exc: Exception) -> int:
    show = getattr(exc, "show", None)
    if callable(show):
        show()
    else:
        Console(stderr=True, highlight=False).print(f"Error: {exc}", markup=False)
    code = getattr(exc, "exit_code", 2)
    return code if isinstance(code, int) else 2


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a user error prints one line and exits with its code (2 for bad input).

    Nothing shows a traceback unless `--debug` is given: usage errors print click's usage
    message and exit 2, an InferbenchError prints where and how to fix it and exits with its
    code, and anything else (a bug) prints one line naming it and exits 70 (EX_SOFTWARE).
    """
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args[: args.index("--")] if "--" in args else "--debug" in args
    sigterm_as_interrupt()  # CI timeouts and Slurm send SIGTERM: clean up as on Ctrl-C
    if hasattr(signal, "SIGXFSZ"):  # past `ulimit -f` a write fails (EFBIG), not the process
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        # standalone_mode=False makes click return a typer.Exit's code instead of exiting.
        wanted = COMMANDS.get(_command_of(args) or "")
        rc = _command(wanted).main(args=args, standalone_mode=False, prog_name="inferbench")
    except InferbenchError as exc:
        if debug or _state["debug"]:
            raise
        err.print(f"[bold red]error:[/] {escape(exc.render())}", markup=True)
        sys.exit(exc.exit_code)
    except Terminated:
        err.print("terminated", markup=False)
        exit_promptly()
        sys.exit(EXIT_TERMINATED)
    except KeyboardInterrupt:
        err.print("interrupted", markup=False)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(_after_sigterm(err) or exc.exit_code)
    except SystemExit:  # a command's exit code: before the clause below imports click
        raise
    except typer.Abort:
        err.print("aborted", markup=False)
        sys.exit(1)
    except _usage_error_types() as exc:
        if debug or _state["debug"]:
            raise
        sys.exit(_show_usage_error(exc))
    except Exception as exc:  # a bug: one line, the traceback only with --debug
        if debug or _state["debug"]:
            raise
        err.print(
            f"[bold red]internal error:[/] {escape(type(exc).__name__)}: {escape(str(exc))}"
            " (run again with --debug for the traceback, and please report it)",
            markup=True,
        )
        sys.exit(70)
    sys.exit(_after_sigterm(err) or (rc if isinstance(rc, int) else 0))


def _after_sigterm(err: Console) -> int | None:
    """143 once SIGTERM stopped the command (cleaned up as after a Ctrl-C), else None."""
    if not terminated():
        return None
    err.print("terminated", markup=False)
    exit_promptly()
    return EXIT_TERMINATED


if __name__ == "__main__":
    main()
