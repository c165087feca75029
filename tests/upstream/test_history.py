"""`sweep` and `sweep --changed-since` equal InferenceX's own tools on its past trees.

The history bundle is cloned into tmp (history_range.py). On 20 commits spread over the range
(2026-08-01 to the bundle's head, 843c625), each commit's own generator (default mode) and
`inferbench sweep` must give the same jobs, field for field; on the changelog commits among
them, the commit's own `process_changelog.py` and `inferbench sweep --changed-since <parent>`
must give the same rows, bucket for bucket, keys included. A commit whose generator refuses its
own tree is left out (none in this range so far). Rows are compared in the format of their
commit (FORMAT_CHANGES; keys a newer processing added are not compared on older commits).
Every commit of the range: benchmarks/history_conformance.py, figures in docs/conformance.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import history_range as history
from .oracles import upstream_tree

pytestmark = [pytest.mark.slow, pytest.mark.integration]

SPREAD = 20


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> history.Clone:
    if not history.BUNDLE.is_file():
        upstream_tree("inferencex-history.bundle")  # skips with the reason
    return history.clone(tmp_path_factory.mktemp("history") / "inferencex")


@pytest.fixture(scope="module")
def commits(repo: history.Clone) -> list[history.Commit]:
    return history.range_commits(repo)


@pytest.fixture(scope="module")
def picked(commits: list[history.Commit]) -> list[history.Commit]:
    return history.spread(commits, SPREAD)


def test_the_range_is_the_one_the_issue_names(
    repo: history.Clone, commits: list[history.Commit], picked: list[history.Commit]
) -> None:
    assert commits[-1].sha == repo.head and commits[-1].upstream.startswith("843c625")
    assert all(c.date >= "2026-07-31" for c in commits) and len(commits) >= 100
    assert all(c.upstream for c in commits), "every commit names its upstream id"
    assert len(picked) == SPREAD and picked[0] == commits[0] and picked[-1] == commits[-1]
    assert sum(c.changelog for c in picked) >= 10
    # each format change lies inside the range, so both sides of it are compared
    ids = {c.upstream for c in commits}
    assert all(change.upstream in ids for change in history.FORMAT_CHANGES)
    older = [c for c in picked if history.older_format(c, commits)]
    assert 0 < len(older) < len(picked)


@pytest.mark.parametrize("position", range(SPREAD))
def test_sweep_equals_that_commits_generator(
    position: int,
    repo: history.Clone,
    commits: list[history.Commit],
    picked: list[history.Commit],
    inferencex_python: Path,
) -> None:
    commit = picked[position]
    outcome = history.compare_sweep(
        repo, commit, inferencex_python, history.older_format(commit, commits)
    )
    if outcome.status == "oracle-refuses":
        pytest.skip(f"{commit.upstream[:9]}: its own generator refuses its tree")
    assert outcome.status == "equal", f"{commit.upstream[:9]} {commit.date}:\n{outcome.detail}"
    assert outcome.jobs > 0


@pytest.mark.parametrize("position", range(SPREAD))
def test_changed_since_equals_that_commits_processing(
    position: int,
    repo: history.Clone,
    commits: list[history.Commit],
    picked: list[history.Commit],
    inferencex_python: Path,
) -> None:
    commit = picked[position]
    if not commit.changelog:
        pytest.skip(f"{commit.upstream[:9]} does not edit the changelog")
    outcome = history.compare_changelog(
        repo, commit, inferencex_python, history.older_format(commit, commits)
    )
    assert outcome.ok, f"{commit.upstream[:9]} {commit.date}: {outcome.status}\n{outcome.detail}"
