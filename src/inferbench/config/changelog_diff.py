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

from inferbench.config.changelog import Changelog, ChangelogItem, parse_changelog
from inferbench.config.gitbase import read_texts
from inferbench.core.errors import ConfigError, ExternalToolError, InputError, Location

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class AddedLines:
    """The added lines' text, each line's number in the current file, and the base commit."""

    text: str
    lines: tuple[int, ...]
    commit: str


@dataclass(frozen=True)
class ChangelogDiff:
    """What the working changelog adds to and deletes from a base text: added lines (text,
    numbers in the current file) and the non-blank deleted lines (the current file's line
    where each was, and its text). Blank deleted lines are allowed, as InferenceX allows them."""

    added: tuple[str, ...]
    added_lines: tuple[int, ...]
    deleted: tuple[tuple[int, str], ...]


def _diff(base: str, head: Path) -> str:
    git = shutil.which("git")
    if git is None:
        raise ExternalToolError(
            "git is not installed", hint="install git to read the changelog diff"
        )
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


def diff_changelog(base: str, head: Path) -> ChangelogDiff:
    """The working changelog `head` against the `base` text, line by line as git diffs it."""
    added: list[str] = []
    numbers: list[int] = []
    deleted: list[tuple[int, str]] = []
    line = 0
    for row in _diff(base, head).split("\n"):
        hunk = _HUNK.match(row)
        if hunk:
            line = int(hunk.group(1))
        elif row.startswith("-") and not row.startswith("---"):
            if row[1:].strip():
                deleted.append((max(line, 1), row[1:]))
        elif row.startswith("+") and not row.startswith("+++"):
            added.append(row[1:])
            numbers.append(line)
            line += 1
        elif row.startswith(" "):
            line += 1
    return ChangelogDiff(tuple(added), tuple(numbers), tuple(deleted))


def added_lines(root: Path, changelog: Path, rev: str) -> AddedLines:
    """The lines the working changelog adds to its text at `rev` (all of it if absent there);
    a deleted or edited line refuses the range, as InferenceX's CI refuses it."""
    try:
        commit, texts = read_texts(root, rev, [changelog])
    except InputError as exc:  # its wording names check's --base flag
        raise InputError(exc.message.replace("--base", "--changed-since"), hint=exc.hint) from None
    diff = diff_changelog(texts.get(changelog.resolve()) or "", changelog)
    if diff.deleted:
        line, text = diff.deleted[0]
        raise ConfigError(
            f"the changelog deletes or edits a line present at {rev}: {text.strip()!r}",
            location=Location(changelog, line),
            hint="the changelog is append-only (InferenceX's CI refuses deletions): "
            "restore the old entry and append a new one",
        )
    return AddedLines(text="\n".join(diff.added), lines=diff.added_lines, commit=commit)


def parse_added(text: str, lines: tuple[int, ...], changelog: Path) -> tuple[ChangelogItem, ...]:
    """The entries that added lines make up, each located at its line in the current file."""
    try:
        parsed: Changelog = parse_changelog(text, changelog)
    except ConfigError as exc:
        raise _relocated(exc, changelog, lines) from None
    items = []
    for item in parsed.items:
        line = item.line
        real = lines[line - 1] if line is not None and 0 < line <= len(lines) else None
        location = Location(changelog, real, None, item.location.key)
        items.append(ChangelogItem(item.index, item.entry, real, location))
    return tuple(items)


def _relocated(exc: ConfigError, changelog: Path, lines: tuple[int, ...]) -> ConfigError:
    where = exc.location
    line = where.line if where is not None else None
    real = lines[line - 1] if line is not None and 0 < line <= len(lines) else None
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
    items = parse_added(added.text, added.lines, changelog)
    if not items:
        raise ConfigError(
            f"the lines added since {rev} hold no changelog entry",
            location=Location(changelog, added.lines[0]),
            hint="a new entry starts with `- config-keys:`",
        )
    for item in items:
        if item.entry.pr_link is None:
            raise ConfigError(
                "a new changelog entry needs a pr-link",
                location=item.location,
                hint="add pr-link: URL",
            )
    return items
