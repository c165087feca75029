"""A recorded set of findings (`check --write-baseline FILE`), to judge a change against
(`check --baseline FILE`) where no git base exists: a CI job without history, a tarball.

The file is versioned JSON: `format` and `version` say what it is, `inferbench` which version
wrote it, `select`/`ignore` which rules ran (a baseline only judges a run of the same rules),
and `findings` each finding's identity (`checks.identity`) with what a reader needs to see it
again as fixed: severity, slug, message and line. It is written atomically, and writing the
same findings again gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from inferbench import __version__
from inferbench.checks.finding import Finding, Severity
from inferbench.checks.identity import FindingIdentity, identity_of
from inferbench.checks.report import CheckOptions, CheckReport
from inferbench.core.errors import InputError, Location
from inferbench.core.fsio import write_output
from inferbench.core.fsread import MAX_RUN_FILE_BYTES, read_file
from inferbench.core.model import FrozenModel

FORMAT = "inferbench-check-baseline"
VERSION = 1


class RecordedFinding(FrozenModel):
    """One finding as a baseline keeps it: its identity, and how to show it again."""

    rule: str
    slug: str
    severity: Severity
    file: str  # tree-relative ("" for the whole tree)
    key: str = ""
    values: tuple[str, ...] = ()
    message: str
    line: int | None = None

    @property
    def identity(self) -> FindingIdentity:
        return FindingIdentity(self.rule, self.file, self.key, self.values)

    @classmethod
    def of(cls, finding: Finding, root: Path, sources: Sequence[Path] = ()) -> RecordedFinding:
        ident = identity_of(finding, root, sources)
        return cls(
            rule=finding.rule,
            slug=finding.slug,
            severity=finding.severity,
            file=ident.file,
            key=ident.key,
            values=ident.values,
            message=finding.message,
            line=finding.line,
        )


class Baseline(FrozenModel):
    """The findings of one check of a tree, by identity."""

    format: Literal["inferbench-check-baseline"] = "inferbench-check-baseline"
    version: Literal[1] = 1
    inferbench: str = __version__
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    findings: tuple[RecordedFinding, ...] = ()

    @classmethod
    def of(cls, report: CheckReport, options: CheckOptions) -> Baseline:
        sources = options.srt_slurm_paths
        recorded = (RecordedFinding.of(f, report.root, sources) for f in report.findings)
        return cls(
            select=options.select,
            ignore=options.ignore,
            findings=tuple(sorted(recorded, key=_order)),
        )

    def check_options(self, options: CheckOptions, path: Path) -> None:
        """Refuse to judge a run of other rules than the recorded one: every finding of a
        rule the baseline did not run would read as new."""
        if (self.select, self.ignore) != (options.select, options.ignore):
            recorded = _describe(self.select, self.ignore)
            raise InputError(
                f"the baseline was recorded with {recorded}, this run has "
                f"{_describe(options.select, options.ignore)}",
                location=Location(path),
                hint="pass the same --select/--ignore, or record the baseline again",
            )


def _order(f: RecordedFinding) -> tuple[str, str, str, tuple[str, ...], int]:
    return (f.file, f.key, f.rule, f.values, f.line or 0)


def _describe(select: Sequence[str], ignore: Sequence[str]) -> str:
    parts = [f"--select {','.join(select)}"] if select else []
    parts += [f"--ignore {','.join(ignore)}"] if ignore else []
    return " ".join(parts) or "every rule"


def write_baseline(path: Path, baseline: Baseline) -> None:
    """Write `baseline` to `path` atomically (a reader never sees half a file)."""
    text = json.dumps(baseline.model_dump(mode="json"), indent=1, ensure_ascii=False)
    write_output(path, (text + "\n").encode(), option="--write-baseline")


def read_baseline(path: Path) -> Baseline:
    """The baseline in `path`; InputError (file, key, fix) when it is not one."""
    data = read_file(path, MAX_RUN_FILE_BYTES, what="baseline", option="--baseline")
    try:
        raw = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            f"not a JSON baseline: {exc}",
            location=Location(path),
            hint="record one with `inferbench check --write-baseline FILE`",
        ) from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise InputError(
            f'not an inferbench check baseline (no "format": "{FORMAT}")',
            location=Location(path, key="format"),
            hint="record one with `inferbench check --write-baseline FILE`",
        )
    if raw.get("version") != VERSION:
        raise InputError(
            f"baseline version {raw.get('version')!r} is not one this inferbench reads ({VERSION})",
            location=Location(path, key="version"),
            hint="record the baseline again with this inferbench",
        )
    try:
        return Baseline.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise InputError(
            f"invalid baseline: {err['msg']}",
            location=Location(path, key=key),
            hint="record the baseline again with `inferbench check --write-baseline FILE`",
        ) from None
