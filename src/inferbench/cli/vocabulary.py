"""One spelling per idea across commands (vocabulary.yaml), and the old spellings that still work.

An old spelling is not an option of its command (so `--help` and docs/cli.md show only the
new one): the root group rewrites it on the command line before click parses, and says so in
one line on stderr. `problems` is the check tests/cli/test_vocabulary.py runs over every
command's options.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml
from typer.core import TyperGroup

DATA = "vocabulary.yaml"


@dataclass(frozen=True)
class Deprecated:
    spelling: str  # `--conc`
    commands: tuple[str, ...]  # ("sweep", "plan", "run"); "sim estimate" for a subcommand
    becomes: tuple[str, ...]  # what it is rewritten to: ("--concurrency",), ("--format", "json")


@dataclass(frozen=True)
class Ecosystem:
    spelling: str  # `--max-concurrency`
    commands: tuple[str, ...]
    source: str  # whose spelling it is: "vLLM bench serve"


@dataclass(frozen=True)
class Idea:
    name: str
    option: str
    short: str | None
    means: str
    ecosystem: tuple[Ecosystem, ...]
    deprecated: tuple[Deprecated, ...]


@dataclass(frozen=True)
class Vocabulary:
    ideas: tuple[Idea, ...]
    options: dict[str, str]  # every other spelling -> what it means

    def deprecated_in(self, command: str) -> dict[str, Deprecated]:
        """The old spellings `command` ("bench", "sim estimate") still takes."""
        return {d.spelling: d for i in self.ideas for d in i.deprecated if command in d.commands}


def _words(value: Any) -> tuple[str, ...]:
    return tuple(str(value).split()) if value else ()


def parse(data: dict[str, Any]) -> Vocabulary:
    ideas = []
    for name, body in (data.get("ideas") or {}).items():
        ideas.append(
            Idea(
                name=name,
                option=body["option"],
                short=body.get("short"),
                means=body.get("means", ""),
                ecosystem=tuple(
                    Ecosystem(spelling, tuple(e["commands"]), str(e.get("from", "")))
                    for spelling, e in (body.get("ecosystem") or {}).items()
                ),
                deprecated=tuple(
                    Deprecated(
                        spelling,
                        tuple(d["commands"]),
                        _words(d.get("becomes")) or (body["option"],),
                    )
                    for spelling, d in (body.get("deprecated") or {}).items()
                ),
            )
        )
    return Vocabulary(tuple(ideas), dict(data.get("options") or {}))


@functools.cache
def vocabulary() -> Vocabulary:
    text = resources.files("inferbench.cli").joinpath(DATA).read_text(encoding="utf-8")
    # read at every start of the CLI: libyaml's loader where it is built (a few ms, not 25)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return parse(yaml.load(text, Loader=loader))


def rewrite(command: str, args: Sequence[str]) -> tuple[list[str], list[str]]:
    """`args` of `command` with each old spelling replaced, and a note per spelling used."""
    table = vocabulary().deprecated_in(command)
    out: list[str] = []
    notes: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":  # what follows is not an option
            out.extend(args[index:])
            break
        name, eq, value = arg.partition("=")
        old = table.get(name) if name.startswith("--") else None
        if old is None:
            out.append(arg)
            continue
        new = list(old.becomes)
        if eq:
            new[-1] = f"{new[-1]}={value}"
        out.extend(new)
        note = (
            f"inferbench {command}: {old.spelling} is deprecated, use {' '.join(old.becomes)}"
            " (the old spelling still works for now)"
        )
        if note not in notes:
            notes.append(note)
    return out, notes


class VocabularyGroup(TyperGroup):
    """The root group: rewrites a command's deprecated spellings before click parses them."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        path, rest = self._command_path(ctx, args)
        if path:
            new, notes = rewrite(" ".join(path), rest)
            for note in notes:
                print(note, file=sys.stderr)
            args = args[: len(args) - len(rest)] + new
        return super().parse_args(ctx, args)

    def _command_path(self, ctx: Any, args: list[str]) -> tuple[list[str], list[str]]:
        """The command's names (`sim`, `estimate`) and the arguments after them."""
        path: list[str] = []
        group: Any = self
        for index, arg in enumerate(args):
            if arg.startswith("-"):
                if path:  # an option of the command (or of its group): the names ended
                    return path, list(args[index:])
                continue  # a root option (none of them takes a value)
            sub = group.get_command(ctx, arg) if hasattr(group, "get_command") else None
            if sub is None:
                return path, list(args[index:])
            path.append(arg)
            group = sub
            if not hasattr(sub, "get_command"):  # a leaf: the rest is its own
                return path, list(args[index + 1 :])
        return path, []


