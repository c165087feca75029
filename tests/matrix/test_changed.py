import subprocess
from pathlib import Path

import pytest

from inferbench.config.changelog import load_changelog
from inferbench.errors import ConfigError, InputError
from inferbench.matrix.changed import appended_items, base_entry_count, changed_jobs
from inferbench.matrix.filters import SweepFilters

from .masters import CONTEXT, write_masters

FIRST = """\
- config-keys: [dsr1-fp8-h200-vllm]
  description: ["Add DeepSeek-R1 FP8 H200 vLLM"]
  pr-link: https://github.com/example/bench/pull/1
"""
APPENDED = """\
- config-keys: ["minimaxm3-*"]
  description: ["Add MiniMax-M3 NVFP4 B200 Dynamo-vLLM 2P1D DEP2/DEP8 8k1k recipe"]
  pr-link: https://github.com/example/bench/pull/2
- config-keys: [dsr1-fp4-b200-sglang, gptoss-fp4-gb300-agentic]
  description: ["Evals for the SGLang and agentic configs"]
  evals-only: true
  scenario-type: [agentic-coding]
  pr-link: https://github.com/example/bench/pull/3
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write_masters(tmp_path)
    (tmp_path / "perf-changelog.yaml").write_text(FIRST)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    (tmp_path / "perf-changelog.yaml").write_text(FIRST + APPENDED)
    return tmp_path


def _jobs(tree: Path, rev: str = "HEAD", **filters: object) -> list:  # type: ignore[type-arg]
    changelog = load_changelog(tree / "perf-changelog.yaml")
    items = appended_items(tree, changelog, rev)
    masters = write_masters(tree)
    return changed_jobs(items, masters, SweepFilters(**filters), CONTEXT)  # type: ignore[arg-type]


def test_only_appended_entries_are_swept(tree: Path) -> None:
    jobs = _jobs(tree)
    keys = {j.config_key for j in jobs}
    assert keys == {"minimaxm3-fp4-b200-dynamo-vllm", "gptoss-fp4-gb300-agentic"}


def test_entry_flags_evals_only_and_scenario_type(tree: Path) -> None:
    jobs = [j for j in _jobs(tree) if j.config_key == "gptoss-fp4-gb300-agentic"]
    assert jobs and all(j.eval_only and j.run_eval and j.is_agentic for j in jobs)
    # the SGLang key has no agentic scenario: its entry selects nothing for it
    assert not [j for j in _jobs(tree) if j.config_key == "dsr1-fp4-b200-sglang"]


def test_command_line_filters_narrow_the_entries(tree: Path) -> None:
    jobs = _jobs(tree, config_keys=("minimaxm3-*",), max_conc=64)
    assert {j.config_key for j in jobs} == {"minimaxm3-fp4-b200-dynamo-vllm"}
    assert all(max(j.concurrencies) <= 64 for j in jobs)


def test_nothing_new_since_the_working_tree_commit(tree: Path) -> None:
    _git(tree, "commit", "-q", "-am", "append")
    assert _jobs(tree) == []


def test_changelog_absent_at_base_means_everything_is_new(tree: Path) -> None:
    _git(tree, "commit", "-q", "-am", "append")
    first = subprocess.run(
        ["git", "rev-list", "--max-parents=0", "HEAD"], cwd=tree, capture_output=True, text=True
    ).stdout.strip()
    assert base_entry_count(tree, tree / "perf-changelog.yaml", first) == 1
    (tree / "sub").mkdir()
    assert base_entry_count(tree, tree / "sub" / "perf-changelog.yaml", "HEAD") == 0


def test_bad_revision_is_an_input_error(tree: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        _jobs(tree, rev="no-such-branch")


def test_not_a_git_checkout(tmp_path: Path) -> None:
    write_masters(tmp_path)
    (tmp_path / "perf-changelog.yaml").write_text(FIRST)
    with pytest.raises(InputError, match="--changed-since"):
        _jobs(tmp_path)


def test_entry_naming_a_missing_key(tree: Path) -> None:
    text = (tree / "perf-changelog.yaml").read_text()
    text += '- config-keys: [nope-*]\n  description: ["x"]\n'
    (tree / "perf-changelog.yaml").write_text(text)
    with pytest.raises(ConfigError, match="matches no master entry") as info:
        _jobs(tree)
    assert info.value.location.line is not None
