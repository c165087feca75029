"""`inferbench sweep --changed-since REV` selects what InferenceX's CI selects for REV..HEAD,
and `inferbench check --base REV` agrees with InferenceX's changelog validator.

A throwaway git history of the real tree (history.py, cases in changelog_cases.py) is built
once; for each case the head is checked out, `inferbench sweep --changed-since BASE --format
json` runs on it, and InferenceX's `utils/process_changelog.py` runs on the same range in its
oracle venv (changelog_driver.py). inferbench's rows are put into the processing's buckets and
checked by its own output model (no unknown key), then compared as they are with the
processing's output, keys included: the same benchmark rows (with their recipe-fingerprint),
the same eval rows (agentic ones included), in the same order, each with every key the
processing writes (`eval-all-concs: false`, `additional-settings: []`, ...; a default the
output model would fill in does not count). `--format github` is held against the
processing's output as it is: its buckets, chunks joined, must equal the processing's bucket
for bucket (the eval rows in `evals`, `agentic_evals`, `multinode_evals`,
`multinode_agentic_evals`).
Where the processing refuses a range, inferbench exits 2 with a message. For the CHECKED cases,
`check --base` (changelog rules) is held against `utils/validate_perf_changelog.py`.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from inferbench.cli.main import main
from inferbench.core.job import INFERBENCH_KEYS

from .changelog_cases import CASES, CHECKED
from .history import Case, build, git

pytestmark = pytest.mark.slow
DRIVER = Path(__file__).resolve().parent / "changelog_driver.py"
CHANGELOG_RULES = "IB501,IB502,IB503,IB504"


@dataclass(frozen=True)
class Outcome:
    rc: int
    out: str
    err: str
    oracle: dict[str, Any]
    findings: list[dict[str, Any]] | None  # `check --base` changelog findings (CHECKED cases)
    github: dict[str, Any] | None = None  # `--format github` through the processing's model


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    return rc, out.getvalue(), err.getvalue()


def _check(repo: Path, base: str) -> list[dict[str, Any]]:
    args = ("check", str(repo), "--base", base, "--select", CHANGELOG_RULES, "--format", "json")
    rc, out, err = _cli(*args)
    assert rc in (0, 1), err
    findings = json.loads(out)
    assert isinstance(findings, list)
    return findings


def _row(job: dict[str, Any]) -> dict[str, Any]:
    """inferbench's own keys off: the processing's output model forbids unknown keys."""
    return {key: value for key, value in job.items() if key not in INFERBENCH_KEYS}


@pytest.fixture(scope="module")
def outcomes(
    inferencex_tree: Path, inferencex_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Outcome]:
    history = build(inferencex_tree, tmp_path_factory.mktemp("history") / "inferencex", CASES)
    ours: dict[str, tuple[int, str, str]] = {}
    findings: dict[str, list[dict[str, Any]]] = {}
    calls = []
    for case in CASES:
        head = history.heads[case.id]
        git(history.repo, "checkout", "-q", "--detach", head)
        sweep = ("sweep", "--root", str(history.repo), "--format", "json")
        ours[case.id] = rc, out, _ = _cli(*sweep, "--changed-since", history.base, *case.flags)
        if case.id in CHECKED:
            findings[case.id] = _check(history.repo, history.base)
        rows = [_row(job) for job in json.loads(out)] if rc == 0 else None
        buckets = None
        if rc == 0:
            code, text, err = _cli(
                *sweep[:-1], "github", "--changed-since", history.base, *case.flags
            )
            assert code == 0, err
            buckets = _unchunked(json.loads(text))
        calls.append(
            {
                "base": history.base,
                "head": head,
                "args": list(case.flags),
                "rows": rows,
                "buckets": buckets,
                "validate": case.id in CHECKED,
            }
        )
    done = subprocess.run(
        [str(inferencex_python), str(DRIVER), str(history.repo)],
        input=json.dumps(calls),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    answers = json.loads(done.stdout)
    return {
        case.id: Outcome(
            *ours[case.id],
            oracle=answer,
            findings=findings.get(case.id),
            github=answer.get("buckets_out"),
        )
        for case, answer in zip(CASES, answers, strict=True)
    }


def _unchunked(matrix: dict[str, Any]) -> dict[str, Any]:
    """`--format github`'s buckets with their chunks joined and inferbench's own keys off
    (`total` and `chunk-size` are inferbench's too)."""

    def rows(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [_row(job) for chunk in chunks for job in chunk["config"]]

    out: dict[str, Any] = {}
    for key, value in matrix.items():
        if key in ("single_node", "multi_node"):
            out[key] = {name: rows(chunks) for name, chunks in value.items()}
        elif key not in ("total", "chunk-size"):
            out[key] = rows(value)
    return out


def test_the_history_has_the_cases_the_issue_asks_for() -> None:
    assert len(CASES) >= 10
    assert sum(case.rejected for case in CASES) >= 2  # edits to old entries among them
    assert any(len(case.commits) > 1 for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_changed_since_selects_what_inferencex_selects(
    case: Case, outcomes: dict[str, Outcome]
) -> None:
    got = outcomes[case.id]
    oracle = got.oracle
    if case.rejected:
        assert oracle["rc"] != 0, "InferenceX accepted a range the case calls rejected"
        assert got.rc == 2, f"inferbench exited {got.rc}: {got.err[-2000:]}"
        assert "Traceback" not in got.err and "perf-changelog.yaml" in got.err
        return
    assert oracle["rc"] == 0, oracle["error"][-3000:]
    assert got.rc == 0, got.err[-3000:]
    expected, ours = oracle["matrix"], oracle["other"]
    assert ours is not None
    for bucket in sorted(set(expected) | set(ours)):
        assert ours.get(bucket) == expected.get(bucket), _first_difference(
            bucket, expected.get(bucket), ours.get(bucket)
        )
    assert any(expected[k] for k in expected if k != "changelog_metadata"), "empty case"


@pytest.mark.parametrize("case", [c for c in CASES if not c.rejected], ids=lambda c: c.id)
def test_github_format_splits_as_inferencex_does(case: Case, outcomes: dict[str, Outcome]) -> None:
    """`sweep --changed-since --format github` has the processing's buckets, row for row."""
    got = outcomes[case.id]
    expected, ours = got.oracle["matrix"], got.github
    assert expected is not None and ours is not None
    for bucket in sorted(set(expected) | set(ours)):
        assert ours.get(bucket) == expected.get(bucket), _first_difference(
            bucket, expected.get(bucket), ours.get(bucket)
        )


@pytest.mark.parametrize("case_id", sorted(CHECKED))
def test_check_base_agrees_with_inferencex_validator(
    case_id: str, outcomes: dict[str, Outcome]
) -> None:
    """`check --base` calls no changelog change an error that InferenceX's own validator
    accepts, and finds an error in every change it refuses."""
    got = outcomes[case_id]
    assert got.findings is not None
    errors = [f for f in got.findings if f["severity"] == "error"]
    if got.oracle["validated"] == 0:
        assert not errors, f"InferenceX's validator accepts this change; inferbench: {errors}"
    else:
        why = got.oracle["validation"][-300:]
        assert errors, f"InferenceX's validator refuses it ({why}); inferbench finds no error"


def _first_difference(bucket: str, expected: Any, got: Any) -> str:
    if isinstance(expected, dict) and isinstance(got, dict):
        for name in sorted(set(expected) | set(got)):
            if expected.get(name) != got.get(name):
                return _first_difference(f"{bucket}/{name}", expected.get(name), got.get(name))
    if isinstance(expected, list) and isinstance(got, list):
        head = f"{bucket}: InferenceX {len(expected)} rows, inferbench {len(got)}"
        for i, (a, b) in enumerate(zip(expected, got, strict=False)):
            if a != b:
                return f"{head}; row {i} differs: {_row_difference(a, b)}"
        return head
    return f"{bucket}: InferenceX {expected!r}, inferbench {got!r}"


def _row_difference(expected: Any, got: Any) -> str:
    if not (isinstance(expected, dict) and isinstance(got, dict)):
        return f"InferenceX {expected!r}, inferbench {got!r}"
    parts = [f"key {k!r} only in InferenceX ({expected[k]!r})" for k in expected if k not in got]
    parts += [f"key {k!r} only in inferbench ({got[k]!r})" for k in got if k not in expected]
    parts += [
        f"{k}: InferenceX {expected[k]!r}, inferbench {got[k]!r}"
        for k in expected
        if k in got and expected[k] != got[k]
    ]
    return "; ".join(parts)
