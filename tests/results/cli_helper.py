"""Run `inferbench results|report ...` in-process, the way `inferbench.cli.main` does.

Builds a root app holding only this group's commands so these tests do not depend on
other command groups importing cleanly; a user error maps to exit 2 like `main()`.
"""

from __future__ import annotations

from dataclasses import dataclass

import typer
from typer.testing import CliRunner

from inferbench.cli import report as report_cli
from inferbench.cli import results as results_cli
from inferbench.core.errors import InferbenchError


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def run_cli(*args: str) -> CliResult:
    app = typer.Typer(pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        pass

    results_cli.register(app)
    report_cli.register(app)
    runner = CliRunner()
    result = runner.invoke(app, list(args), catch_exceptions=True)
    exc = result.exception
    if isinstance(exc, InferbenchError):
        return CliResult(exc.exit_code, result.stdout, exc.render())
    if exc is not None and not isinstance(exc, SystemExit):
        raise exc
    return CliResult(result.exit_code, result.stdout, result.stderr)
