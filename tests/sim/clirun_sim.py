"""`inferbench sim ...` in-process with a wide console: exit code and what it printed."""

from __future__ import annotations

import pytest

from inferbench.cli.main import main


def run_sim(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    mp = pytest.MonkeyPatch()
    mp.setenv("COLUMNS", "220")
    try:
        main(["sim", *args])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        mp.undo()
    captured = capsys.readouterr()
    return code, captured.out + captured.err
