"""Renderers and the rule registry, on hand-made findings and rules."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from inferbench.checks.finding import Finding, Severity
from inferbench.checks.registry import Problem, Rule, all_rules, run_rule, select_rules
from inferbench.checks.render import render_github, render_json, render_text
from inferbench.core.errors import InputError, Location

F1 = Finding(
    "IB201", "config-file-missing", Severity.ERROR, "CONFIG_FILE x.yaml does not exist",
    Path("/t/configs/m.yaml"), 12, 7, "k.scenarios", "fix the path",
)  # fmt: skip
F2 = Finding("IB205", "x-y", Severity.WARNING, "a, b: c%\nd", Path("/t/r,1.yaml"), 3, None)


def test_text_report_has_location_rule_hint_and_summary() -> None:
    text = render_text([F1, F2], base=Path("/t"))
    assert "configs/m.yaml:12:7: IB201 error config-file-missing: CONFIG_FILE" in text
    assert "    fix: fix the path" in text
    assert text.rstrip().endswith("1 error, 1 warning in 2 files.")
    assert render_text([]) == "No findings.\n"


def test_json_is_a_list_of_findings() -> None:
    data = json.loads(render_json([F1, F2], base=Path("/t")))
    assert data[0] == {
        "rule": "IB201",
        "slug": "config-file-missing",
        "severity": "error",
        "file": "configs/m.yaml",
        "line": 12,
        "column": 7,
        "key": "k.scenarios",
        "message": "CONFIG_FILE x.yaml does not exist",
        "hint": "fix the path",
    }
    assert data[1]["column"] is None and data[1]["hint"] is None


def test_github_annotations_are_escaped() -> None:
    lines = render_github([F1, F2], base=Path("/t")).splitlines()
    assert lines[0] == (
        "::error file=configs/m.yaml,line=12,col=7,title=IB201 config-file-missing::"
        "CONFIG_FILE x.yaml does not exist%0Afix: fix the path"
    )
    assert lines[1] == "::warning file=r%2C1.yaml,line=3,title=IB205 x-y::a, b: c%25%0Ad"
    assert lines[2] == "::notice title=inferbench check::1 error, 1 warning in 2 files."


def test_github_annotations_are_capped_with_a_summary() -> None:
    many = [replace(F1, line=n) for n in range(1, 26)] + [replace(F2, line=n) for n in range(3)]
    lines = render_github(many, base=Path("/t"), limit=10).splitlines()
    assert sum(line.startswith("::error ") for line in lines) == 10
    assert sum(line.startswith("::warning ") for line in lines) == 3
    assert lines[-1] == (
        "::notice title=inferbench check::25 errors, 3 warnings in 2 files. 15 more not "
        "annotated (GitHub shows 10 per level); run `inferbench check` for the full report."
    )
    assert render_github([]) == ""


class Boom:
    pass


def _explode(subject: Boom) -> Iterator[Problem]:
    yield Problem("first")
    raise KeyError("odd input")


def test_a_crashing_rule_becomes_an_internal_finding() -> None:
    bad = Rule("IB999", "explodes", Severity.WARNING, "t", Boom, _explode, "fix it")
    where = Location(Path("/t/r.yaml"), 1, 1)
    (finding,) = run_rule(bad, Boom(), where)
    assert finding.rule == "IB000" and finding.slug == "internal-error"
    assert finding.severity is Severity.ERROR and finding.file == Path("/t/r.yaml")
    assert "IB999 explodes crashed: KeyError" in finding.message


def test_rule_ids_and_slugs_are_unique_and_well_formed() -> None:
    rules = all_rules()
    assert len({r.id for r in rules}) == len(rules) == len({r.slug for r in rules})
    for r in rules:
        assert len(r.id) == 5 and r.id.startswith("IB") and r.id[2:].isdigit(), r.id
        assert r.slug == r.slug.lower() and " " not in r.slug
        assert r.title


def test_select_and_ignore_by_id_prefix_and_slug() -> None:
    rules = all_rules()
    some = rules[0]
    assert select_rules(rules, select=[some.id]) == [some]
    assert select_rules(rules, select=[some.slug]) == [some]
    assert some not in select_rules(rules, ignore=[some.slug])
    prefix = some.id[:3]
    assert all(r.id.startswith(prefix) for r in select_rules(rules, select=[prefix]))
    with pytest.raises(InputError, match="unknown rule"):
        select_rules(rules, select=["IB9999-nope"])


def test_statistics_count_each_rule_most_first() -> None:
    from inferbench.checks.statistics import render_statistics_json, render_statistics_text

    many = [replace(F2, line=n) for n in range(12)] + [F1]
    text = render_statistics_text(many).splitlines()
    assert text == [
        "12  IB205  warning  x-y",
        " 1  IB201  error    config-file-missing",
        "1 error, 12 warnings in 2 files.",
    ]
    assert json.loads(render_statistics_json(many)) == [
        {"rule": "IB205", "slug": "x-y", "severity": "warning", "count": 12},
        {"rule": "IB201", "slug": "config-file-missing", "severity": "error", "count": 1},
    ]
    assert render_statistics_text([]) == "No findings.\n"
    # the default report's summary names the rules behind most findings
    summary = render_text(many, base=Path("/t")).splitlines()[-1]
    assert summary == (
        "1 error, 12 warnings in 2 files. Most: IB205 x-y (12), IB201 config-file-missing (1);"
        " --statistics counts every rule."
    )
