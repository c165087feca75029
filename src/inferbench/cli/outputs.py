"""Parsers of the options that name an output file or folder, checked before any work starts.

`typer.Option(None, "--output", parser=output_file("--output"))` refuses an empty name, a
directory, a block device or a socket with a message naming the option (exit 2), before a
benchmark runs for an hour to end with nowhere to write. The writer (`inferbench.core.fsio`)
checks again when it writes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from inferbench.core.fsio import check_output_file, check_output_folder


def _text(value: object) -> str:
    # a value from a --config YAML file may be a number: a file name all the same
    return os.fspath(value) if isinstance(value, str | os.PathLike) else str(value)


def output_file(option: str) -> Callable[[object], Path]:
    """The parser of an option naming a file to write (`-` is stdout) in a folder that
    exists."""

    def parse(value: object) -> Path:
        text = _text(value)
        check_output_file(text, option)
        return Path(text)

    return parse


def output_folder(option: str) -> Callable[[object], Path]:
    """The parser of an option naming a folder to write files into (made when missing)."""

    def parse(value: object) -> Path:
        return check_output_folder(_text(value), option)

    return parse
