"""`check --statistics`: how many findings each rule made, ruff-style, most frequent first."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from inferbench.checks.finding import Finding, Severity
from inferbench.checks.render import summary_line

_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@dataclass(frozen=True)
class RuleCount:
    rule: str
    slug: str
    severity: Severity
    count: int


def rule_counts(findings: Sequence[Finding]) -> list[RuleCount]:
    """One entry per (rule, severity), most findings first; ties by severity, then rule id."""
    counts = Counter((f.rule, f.slug, f.severity) for f in findings)
    entries = [RuleCount(rule, slug, sev, n) for (rule, slug, sev), n in counts.items()]
    return sorted(entries, key=lambda c: (-c.count, _SEVERITY_ORDER[c.severity], c.rule))


def most_frequent(findings: Sequence[Finding], most: int = 3) -> str:
    """`IB208 decode-capacity-exceeded (168), ...`: the rules behind most findings."""
    return ", ".join(f"{c.rule} {c.slug} ({c.count})" for c in rule_counts(findings)[:most])


def render_statistics_text(findings: Sequence[Finding], base: Path | None = None) -> str:
    """`count  ID  severity  slug` lines, then the summary line."""
    counts = rule_counts(findings)
    width = max((len(str(c.count)) for c in counts), default=1)
    lines = [f"{c.count:>{width}}  {c.rule:<6} {c.severity.value:<8} {c.slug}" for c in counts]
    lines.append(summary_line(findings))
    return "\n".join(lines) + "\n"


def render_statistics_json(findings: Sequence[Finding], base: Path | None = None) -> str:
    """A JSON list of `{rule, slug, severity, count}`, most frequent first."""
    rows = [
        {"rule": c.rule, "slug": c.slug, "severity": c.severity.value, "count": c.count}
        for c in rule_counts(findings)
    ]
    return json.dumps(rows, indent=2) + "\n"


STATISTICS_RENDERERS = {"text": render_statistics_text, "json": render_statistics_json}
