"""Renderers for findings: a readable text report, JSON, and GitHub workflow annotations."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from inferbench.checks.finding import Finding, Severity
from inferbench.config.srt_slurm_refs import unpacked_label


def display_path(path: Path | None, base: Path | None = None) -> str:
    """`path` relative to `base` (default: the working directory), with `..` when it lies
    elsewhere (a file of the srt-slurm checkout): no output names a machine's absolute paths."""
    if path is None:
        return ""
    base = (base or Path.cwd()).resolve()
    resolved = path.resolve()
    unpacked = unpacked_label(resolved)
    if unpacked is not None:  # an srt-slurm ref unpacked into the cache: named by its ref
        root, label = unpacked
        return f"{label}/{resolved.relative_to(root).as_posix()}"
    try:
        return resolved.relative_to(base).as_posix()
    except ValueError:
        pass
    try:
        return Path(os.path.relpath(resolved, base)).as_posix()
    except ValueError:  # another drive (Windows): no relative path exists
        return path.as_posix()


def _where(finding: Finding, base: Path | None) -> str:
    where = display_path(finding.file, base) or "<tree>"
    if finding.line is not None:
        where += f":{finding.line}"
        if finding.column is not None:
            where += f":{finding.column}"
    return where


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def summary_line(findings: Sequence[Finding]) -> str:
    if not findings:
        return "No findings."
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    warnings = sum(1 for f in findings if f.severity is Severity.WARNING)
    infos = len(findings) - errors - warnings
    files = len({f.file for f in findings})
    counts = f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')}"
    if infos:
        counts += f", {_plural(infos, 'info')}"
    return f"{counts} in {_plural(files, 'file')}."


def finding_lines(finding: Finding, base: Path | None = None, label: str = "") -> list[str]:
    """`file:line:col: ID severity slug: message [key]` (after `label`), and its fix line."""
    f = finding
    key = f" [{f.key}]" if f.key else ""
    where = _where(f, base)
    lines = [f"{label}{where}: {f.rule} {f.severity.value} {f.slug}: {f.message}{key}"]
    if f.hint:
        lines.append(f"    fix: {f.hint}")
    return lines


def render_text(findings: Sequence[Finding], base: Path | None = None) -> str:
    """One line per finding (`file:line:col: ID severity slug: message`), fix hints, then one
    summary line: the counts and, when several rules fired, the most frequent ones."""
    from inferbench.checks.statistics import most_frequent

    lines = [line for f in findings for line in finding_lines(f, base)]
    summary = summary_line(findings)
    rules = len({f.rule for f in findings})
    if 1 < rules < len(findings):  # a rule that fired many times is the first thing to read
        summary += f" Most: {most_frequent(findings)}; --statistics counts every rule."
    lines.append(summary)
    return "\n".join(lines) + "\n"


def finding_dict(finding: Finding, base: Path | None = None) -> dict[str, object]:
    return {
        "rule": finding.rule,
        "slug": finding.slug,
        "severity": finding.severity.value,
        "file": display_path(finding.file, base) or None,
        "line": finding.line,
        "column": finding.column,
        "key": finding.key,
        "message": finding.message,
        "hint": finding.hint,
    }


def render_json(findings: Sequence[Finding], base: Path | None = None) -> str:
    """A JSON list of findings: rule, slug, severity, file, line, column, key, message, hint."""
    return json.dumps([finding_dict(f, base) for f in findings], indent=2) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


# GitHub shows at most 10 annotations of each type per step (50 per job): more are dropped
# silently, so the rest is counted in one summary notice instead
GITHUB_ANNOTATIONS_PER_LEVEL = 10
_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def github_annotation(f: Finding, base: Path | None = None) -> str:
    """One workflow command: `::error file=F,line=L,col=C,title=T::message` (and fix)."""
    props: list[str] = []
    if f.file is not None:
        props.append(f"file={_escape_property(display_path(f.file, base))}")
    if f.line is not None:
        props.append(f"line={f.line}")
    if f.column is not None:
        props.append(f"col={f.column}")
    props.append(f"title={_escape_property(f'{f.rule} {f.slug}')}")
    message = f.message + (f"\nfix: {f.hint}" if f.hint else "")
    return f"::{_GITHUB_LEVEL[f.severity]} {','.join(props)}::{_escape_data(message)}"


def github_notice(text: str) -> str:
    return f"::notice title=inferbench check::{_escape_data(text)}"


def render_github(
    findings: Sequence[Finding],
    base: Path | None = None,
    limit: int = GITHUB_ANNOTATIONS_PER_LEVEL,
) -> str:
    """GitHub Actions workflow commands (`::error file=F,line=L,col=C,title=T::message`), at
    most `limit` per level, then one `::notice` with the summary and what was left out."""
    out: list[str] = []
    shown: dict[Severity, int] = {}
    left_out = 0
    for f in findings:
        if shown.get(f.severity, 0) >= limit:
            left_out += 1
            continue
        shown[f.severity] = shown.get(f.severity, 0) + 1
        out.append(github_annotation(f, base))
    if findings:
        summary = summary_line(findings)
        if left_out:
            summary += (
                f" {left_out} more not annotated (GitHub shows {limit} per level); "
                "run `inferbench check` for the full report."
            )
        out.append(github_notice(summary))
    return "".join(line + "\n" for line in out)


RENDERERS = {"text": render_text, "json": render_json, "github": render_github}
