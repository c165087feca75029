"""docs/cli.md lists every command and every option once, and every option has help."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inferbench.cli.reference import (
    CommandDoc,
    command_docs,
    documented,
    render_markdown,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
FIX = "add it to docs/cli.md (python tools/cli_reference.py rewrites the reference)"
COMMANDS = command_docs()


def test_every_command_is_walked() -> None:
    names = {c.name for c in COMMANDS}
    assert {"inferbench check", "inferbench sim estimate", "inferbench results list"} <= names
    assert len(names) == len(COMMANDS) >= 20
    sweep = next(c for c in COMMANDS if c.name == "inferbench sweep")
    assert ("--config-keys",) in [p.names for p in sweep.params]  # the shared filter options


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_every_option_has_help(command: CommandDoc) -> None:
    bare = [" / ".join(p.names) for p in command.params if not p.help]
    assert not bare, f"{command.name}: no help text for {', '.join(bare)}; give it help=..."


def problems(text: str, commands: list[CommandDoc]) -> list[str]:
    """What a reference gets wrong about `commands`: sections, missing, doubled, stale."""
    out: list[str] = []
    listed = documented(text)
    for command in commands:
        headings = re.findall(rf"^#{{2,4}} `{re.escape(command.name)}`\s*$", text, re.M)
        if len(headings) != 1:
            out.append(f"{command.name}: {len(headings)} sections")
            continue
        bullets = listed[command.name]
        for param in command.params:
            holding = [b for b in bullets if set(param.names) & set(b)]
            label = f"{command.name} {' / '.join(param.names)}"
            if not holding:
                out.append(f"{label} is missing")
            elif len(holding) > 1:
                out.append(f"{label} is listed {len(holding)} times")
            elif set(holding[0]) != set(param.names):
                out.append(f"{label} is listed as {' / '.join(holding[0])}")
        known = {n for p in command.params for n in p.names}
        out += [
            f"{command.name}: lists {b}, which it lacks" for b in bullets if not set(b) <= known
        ]
    out += [f"{name}: no such command" for name in set(listed) - {c.name for c in commands}]
    return out


def test_docs_list_every_command_and_option_once() -> None:
    found = problems(DOC.read_text(encoding="utf-8"), COMMANDS)
    assert not found, "docs/cli.md: " + "; ".join(found) + f"; {FIX}"


def test_the_check_finds_what_is_wrong() -> None:
    text = render_markdown(COMMANDS)
    assert problems(text, COMMANDS) == []
    lines = text.splitlines()
    strict = next(i for i, line in enumerate(lines) if line.startswith("- `--strict`"))
    dropped = "\n".join(lines[:strict] + lines[strict + 1 :])
    assert problems(dropped, COMMANDS) == ["inferbench check --strict is missing"]
    doubled = "\n".join(lines[: strict + 1] + lines[strict:])
    assert problems(doubled, COMMANDS) == ["inferbench check --strict is listed 2 times"]
    stale = text.replace("- `--strict`:", "- `--strict` / `--lenient`:", 1)
    assert problems(stale, COMMANDS) == [
        "inferbench check --strict is listed as --strict / --lenient",
        "inferbench check: lists ('--strict', '--lenient'), which it lacks",
    ]
    gone = text.replace("### `inferbench demo`", "### demo")
    assert "inferbench demo: 0 sections" in problems(gone, COMMANDS)  # its options land in plan