# --- the check ------------------------------------------------------------------------


@dataclass(frozen=True)
class OptionUse:
    command: str  # "sim estimate"
    names: tuple[str, ...]  # the primary spelling first, then the others (`-o`, `--no-x`)
    hidden: bool


def problems(uses: Iterable[OptionUse], vocab: Vocabulary) -> list[str]:
    """Where the commands' options depart from the vocabulary: an unlisted spelling, a second
    spelling of one idea, or an old spelling that is an option again."""
    out: list[str] = []
    canonical = {i.option: i for i in vocab.ideas}
    rivals: dict[str, list[str]] = {}  # a spelling that is some idea's other name -> its ideas
    for each in vocab.ideas:
        spellings = [e.spelling for e in each.ecosystem] + [d.spelling for d in each.deprecated]
        for spelling in spellings:
            rivals.setdefault(spelling, []).append(each.option)
    doubled = sorted(set(canonical) & set(vocab.options))
    out += [f"vocabulary: {s} is listed as an idea and as an option" for s in doubled]
    seen_options: set[str] = set()
    for use in uses:
        where = f"inferbench {use.command}"
        primary, *others = use.names
        allowed_here = {
            e.spelling: i for i in vocab.ideas for e in i.ecosystem if use.command in e.commands
        }
        old_here = vocab.deprecated_in(use.command)
        if primary in old_here:
            new = " ".join(old_here[primary].becomes)
            out.append(f"{where} {primary}: deprecated spelling of {new}; name the option {new}")
            continue
        idea = canonical.get(primary)
        if idea is None and primary in vocab.options:
            # an old spelling elsewhere may mean something else here (`--model`)
            seen_options.add(primary)
        elif idea is None:
            hint = f"another spelling of {', '.join(rivals[primary])}" if primary in rivals else ""
            out.append(
                f"{where} {primary}: not in the vocabulary; "
                + (hint or "use the spelling of its idea, or add it to vocabulary.yaml")
            )
        for other in others:
            if other == f"--no-{primary.removeprefix('--')}":
                continue
            if idea is not None and other == idea.short:
                continue
            if allowed_here.get(other) is idea and idea is not None:
                continue
            out.append(
                f"{where} {primary}: {other} is a second spelling; drop it, or list it in"
                " vocabulary.yaml as another tool's spelling (ecosystem) for this command"
            )
    unused = sorted(set(vocab.options) - seen_options)
    out += [f"vocabulary: {s} is listed but no command has it" for s in unused]
    return out


def deprecated_problems(uses: Iterable[OptionUse], vocab: Vocabulary) -> list[str]:
    """Each old spelling's command exists, lacks the old option and has the new one."""
    by_command: dict[str, set[str]] = {}
    for use in uses:
        by_command.setdefault(use.command, set()).update(use.names)
    out = []
    for idea in vocab.ideas:
        for old in idea.deprecated:
            for command in old.commands:
                names = by_command.get(command)
                if names is None:
                    out.append(f"vocabulary: {old.spelling}: no command {command!r}")
                elif old.becomes[0] not in names:
                    out.append(f"inferbench {command} lacks {old.becomes[0]} ({old.spelling})")
    return out


def render_markdown(vocab: Vocabulary) -> str:
    """docs/cli.md's table of the ideas: the spelling, others' spellings, the old ones."""

    def where(commands: tuple[str, ...]) -> str:
        return ", ".join(f"`{c}`" for c in commands)

    out = [
        "| idea | spelling | also taken (another tool's spelling)"
        " | old spelling (works, with a note) |",
        "|---|---|---|---|",
    ]
    for idea in vocab.ideas:
        spelling = f"`{idea.option}`" + (f" / `{idea.short}`" if idea.short else "")
        eco = "; ".join(f"`{e.spelling}` ({where(e.commands)}: {e.source})" for e in idea.ecosystem)
        old = "; ".join(
            f"`{d.spelling}` ({where(d.commands)})"
            + (f" -> `{' '.join(d.becomes)}`" if d.becomes != (idea.option,) else "")
            for d in idea.deprecated
        )
        out.append(f"| {idea.name}: {idea.means} | {spelling} | {eco} | {old} |")
    return "\n".join(out) + "\n"
