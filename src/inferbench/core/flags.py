"""How a request model's field is spelled on the command line, declared on the field itself.

A library request model (`BenchArgs`, `ReplayArgs`, ...) is the one list of a command's inputs.
Each field carries its help as `Field(description=...)`, its bounds as `Field(ge=..., le=...)`,
and, where the option is not simply `--field-name`, a `Flag` in its `Annotated` metadata:

    isl: Annotated[int | None, Flag("--isl", "--random-input-len")] = Field(
        None, le=MAX_TOKENS, description="Input length (tokens)"
    )

`inferbench.cli.options` turns the fields into the command's Typer options. This module knows
nothing of Typer, so the library may declare flags without importing the CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Writes = Literal["file", "folder"]


@dataclass(frozen=True, init=False)
class Flag:
    """The spellings of one option (the first is its name in messages) and how it shows.

    `writes`: the option names a file (`-` is stdout) or a folder to write, checked before any
    work starts. `panel`: the `--help` section it is listed under. `hidden`: accepted, not
    listed (another tool's flag that is refused with a reason). `parse`: the value's type, made
    from the text when the command line is read (a ValueError is a usage error naming the
    option): for a type the command line does not know (`engines.choice.Engine`).
    """

    names: tuple[str, ...]
    panel: str | None
    hidden: bool
    writes: Writes | None
    parse: Callable[[str], Any] | None

    def __init__(
        self,
        *names: str,
        panel: str | None = None,
        hidden: bool = False,
        writes: Writes | None = None,
        parse: Callable[[str], Any] | None = None,
    ) -> None:
        bad = [n for n in names if not n.startswith("-") or n.strip("-") == ""]
        if bad:
            raise ValueError(f"option spellings start with - or --, not {bad}")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "panel", panel)
        object.__setattr__(self, "hidden", hidden)
        object.__setattr__(self, "writes", writes)
        object.__setattr__(self, "parse", parse)
