"""`inferbench sweep --changed-since REV` selects what InferenceX's CI selects for REV..HEAD.

A throwaway git history of the real tree (history.py, cases in changelog_cases.py) is built
once; for each case the head is checked out, `inferbench sweep --changed-since BASE --format
json` runs on it, and InferenceX's `utils/process_changelog.py` runs on the same range in its
oracle venv (changelog_driver.py). inferbench's rows are put into the processing's buckets and
through its own output model, so the two outputs compare key for key: the same benchmark rows
(with their recipe-fingerprint), the same eval rows (agentic ones included), in the same order.
Where the processing refuses a range, inferbench exits 2 with a message.
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
from inferbench.matrix.job import INFERBENCH_KEYS

from .changelog_cases import CASES
from .history import build, git

pytestmark = pytest.mark.slow
DRIVER = Path(__file__).resolve().parent / "changelog_driver.py"


@dataclass(frozen=True)
class Outcome:
    rc: int
    out: str
    err: str
    oracle: dict[str, Any]


def _inferbench(repo: Path, base: str, flags: tuple[str, ...]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(
                ["sweep", "--root", str(repo), "--format", "json", "--changed-since", base, *flags]
            )
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    return rc, out.getvalue(), err.getvalue()


def _row(job: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in job.items() if key not in INFERBENCH_KEYS}


@pytest.fixture(scope="module")
def outcomes(
    inferencex_tree: Path, inferencex_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Outcome]:
    history = build(inferencex_tree, tmp_path_factory.mktemp("history") / "inferencex", CASES)
    ours: dict[str, tuple[int, str, str]] = {}
    calls = []
    for case in CASES:
        git(history.repo, "checkout", "-q", "--detach", history.heads[case.id])
        ours[case.id] = rc, out, _ = _inferbench(history.repo, history.base, case.flags)
        # inferbench's own keys off: the processing's output model forbids unknown keys
        rows = [_row(job) for job in json.loads(out)] if rc == 0 else None
        calls.append(
            {"base": history.base, "head": history.heads[case.id], "args": list(case.flags),
             "rows": rows}
        )  # fmt: skip
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
        case.id: Outcome(*ours[case.id], oracle=answer)
        for case, answer in zip(CASES, answers, strict=True)
    }


def test_the_history_has_the_cases_the_issue_asks_for() -> None:
    assert len(CASES) >= 10
    assert sum(case.rejected for case in CASES) >= 2  # edits to old entries among them
    assert any(len(case.commits) > 1 for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_changed_since_selects_what_inferencex_selects(
    case: Any, outcomes: dict[str, Outcome]
) -> None:
    got = outcomes[case.id]
    oracle = got.oracle
    if case.rejected:
        assert oracle["rc"] != 0, (
            f"InferenceX accepted a range the case calls rejected ({case.note})"
        )
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


def _first_difference(bucket: str, expected: Any, got: Any) -> str:
    if isinstance(expected, dict) and isinstance(got, dict):
        for name in sorted(set(expected) | set(got)):
            if expected.get(name) != got.get(name):
                return _first_difference(f"{bucket}/{name}", expected.get(name), got.get(name))
    if isinstance(expected, list) and isinstance(got, list):
        head = f"{bucket}: InferenceX {len(expected)} rows, inferbench {len(got)}"
        for i, (a, b) in enumerate(zip(expected, got, strict=False)):
            if a != b:
                return f"{head}; row {i} differs:\n  InferenceX {a}\n  inferbench {b}"
        return head
    return f"{bucket}: InferenceX {expected!r}, inferbench {got!r}"
