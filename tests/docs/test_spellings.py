"""The docs show each option in its current spelling: an old spelling still works (with a
note on stderr), so a block that uses one passes its run and teaches the old name."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import typer
from blocks import doc_files, read_blocks

from inferbench.cli.main import build_app
from inferbench.cli.vocabulary import rewrite

ROOT = Path(__file__).resolve().parents[2]


def _invocations(command: str) -> list[list[str]]:
    """The argument lists after each `inferbench` word of a shell command."""
    try:
        words = shlex.split(command.replace("\\\n", " "), comments=True)
    except ValueError:  # an unbalanced quote in an example's placeholder
        return []
    starts = [i for i, w in enumerate(words) if w == "inferbench" or w.endswith("/inferbench")]
    out = []
    for i in starts:
        args = []
        for word in words[i + 1 :]:
            if word in {"|", "||", "&&", ";", "&"} or word.startswith((">", "2>")):
                break
            args.append(word)
        out.append(args)
    return out


def _split(group: Any, args: list[str]) -> tuple[str, list[str]]:
    """`sim estimate`, [its arguments] for `sim estimate --isl 1` (Typer's own click)."""
    path: list[str] = []
    node = group
    for index, arg in enumerate(args):
        sub = getattr(node, "commands", {}).get(arg)
        if sub is None:
            return " ".join(path), args[index:]
        path.append(arg)
        node = sub
    return " ".join(path), []


def old_spellings(root: Path) -> list[str]:
    group = typer.main.get_command(build_app())
    found = []
    for path in doc_files(root):
        for block in read_blocks(path, root):
            for command in block.commands:
                for args in _invocations(command):
                    name, rest = _split(group, args)
                    _, notes = rewrite(name, rest) if name else ([], [])
                    found += [f"{block.id}: {note}" for note in notes]
    return found


def test_no_doc_block_uses_an_old_spelling() -> None:
    assert old_spellings(ROOT) == []


def test_an_old_spelling_in_a_block_is_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("```bash\ninferbench sweep --conc 8 \\\n  --root x\n```\n")
    (tmp_path / "docs" / "a.md").write_text("```bash\ninferbench sweep --concurrency 8\n```\n")
    assert old_spellings(tmp_path) == [
        "README.md:1: inferbench sweep: --conc is deprecated, use --concurrency "
        "(the old spelling still works for now)"
    ]
