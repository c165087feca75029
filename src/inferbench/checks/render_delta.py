"""Renderers for a change's findings (`check --base` / `--baseline`): new first, then fixed,
pre-existing ones only counted unless `--all`; text, JSON and GitHub annotations."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from inferbench.checks.baseline import RecordedFinding
from inferbench.checks.delta import Delta
from inferbench.checks.finding import Finding, Severity
from inferbench.checks.identity import identity_of
from inferbench.checks.render import (
    GITHUB_ANNOTATIONS_PER_LEVEL,
    finding_dict,
    finding_lines,
    github_annotation,
    github_notice,
)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def delta_summary(delta: Delta, show_all: bool = False, hidden: str = " not shown: --all") -> str:
    """`3 new errors, 0 fixed against master; 99 pre-existing not shown: --all`."""
    parts = [_plural(delta.counts(delta.new, Severity.ERROR), "new error")]
    warnings = delta.counts(delta.new, Severity.WARNING)
    infos = delta.counts(delta.new, Severity.INFO)
    if warnings:
        parts.append(_plural(warnings, "new warning"))
    if infos:
        parts.append(_plural(infos, "new info"))
    parts.append(f"{len(delta.fixed)} fixed against {delta.against}")
    summary = ", ".join(parts)
    pre = len(delta.preexisting)
    return f"{summary}; {pre} pre-existing{'' if show_all else hidden}"


def _fixed_line(record: RecordedFinding) -> str:
    where = record.file or "<tree>"
    if record.line is not None:
        where += f":{record.line}"
    key = f" [{record.key}]" if record.key else ""
    return f"{where}: {record.rule} {record.severity.value} {record.slug}: {record.message}{key}"


def render_delta_text(delta: Delta, root: Path, show_all: bool = False) -> str:
    """The new findings as `check` prints any, the fixed ones (where they were at the base),
    with --all the pre-existing ones, then the one-line summary."""
    lines: list[str] = []
    if delta.new:
        lines.append(f"New since {delta.against}:")
        lines += [line for f in delta.new for line in finding_lines(f, root)]
    if delta.fixed:
        lines.append(f"Fixed since {delta.against}:")
        lines += [_fixed_line(r) for r in delta.fixed]
    if show_all and delta.preexisting:
        lines.append("Pre-existing:")
        lines += [line for f in delta.preexisting for line in finding_lines(f, root)]
    lines.append(delta_summary(delta, show_all))
    return "\n".join(lines) + "\n"


def render_delta_json(delta: Delta, root: Path, show_all: bool = False) -> str:
    """A JSON list of findings as `check --format json` gives them, each with `status` (new,
    fixed, pre-existing) and `fingerprint` (its stable identity's digest); pre-existing ones
    only with --all."""

    def current(f: Finding, status: str) -> dict[str, object]:
        ident = identity_of(f, root, delta.sources)
        return {**finding_dict(f, root), "status": status, "fingerprint": ident.fingerprint()}

    def fixed(r: RecordedFinding) -> dict[str, object]:
        return {
            "rule": r.rule,
            "slug": r.slug,
            "severity": r.severity.value,
            "file": r.file or None,
            "line": r.line,
            "column": None,
            "key": r.key or None,
            "message": r.message,
            "hint": None,
            "status": "fixed",
            "fingerprint": r.identity.fingerprint(),
        }

    rows = [current(f, "new") for f in delta.new] + [fixed(r) for r in delta.fixed]
    if show_all:
        rows += [current(f, "pre-existing") for f in delta.preexisting]
    return json.dumps(rows, indent=2) + "\n"


def render_delta_github(
    delta: Delta,
    root: Path,
    show_all: bool = False,
    limit: int = GITHUB_ANNOTATIONS_PER_LEVEL,
) -> str:
    """Annotations for the new findings, those on the files the change touched first (errors
    before warnings), at most `limit` per level; then one notice with the summary, where the
    pre-existing findings are only counted: a pull request's annotations are its own.
    `show_all` is ignored (a pull request's page is no place for the tree's whole debt)."""
    del show_all
    out: list[str] = []
    shown: dict[Severity, int] = {}
    left_out = 0
    order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    for f in sorted(delta.new, key=lambda f: (not delta.is_changed(f), order[f.severity])):
        if shown.get(f.severity, 0) >= limit:
            left_out += 1
            continue
        shown[f.severity] = shown.get(f.severity, 0) + 1
        out.append(github_annotation(f, root))
    summary = delta_summary(delta, hidden=", not annotated") + "."
    if left_out:
        summary += f" {left_out} more not annotated (GitHub shows {limit} per level)."
    if left_out or delta.preexisting:
        summary += " Run `inferbench check` with the same base and --all for every finding."
    out.append(github_notice(summary))
    return "".join(line + "\n" for line in out)


DeltaRenderer = Callable[[Delta, Path, bool], str]
DELTA_RENDERERS: dict[str, DeltaRenderer] = {
    "text": render_delta_text,
    "json": render_delta_json,
    "github": render_delta_github,
}
