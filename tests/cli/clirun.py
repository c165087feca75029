"""Run the CLI in-process (as the `inferbench` script does) and capture what it says."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from inferbench.cli.main import main


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> Ran:
    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    captured = capsys.readouterr()
    return Ran(code, captured.out, captured.err)
