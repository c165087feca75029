"""The command reference of docs/cli.md, read from the Typer app itself.

Every leaf command with its arguments and options (names, value type, default and help);
`tools/cli_reference.py` writes it into docs/cli.md, and tests/cli/test_reference.py fails
when an option has no help or docs/cli.md does not list it.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

import typer

from inferbench.cli.main import build_app

HELP_NAMES = ("--help", "-h")


@dataclass(frozen=True)
class ParamDoc:
    names: tuple[str, ...]  # an option's spellings (`--isl`, `--random-input-len`); an
    # argument's upper-case name (`TREE`)
    argument: bool
    value: str  # the value's type, "" for a flag
    help: str
    default: str  # "" when there is none worth saying
    hidden: bool


@dataclass(frozen=True)
class CommandDoc:
    path: tuple[str, ...]  # ("sim", "estimate"); () for the root's own options
    help: str
    params: tuple[ParamDoc, ...]

    @property
    def name(self) -> str:
        return " ".join(("inferbench", *self.path))


def _one_line(text: str | None) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def _paragraphs(text: str | None) -> str:
    paragraphs = re.split(r"\n\s*\n", (text or "").strip())
    return "\n\n".join(_one_line(p) for p in paragraphs if p.strip())


def _default(param: Any) -> str:
    value = param.default
    if callable(value) or getattr(param, "required", False):
        return ""
    if isinstance(value, enum.Enum):
        value = value.value
    if value in (None, False, "", (), []) or getattr(param, "is_flag", False):
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


_TYPE_NAMES = {int: "INTEGER", float: "FLOAT", str: "TEXT", Path: "PATH"}


def _annotation(param: Any) -> Any:
    """The Python type a parameter takes, without `| None` and list[...] wrappers."""
    descriptor = getattr(param, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", None)
    while True:
        args = [a for a in get_args(annotation) if a is not type(None)]
        if get_origin(annotation) in (list, tuple, Union, UnionType) and len(args) == 1:
            annotation = args[0]
        else:
            return annotation


def _value(param: Any) -> str:
    """`INTEGER`, `PATH`, `trim|reject`, ...; "" for a flag."""
    if getattr(param, "is_flag", False):
        return ""
    annotation = _annotation(param)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "|".join(str(m.value) for m in annotation)
    if annotation is bool:
        return ""
    return _TYPE_NAMES.get(annotation, "TEXT")


def _param(param: Any) -> ParamDoc | None:
    if param.param_type_name == "argument":
        return ParamDoc(
            names=(str(param.name).upper(),),
            argument=True,
            value=_value(param),
            help=_one_line(getattr(param, "help", None)),
            default=_default(param),
            hidden=False,
        )
    names = tuple(n for n in (*param.opts, *param.secondary_opts))
    if set(names) & set(HELP_NAMES):
        return None
    return ParamDoc(
        names=names,
        argument=False,
        value=_value(param),
        help=_one_line(param.help),
        default=_default(param),
        hidden=bool(getattr(param, "hidden", False)),
    )


def _walk(command: Any, path: tuple[str, ...]) -> Iterator[CommandDoc]:
    params = tuple(p for p in (_param(q) for q in command.params) if p is not None)
    subcommands = getattr(command, "commands", None)
    if subcommands:
        if params:  # a group's own options (the root's --debug, --version)
            yield CommandDoc(path, _paragraphs(command.help), params)
        for name, sub in subcommands.items():
            yield from _walk(sub, (*path, name))
    else:
        yield CommandDoc(path, _paragraphs(command.help), params)


def command_docs(app: typer.Typer | None = None) -> list[CommandDoc]:
    """Every command of the app, in the order they are registered; the root first."""
    return list(_walk(typer.main.get_command(app or build_app()), ()))


def _bullet(p: ParamDoc) -> str:
    names = " / ".join(f"`{n}`" for n in p.names)
    value = f" *{p.value}*" if p.value and not p.argument else ""
    kind = " (argument)" if p.argument else ""
    extra = []
    if p.default:
        extra.append(f"default `{p.default}`")
    if p.hidden:
        extra.append("hidden from --help")
    tail = f" ({'; '.join(extra)})" if extra else ""
    return f"- {names}{kind}{value}: {p.help}{tail}"


def render_markdown(docs: list[CommandDoc]) -> str:
    """The reference: a section per command, a bullet per argument and option."""
    out: list[str] = []
    for doc in docs:
        out += [f"### `{doc.name}`", ""]
        if doc.help:
            out += [doc.help, ""]
        out += [_bullet(p) for p in doc.params]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


BULLET = re.compile(r"^- ((?:`[^`]+`(?: / )?)+)")


def documented(markdown: str) -> dict[str, list[tuple[str, ...]]]:
    """What a reference lists: command name -> the names of each bullet, in order."""
    found: dict[str, list[tuple[str, ...]]] = {}
    current: list[tuple[str, ...]] | None = None
    for line in markdown.splitlines():
        heading = re.match(r"^#{2,4} `(inferbench(?: [\w-]+)*)`\s*$", line)
        if heading:
            current = found.setdefault(heading.group(1), [])
            continue
        if line.startswith("## "):
            current = None
        bullet = BULLET.match(line)
        if bullet and current is not None:
            current.append(tuple(re.findall(r"`([^`]+)`", bullet.group(1))))
    return found
