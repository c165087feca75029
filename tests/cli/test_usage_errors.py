"""Usage errors print click's usage message and exit 2; nothing shows a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from .clirun import run_cli

USAGE = [
    (["check", "--bogus"], "No such option: --bogus"),
    (["plan", "x", "--engine", "tgi"], "'tgi' is not one of"),
    (["results", "show", "-1"], "No such option: -1"),
    (["plan"], "Missing argument"),
    (["sim", "estimate", "--concurrency"], "requires an argument"),
    (["nosuchcommand"], "No such command"),
]


@pytest.mark.parametrize(("args", "message"), USAGE, ids=[" ".join(a) for a, _ in USAGE])
def test_usage_errors_exit_2_with_usage(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    ran = run_cli(args, capsys)
    assert ran.code == 2, ran.text
    assert message in ran.err and "Error:" in ran.err
    # click prints the usage line wherever it knows the command (not for an option's value)
    assert "Usage: inferbench" in ran.err or "requires an argument" in message
    assert "Traceback" not in ran.text


@pytest.mark.parametrize("args", [["-h"], ["check", "-h"], ["results", "show", "--help"]])
def test_h_is_help(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    ran = run_cli(args, capsys)
    assert ran.code == 0 and "Usage" in ran.out and "Traceback" not in ran.text


def test_rich_markup_in_a_path_is_printed_as_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ran = run_cli(["check", str(tmp_path / "x[/]")], capsys)
    assert ran.code == 2 and "x[/]" in ran.err and "Traceback" not in ran.text


def test_a_bug_is_one_line_and_exit_70_without_debug(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import inferbench.cli.check as check_cli

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom [/]")

    monkeypatch.setattr(check_cli, "check_tree", broken, raising=False)
    monkeypatch.setattr("inferbench.checks.engine.check_tree", broken)
    ran = run_cli(["check", "."], capsys)
    assert ran.code == 70 and "internal error: RuntimeError: boom [/]" in ran.err
    assert "Traceback" not in ran.text and "--debug" in ran.err
    with pytest.raises(RuntimeError):
        run_cli(["--debug", "check", "."], capsys)
