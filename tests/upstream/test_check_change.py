"""`inferbench check --base master` on a pull request to the real InferenceX tree judges the
change: the contributor's own defects fail it and are annotated on the files they changed;
the tree's old findings are only counted.

A git copy of `../shared/upstream/inferencex` is committed as `master`; branch `planted` adds
the seed's kind of change (`seed_change.py`: a Dynamo-vLLM 2P1D B200 master entry, its
srt-slurm recipe and a changelog entry) with three planted defects, branch `fixed` the same
change without them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from inferbench.cli.main import main

from .seed_change import PLANTED, RECIPE, apply_seed_change, recipe_text


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str


def _check(tree: Path, *args: str) -> Ran:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["check", str(tree), *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return Ran(code, out.getvalue(), err.getvalue())


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


def _writable(tree: Path) -> None:
    for folder, _, files in os.walk(tree):
        for name in [".", *files]:
            path = Path(folder, name)
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR)


@dataclass(frozen=True)
class PullRequest:
    master: Path  # the repository, master checked out
    planted: Path  # a worktree of branch `planted`
    fixed: Path  # a worktree of branch `fixed`
    changed: tuple[str, ...]  # the files the branches change


@pytest.fixture(scope="module")
def pull_request(inferencex_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> PullRequest:
    root = tmp_path_factory.mktemp("check-change")
    repo = root / "inferencex"
    shutil.copytree(inferencex_tree, repo, symlinks=True)
    _writable(repo)
    git(repo, "init", "-q", "-b", "master")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "master")
    trees = {}
    for branch, planted in (("planted", True), ("fixed", False)):
        tree = root / branch
        git(repo, "worktree", "add", "-q", "-b", branch, str(tree), "master")
        changed = apply_seed_change(tree, planted=planted)
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "-m", f"seed change ({branch})")
        trees[branch] = tree
    return PullRequest(repo, trees["planted"], trees["fixed"], tuple(changed))


def _annotations(out: str) -> list[tuple[str, str, int, str]]:
    """(level, file, line, title) of each `::error`/`::warning` annotation."""
    found = []
    for line in out.splitlines():
        match = re.match(r"::(error|warning|notice) ([^:]*)::", line)
        assert match, line
        props = dict(p.split("=", 1) for p in match.group(2).split(","))
        if match.group(1) == "notice" and "file" not in props:
            continue  # the closing summary
        found.append((match.group(1), props["file"], int(props["line"]), props["title"]))
    return found


def test_master_without_a_change_passes(pull_request: PullRequest) -> None:
    ran = _check(pull_request.master, "--base", "master")
    assert ran.code == 0, ran.out
    assert re.fullmatch(r"0 new errors, 0 fixed against master; \d+ pre-existing not shown: "
                        r"--all\n", ran.out)  # fmt: skip
    assert _check(pull_request.master, "--base", "master", "--fail-on", "any").code == 1


def test_the_planted_defects_fail_and_are_annotated_on_the_changed_files(
    pull_request: PullRequest,
) -> None:
    ran = _check(pull_request.planted, "--base", "master", "--format", "github")
    assert ran.code == 1
    annotations = _annotations(ran.out)
    assert annotations and all(file in pull_request.changed for _, file, _, _ in annotations)
    lines = recipe_text(planted=True).splitlines()
    planted_at = {
        key: next(i for i, text in enumerate(lines, 1) if text.strip() == bad)
        for _, bad, key in PLANTED
    }
    on_recipe = {(line, title.split()[0]) for level, file, line, title in annotations
                 if file == RECIPE and level == "error"}  # fmt: skip
    assert (planted_at["model.path"], "IB401") in on_recipe  # alias the cluster lacks
    assert (planted_at["resources.prefill_workers"], "IB303") in on_recipe  # 3 against 2
    assert (planted_at["benchmark.concurrencies"], "IB307") in on_recipe  # 4096 against 2048
    # every new error is one of the planted lines: the change's own, nothing of the tree's
    assert {line for line, _ in on_recipe} == set(planted_at.values())
    summary = ran.out.splitlines()[-1]
    assert re.match(r"::notice title=inferbench check::\d+ new errors?, .*0 fixed against "
                    r"master; \d+ pre-existing, not annotated", summary)  # fmt: skip


def test_the_same_change_without_the_defects_passes(pull_request: PullRequest) -> None:
    ran = _check(pull_request.fixed, "--base", "master", "--format", "json")
    assert ran.code == 0, ran.out
    assert [r for r in json.loads(ran.out) if r["severity"] == "error"] == []


def test_a_recorded_baseline_judges_the_change_as_git_does(
    pull_request: PullRequest, tmp_path: Path
) -> None:
    baseline = tmp_path / "master.json"
    assert _check(pull_request.master, "--write-baseline", str(baseline)).code == 0
    by_file = _check(pull_request.planted, "--baseline", str(baseline), "--format", "json")
    by_git = _check(pull_request.planted, "--base", "master", "--format", "json")
    assert by_file.code == by_git.code == 1

    def new(out: str) -> list[str]:
        # the changelog rules need git (IB503: changed since the base): those only by_git has
        return sorted(r["fingerprint"] for r in json.loads(out) if not r["rule"].startswith("IB5"))

    assert new(by_file.out) == new(by_git.out)
