"""The changelog entries a revision range adds, read as InferenceX's CI reads them.

InferenceX's `utils/process_changelog.py` takes `git diff BASE HEAD -- perf-changelog.yaml`,
refuses any deleted line that is not blank ("the changelog is append-only"), and parses the
added lines alone, joined in order, as a YAML list of entries. So an entry inserted between
old ones counts, a key line added to an old entry is no entry (an error), and an edited old
entry (a deleted line) refuses the whole range. Here the base side is the file at REV and the
head side the working file; both go through `git diff --no-index` so the hunks are git's own.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from inferbench.checks.gitbase import read_texts
from inferbench.config.changelog import Changelog, ChangelogItem, parse_changelog
from inferbench.errors import ConfigError, ExternalToolError, InputError, Location

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class AddedLines:
    """The added lines' text, each line's number in the current file, and the base commit."""

    text: str
    lines: tuple[int, ...]
    commit: str


def _diff(base: str, head: Path) -> str:
    git = shutil.which("git")
    if git is None:
        raise ExternalToolError("git is not installed", hint="install git to use --changed-since")
    with tempfile.TemporaryDirectory(prefix="inferbench-changelog-") as tmp:
        old = Path(tmp) / "base.yaml"
        old.write_text(base, encoding="utf-8")
        done = subprocess.run(
            [git, "diff", "--no-index", "--no-color", "--no-ext-diff", "--", old, head],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    if done.returncode not in (0, 1):  # 1: the files differ
        raise ExternalToolError(f"git diff failed: {done.stderr.strip()}")
    return done.stdout


def added_lines(root: Path, changelog: Path, rev: str) -> AddedLines:
    """The lines the working changelog adds to its text at `rev` (all of it if absent there)."""
    try:
        commit, texts = read_texts(root, rev, [changelog])
    except InputError as exc:  # its wording names check's --base flag
        raise InputError(exc.message.replace("--base", "--changed-since"), hint=exc.hint) from None
    base = texts.get(changelog.resolve()) or ""
    added: list[str] = []
    numbers: list[int] = []
    line = 0
    for row in _diff(base, changelog).split("\n"):
        hunk = _HUNK.match(row)
        if hunk:
            line = int(hunk.group(1))
        elif row.startswith("-") and not row.startswith("---"):
            if row[1:].strip():
                raise ConfigError(
                    f"the changelog deletes or edits a line present at {rev}: {row[1:].strip()!r}",
                    location=Location(changelog),
                    hint="the changelog is append-only (InferenceX's CI refuses deletions): "
                    "restore the old entry and append a new one",
                )
        elif row.startswith("+") and not row.startswith("+++"):
            added.append(row[1:])
            numbers.append(line)
            line += 1
        elif row.startswith(" "):
            line += 1
    return AddedLines(text="\n".join(added), lines=tuple(numbers), commit=commit)


def _relocated(exc: ConfigError, changelog: Path, added: AddedLines) -> ConfigError:
    where = exc.location
    line = where.line if where is not None else None
    real = added.lines[line - 1] if line is not None and 0 < line <= len(added.lines) else None
    location = Location(changelog, real, None, where.key if where is not None else None)
    return ConfigError(exc.message, location=location, hint=exc.hint)


def added_entries(root: Path, changelog: Path, rev: str) -> tuple[ChangelogItem, ...]:
    """The changelog entries that the lines added since `rev` make up, located in the file."""
    added = added_lines(root, changelog, rev)
    if not added.text.strip():
        raise ConfigError(
            f"the changelog adds no lines since {rev}, so no entry asks for a sweep",
            location=Location(changelog),
            hint="append an entry to the changelog, or drop --changed-since",
        )
    try:
        parsed: Changelog = parse_changelog(added.text, changelog)
    except ConfigError as exc:
        raise _relocated(exc, changelog, added) from None
    if not parsed.items:
        raise ConfigError(
            f"the lines added since {rev} hold no changelog entry",
            location=Location(changelog, added.lines[0]),
            hint="a new entry starts with `- config-keys:`",
        )
    items = []
    for item in parsed.items:
        line = item.line
        real = added.lines[line - 1] if line is not None and 0 < line <= len(added.lines) else None
        location = Location(changelog, real, None, item.location.key)
        if item.entry.pr_link is None:
            raise ConfigError(
                "a new changelog entry needs a pr-link", location=location, hint="add pr-link: URL"
            )
        items.append(ChangelogItem(item.index, item.entry, real, location))
    return tuple(items)
