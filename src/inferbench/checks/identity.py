"""A finding's stable identity: what makes it the same finding in two versions of a tree.

`check --base` and `--baseline` tell a change's own findings from those the tree had before by
comparing identities, so an identity holds what a reviewer would call "the same problem": the
rule, the file (relative to the tree's root), the key path and the values the message names.
It never holds a line or column, so moving a block does not make its findings new; and it
holds the values rather than the wording, so a reworded message is still the same finding
while `concurrencies: "4096"` and `"2048"` are two.

A key path's list positions (`search-space[2]`) are part of the exact identity but left out of
the loose one (`search-space[]`): findings are matched on the exact identity first and then on
the loose one, so reordering a list does not make its findings new either.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from inferbench.checks.finding import Finding

# where something is, never what it is: "line 104", "file.yaml:12:3"
_LINE_REFERENCES = re.compile(
    r"\blines? \d+(?:\s*[-–]\s*\d+)?"  # "first at line 104", "lines 3-9"
    r"|(?<=\.yaml|\.toml):\d+(?::\d+)?|(?<=\.yml):\d+(?::\d+)?|(?<=\.sh):\d+(?::\d+)?"
)
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]")
_TOKEN = re.compile(r"[^\s,;()]+")
_VALUE_CHARS = re.compile(r"[0-9_/@=.-]")
_ALNUM = re.compile(r"[0-9A-Za-z]")
_LIST_INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True, order=True)
class FindingIdentity:
    """Rule id, file (tree-relative, or `<srt-slurm ref>/path`), key path and named values."""

    rule: str
    file: str
    key: str
    values: tuple[str, ...]

    def fingerprint(self) -> str:
        """A short stable digest of the identity (JSON output names findings by it)."""
        text = json.dumps([self.rule, self.file, self.key, list(self.values)])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def loose(self) -> FindingIdentity:
        """The identity with list positions left out of the key path."""
        return FindingIdentity(self.rule, self.file, _LIST_INDEX.sub("[]", self.key), self.values)


def message_values(message: str, roots: Sequence[Path] = ()) -> tuple[str, ...]:
    """The values a message names, in order: quoted strings and lists, and every word that
    holds a digit or one of `_ / @ = . -` inside it (numbers, ids, paths, versions); line
    references and the tree's own absolute path are left out."""
    for root in roots:
        message = message.replace(f"{root}/", "").replace(str(root), ".")
    message = _LINE_REFERENCES.sub("", message)
    values: list[str] = []
    rest: list[str] = []
    last = 0
    for match in _QUOTED.finditer(message):
        rest.append(message[last : match.start()])
        values.append(match.group())
        last = match.end()
    rest.append(message[last:])
    words = (w.strip(".:!?") for w in _TOKEN.findall(" ".join(rest)))
    values.extend(w for w in words if _VALUE_CHARS.search(w) and _ALNUM.search(w))
    return tuple(values)


def file_label(file: Path | None, root: Path, sources: Sequence[Path] = ()) -> str:
    """How an identity names a file: relative to the tree's root; a file of an srt-slurm ref
    by `<repository>@<ref>/path`; one of a plain srt-slurm checkout by `srt-slurm/path`; ""
    for a finding about the whole tree. Never a machine's absolute path where avoidable."""
    if file is None:
        return ""
    from inferbench.config.srt_slurm_refs import unpacked_label

    resolved = file.resolve()
    unpacked = unpacked_label(resolved)
    if unpacked is not None:
        ref_root, label = unpacked
        return f"{label}/{resolved.relative_to(ref_root).as_posix()}"
    for base in (root, *sources):
        base = base.resolve()
        if resolved.is_relative_to(base):
            relative = resolved.relative_to(base).as_posix()
            return relative if base == root.resolve() else f"srt-slurm/{relative}"
    return resolved.as_posix()


def identity_of(finding: Finding, root: Path, sources: Sequence[Path] = ()) -> FindingIdentity:
    """The identity of `finding`, one of a check of the tree at `root`."""
    return FindingIdentity(
        rule=finding.rule,
        file=file_label(finding.file, root, sources),
        key=finding.key or "",
        # a finding about the whole tree (IB002's coverage) is one finding whatever it counts
        values=() if finding.file is None else message_values(finding.message, (root.resolve(),)),
    )
