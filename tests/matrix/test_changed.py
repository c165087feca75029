import subprocess
from pathlib import Path

import pytest

from inferbench.config.changelog_diff import added_entries, added_lines
from inferbench.core.errors import ConfigError, InputError
from inferbench.matrix.changed import ChangelogRun, changed_jobs
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


def _jobs(
    tree: Path, rev: str = "HEAD", run: ChangelogRun | None = None, **filters: object
) -> list:  # type: ignore[type-arg]
    items = added_entries(tree, tree / "perf-changelog.yaml", rev)
    masters = write_masters(tree)
    return changed_jobs(
        items,
        masters,
        SweepFilters(**filters),
        CONTEXT,
        run=run or ChangelogRun(),  # type: ignore[arg-type]
    )


def test_only_added_entries_are_swept(tree: Path) -> None:
    jobs = _jobs(tree)
    keys = {j.config_key for j in jobs}
    assert keys == {"minimaxm3-fp4-b200-dynamo-vllm", "gptoss-fp4-gb300-agentic"}
    bench = [j for j in jobs if not j.eval_only]
    # benchmark rows come first, unmarked, stamped with InferenceX's recipe fingerprint
    assert jobs[: len(bench)] == bench and all(j.recipe_fingerprint for j in bench)
    assert all(not j.run_eval for j in bench)


def test_entry_flags_evals_only_and_scenario_type(tree: Path) -> None:
    jobs = [j for j in _jobs(tree) if j.config_key == "gptoss-fp4-gb300-agentic"]
    # evals-only: no benchmark rows, only the agentic eval rows
    assert jobs and all(j.eval_only and j.run_eval and j.is_agentic for j in jobs)
    # the SGLang key has no agentic scenario: its entry selects nothing for it
    assert not [j for j in _jobs(tree) if j.config_key == "dsr1-fp4-b200-sglang"]


def test_run_wide_evals_only_and_no_evals(tree: Path) -> None:
    assert all(j.eval_only for j in _jobs(tree, run=ChangelogRun(evals_only=True)))
    assert not any(j.eval_only for j in _jobs(tree, run=ChangelogRun(no_evals=True)))


def test_command_line_filters_narrow_the_entries(tree: Path) -> None:
    jobs = _jobs(tree, config_keys=("minimaxm3-*",), max_conc=64)
    assert {j.config_key for j in jobs} == {"minimaxm3-fp4-b200-dynamo-vllm"}
    assert all(max(j.concurrencies) <= 64 for j in jobs)


def test_no_added_lines_is_an_error(tree: Path) -> None:
    _git(tree, "commit", "-q", "-am", "append")
    with pytest.raises(ConfigError, match="adds no lines"):
        _jobs(tree)


def test_changelog_absent_at_base_means_everything_is_new(tree: Path) -> None:
    _git(tree, "commit", "-q", "-am", "append")
    first = subprocess.run(
        ["git", "rev-list", "--max-parents=0", "HEAD"], cwd=tree, capture_output=True, text=True
    ).stdout.strip()
    assert len(added_entries(tree, tree / "perf-changelog.yaml", first)) == 2
    (tree / "sub").mkdir()
    (tree / "sub" / "perf-changelog.yaml").write_text(FIRST)
    added = added_lines(tree, tree / "sub" / "perf-changelog.yaml", "HEAD")
    assert added.lines == (1, 2, 3)


def test_an_entry_inserted_between_old_ones_counts(tree: Path) -> None:
    _git(tree, "commit", "-q", "-am", "append")
    new = '- config-keys: [dsr1-fp4-b200-sglang]\n  description: ["x"]\n  pr-link: u\n'
    (tree / "perf-changelog.yaml").write_text(FIRST + new + APPENDED)
    (item,) = added_entries(tree, tree / "perf-changelog.yaml", "HEAD")
    assert item.entry.config_keys == ("dsr1-fp4-b200-sglang",) and item.line == 4
    assert {j.config_key for j in _jobs(tree)} == {"dsr1-fp4-b200-sglang"}


def test_an_edited_old_entry_refuses_the_range(tree: Path) -> None:
    (tree / "perf-changelog.yaml").write_text(FIRST.replace("pull/1", "pull/7") + APPENDED)
    with pytest.raises(ConfigError, match="append-only"):
        _jobs(tree)


def test_a_line_added_inside_an_old_entry_is_no_entry(tree: Path) -> None:
    _git(tree, "commit", "-q", "-am", "append")
    text = (tree / "perf-changelog.yaml").read_text()
    text = text.replace(
        "  pr-link: https://github.com/example/bench/pull/1\n",
        "  pr-link: https://github.com/example/bench/pull/1\n  evals-only: true\n",
    )
    (tree / "perf-changelog.yaml").write_text(text)
    with pytest.raises(ConfigError) as info:
        _jobs(tree)
    assert info.value.location.line == 4


def test_a_key_two_entries_name_is_swept_once(tree: Path) -> None:
    again = '- config-keys: ["minimaxm3-*"]\n  description: ["again"]\n  pr-link: u\n'
    with (tree / "perf-changelog.yaml").open("a") as handle:
        handle.write(again)
    once = [j for j in _jobs(tree) if j.config_key.startswith("minimaxm3")]
    _git(tree, "checkout", "-q", "--", "perf-changelog.yaml")
    (tree / "perf-changelog.yaml").write_text(FIRST + APPENDED)
    assert once == [j for j in _jobs(tree) if j.config_key.startswith("minimaxm3")]


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
    text += '- config-keys: [nope-*]\n  description: ["x"]\n  pr-link: u\n'
    (tree / "perf-changelog.yaml").write_text(text)
    with pytest.raises(ConfigError, match="matches no master entry") as info:
        _jobs(tree)
    assert info.value.location.line == len(FIRST.splitlines()) + len(APPENDED.splitlines()) + 1
