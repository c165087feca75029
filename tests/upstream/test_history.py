"""`sweep` and `sweep --changed-since` equal InferenceX's own tools on its past trees.

The history bundle is cloned into tmp (history_range.py). `sweep` (default, `--no-evals`,
`--evals-only`) must give the jobs of that commit's own generator, field for field, on one
commit of each era of InferenceX's formats (ERAS: the runner registry's layout, the master
format, the row format), with inferbench's rows in the format of their commit
(FORMAT_CHANGES; docs/conformance.md lists the mapping). An era whose rows still differ is a
strict xfail naming why, so that fixing it turns the test red until the mark goes. On 20
commits spread over 2026-08-01 .. the bundle's head (843c625), the commit's own
`process_changelog.py` and `inferbench sweep --changed-since <parent>` must give the same rows,
bucket for bucket, keys included; and SAMPLE commits spread over the whole range sweep as
their generator. Every commit: benchmarks/history_conformance.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import history_range as history
from .oracles import upstream_tree

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.upstream]

SPREAD = 20
# besides the eras, this many commits spread over the whole range (2026-04-01 .. 843c625):
# every one the generator accepts must sweep field-equal in the three modes
SAMPLE = 8

# One commit (its upstream id) per era of InferenceX's formats since 2026-04-01, oldest first;
# a reason where inferbench's rows still differ from that era's generator.
ERAS: tuple[tuple[str, str, str], ...] = (
    ("31f066cbb", "flat runners.yaml, .github/configs, seq-len-configs, max-model-len +200", ""),
    ("d0a639eaf", "multinode evals, seq-len-configs", ""),
    ("eb3dfa6b5", "scenarios:, agentic `offloading:` and scenario `duration:`", ""),
    ("dc7695b09", "runners.yaml labels:, configs/, kv-offload-backend: <name>", ""),
    ("f46b4e5b0", "multinode agentic rows in batches of 4, sized DRAM only single-node", ""),
    ("d85fa13fc", "agentic evals (#1947), multinode agentic rows still in batches", ""),
    ("86d7a413d", "agentic evals, before the worker tags carried ep and dpa", ""),
    ("843c6254f", "the bundle's head", ""),
)


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
    recent = [c for c in commits if c.date >= history.CHANGELOG_SINCE[:10]]
    return history.spread(recent, SPREAD)


def test_the_range_is_the_one_the_issue_names(
    repo: history.Clone, commits: list[history.Commit], picked: list[history.Commit]
) -> None:
    assert commits[-1].sha == repo.head and commits[-1].upstream.startswith("843c625")
    assert commits[0].date.startswith("2026-04-01") and len(commits) >= 900
    assert all(c.upstream for c in commits), "every commit names its upstream id"
    assert len(picked) == SPREAD and picked[-1] == commits[-1]
    assert sum(c.changelog for c in picked) >= 10
    # each format change lies inside the range, so both sides of it are compared
    ids = {c.upstream for c in commits}
    assert all(change.upstream in ids for change in history.FORMAT_CHANGES)
    eras = [next(c for c in commits if c.upstream.startswith(e)) for e, _, _ in ERAS]
    assert eras == sorted(eras, key=lambda c: c.index)
    assert len({len(history.older_format(c, commits)) for c in eras}) >= 5


@pytest.mark.parametrize(
    "era",
    [
        pytest.param(e, id=f"{e[0]}-{e[1][:30]}", marks=pytest.mark.xfail(strict=True, reason=e[2]))
        if e[2]
        else pytest.param(e, id=f"{e[0]}-{e[1][:30]}")
        for e in ERAS
    ],
)
def test_sweep_equals_that_commits_generator(
    era: tuple[str, str, str],
    repo: history.Clone,
    commits: list[history.Commit],
    inferencex_python: Path,
) -> None:
    commit = next(c for c in commits if c.upstream.startswith(era[0]))
    outcomes = history.compare_sweep(
        repo,
        commit,
        inferencex_python,
        history.older_format(commit, commits),
        policy=history.older_evals(commit, commits),
    )
    assert [o.mode for o in outcomes] == [mode for mode, _ in history.MODES]
    for outcome in outcomes:
        where = f"{commit.upstream[:9]} {commit.date} {outcome.mode}"
        assert outcome.status == "equal", f"{where}: {outcome.status}\n{outcome.detail}"
        assert outcome.jobs > 0


@pytest.mark.parametrize("position", range(SAMPLE))
def test_a_spread_of_commits_sweeps_as_their_generator(
    position: int,
    repo: history.Clone,
    commits: list[history.Commit],
    inferencex_python: Path,
) -> None:
    """A commit the generator refuses is refused or swept by inferbench (its findings are
    `check`'s); one it accepts is field-equal, as emitted or through FORMAT_CHANGES."""
    commit = history.spread(commits, SAMPLE)[position]
    outcomes = history.compare_sweep(
        repo,
        commit,
        inferencex_python,
        history.older_format(commit, commits),
        policy=history.older_evals(commit, commits),
    )
    for outcome in outcomes:
        where = f"{commit.upstream[:9]} {commit.date} {outcome.mode}"
        assert outcome.ok, f"{where}: {outcome.status}\n{outcome.detail}"


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
