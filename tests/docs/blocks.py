"""The shell command blocks of README.md and docs/*.md, with their doc-test annotations.

A block is a fenced code block whose language is bash, sh, shell or console. An HTML comment
on the line just above the fence (invisible once rendered) says what the test expects:

    <!-- doc-test: exit=1 -->                every command exits 1 (default: 0)
    <!-- doc-test: exit=0,1,0 -->            one code per command, in order
    <!-- doc-test: skip="needs a GPU" -->    not run, with the reason
    <!-- doc-test: timeout=600 -->           seconds for the whole block (default 300)

`<!-- doc-test-file: skip="reason" -->` anywhere in a file sets the default for its blocks
(a block's own annotation wins): for a page of speed benchmarks, say.

A command is a non-blank line that is not a comment, with its backslash continuations.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

LANGUAGES = {"bash", "sh", "shell", "console"}
KEYS = {"exit", "skip", "timeout"}
DEFAULT_TIMEOUT_S = 300.0
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
_ANNOTATION = re.compile(r"^\s*<!--\s*doc-test:(?P<body>.*?)-->\s*$")
_FILE_ANNOTATION = re.compile(r"^\s*<!--\s*doc-test-file:(?P<body>.*?)-->\s*$")


class AnnotationError(ValueError):
    pass


@dataclass(frozen=True)
class Block:
    file: Path  # relative to the repository root
    line: int  # of the opening fence
    commands: tuple[str, ...]
    exits: tuple[int, ...] = ()  # one per command; () means all 0
    skip: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    annotation: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"

    def expected(self) -> list[int]:
        if not self.exits:
            return [0] * len(self.commands)
        if len(self.exits) == 1:
            return [self.exits[0]] * len(self.commands)
        return list(self.exits)


def _annotation(line: str, where: str, pattern: re.Pattern[str] = _ANNOTATION) -> dict[str, str]:
    match = pattern.match(line)
    if not match:
        return {}
    out: dict[str, str] = {}
    for word in shlex.split(match.group("body")):
        key, sep, value = word.partition("=")
        if not sep or key not in KEYS:
            raise AnnotationError(f"{where}: unknown doc-test annotation {word!r} (know {KEYS})")
        out[key] = value
    return out


def _commands(body: list[str]) -> tuple[str, ...]:
    commands: list[str] = []
    pending = ""
    for raw in body:
        line = raw.rstrip()
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending += line + "\n"
        if not line.endswith("\\"):
            commands.append(pending.rstrip("\n"))
            pending = ""
    if pending:
        commands.append(pending.rstrip("\n"))
    return tuple(commands)


def _block(path: Path, line: int, body: list[str], note: dict[str, str]) -> Block:
    commands = _commands(body)
    where = f"{path}:{line}"
    try:
        exits = tuple(int(c) for c in note["exit"].split(",")) if "exit" in note else ()
        timeout = float(note.get("timeout", DEFAULT_TIMEOUT_S))
    except ValueError as exc:
        raise AnnotationError(f"{where}: bad doc-test annotation: {exc}") from None
    if len(exits) > 1 and len(exits) != len(commands):
        raise AnnotationError(
            f"{where}: exit= lists {len(exits)} codes for {len(commands)} commands"
        )
    return Block(path, line, commands, exits, note.get("skip"), timeout, note)


def read_blocks(path: Path, root: Path) -> list[Block]:
    """The shell blocks of one Markdown file, in order."""
    lines = (root / path).read_text(encoding="utf-8").splitlines()
    defaults: dict[str, str] = {}
    for n, line in enumerate(lines, 1):
        defaults |= _annotation(line, f"{path}:{n}", _FILE_ANNOTATION)
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, start = match.group("fence"), i
        end = next(
            (j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence)),
            len(lines),
        )
        if match.group("lang").lower() in LANGUAGES:
            above = lines[start - 1] if start > 0 else ""
            note = defaults | _annotation(above, f"{path}:{start}")
            blocks.append(_block(path, start + 1, lines[start + 1 : end], note))
        i = end + 1
    return blocks


def doc_files(root: Path) -> list[Path]:
    return [Path("README.md"), *sorted(p.relative_to(root) for p in (root / "docs").glob("*.md"))]
