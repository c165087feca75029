"""`check --base` / `--baseline` judge the change: new, fixed and pre-existing findings by a
stable identity (rule, file, key path, named values; never a line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inferbench.checks.baseline import Baseline, read_baseline, write_baseline
from inferbench.checks.delta import check_change
from inferbench.checks.engine import check_tree
from inferbench.checks.identity import file_label, message_values
from inferbench.checks.report import CheckOptions, FailOn
from inferbench.config.gitbase import export_tree
from inferbench.core.errors import InputError

from .treeutil import RECIPE, edit, git

BASE = CheckOptions(base="main", select=("IB3",))


@pytest.fixture()
def debt(repo: Path) -> Path:
    """The example tree under git, its base commit already holding one defect (IB307: the
    recipe benchmarks 1024 where its entry says 2048)."""
    bench = repo / "bench"
    edit(bench, RECIPE, 'concurrencies: "2048"', 'concurrencies: "1024"')
    git(repo, "commit", "-qam", "a defect the tree already has")
    return bench


def _rules(findings: object) -> list[tuple[str, str]]:
    return [(f.rule, f.message.split(" differ")[0]) for f in findings]  # type: ignore[attr-defined]


def test_an_unchanged_tree_has_nothing_new(debt: Path) -> None:
    report, delta = check_change(debt, BASE)
    assert _rules(delta.preexisting) == [("IB307", "recipe concurrencies [1024]")]
    assert (delta.new, delta.fixed) == ((), ())
    assert delta.exit_code(report, strict=False, fail_on=FailOn.NEW) == 0
    assert delta.exit_code(report, strict=False, fail_on=FailOn.ANY) == 1  # today's gate


def test_moving_a_block_does_not_make_its_findings_new(debt: Path) -> None:
    before = check_tree(debt, CheckOptions(select=("IB3",))).findings[0].line
    recipe = debt / RECIPE
    text = recipe.read_text()
    start = text.index("benchmark:")
    # the benchmark block moves to the top, under three new comment lines
    recipe.write_text("# moved\n#\n#\n" + text[start:] + text[:start])
    report, delta = check_change(debt, BASE)
    assert report.findings[0].line != before
    assert _rules(delta.preexisting) == [("IB307", "recipe concurrencies [1024]")]
    assert (delta.new, delta.fixed) == ((), ())


def test_a_changed_value_is_new_and_the_old_one_fixed(debt: Path) -> None:
    edit(debt, RECIPE, 'concurrencies: "1024"', 'concurrencies: "512"')
    report, delta = check_change(debt, BASE)
    assert _rules(delta.new) == [("IB307", "recipe concurrencies [512]")]
    assert [(r.rule, r.values[0]) for r in delta.fixed] == [("IB307", "[1024]")]
    assert delta.exit_code(report, strict=False, fail_on=FailOn.NEW) == 1


def test_a_fixed_defect_is_counted_and_passes(debt: Path) -> None:
    edit(debt, RECIPE, 'concurrencies: "1024"', 'concurrencies: "2048"')
    report, delta = check_change(debt, BASE)
    assert (delta.new, delta.preexisting, len(delta.fixed)) == ((), (), 1)
    assert delta.changed == frozenset({(debt / RECIPE).resolve()})
    assert delta.exit_code(report, strict=True, fail_on=FailOn.NEW) == 0


def test_a_baseline_file_judges_as_the_git_base_does(debt: Path, tmp_path: Path) -> None:
    recorded = Baseline.of(check_tree(debt, CheckOptions(select=("IB3",))), BASE)
    path = tmp_path / "out" / "baseline.json"
    write_baseline(path, recorded)
    first = path.read_bytes()
    write_baseline(path, read_baseline(path))  # a rerun writes the same bytes
    assert path.read_bytes() == first
    assert json.loads(first)["format"] == "inferbench-check-baseline"
    assert [p.name for p in path.parent.iterdir()] == ["baseline.json"]  # no temp file left
    edit(debt, RECIPE, 'concurrencies: "1024"', 'concurrencies: "512"')
    options = CheckOptions(select=("IB3",))
    _, by_file = check_change(debt, options, baseline=path)
    _, by_git = check_change(debt, BASE)
    assert _rules(by_file.new) == _rules(by_git.new) == [("IB307", "recipe concurrencies [512]")]
    assert by_file.fixed == by_git.fixed
    assert by_file.changed is None  # unknown without git: every new finding is annotated


def test_a_baseline_of_other_rules_is_refused(debt: Path, tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    write_baseline(path, Baseline.of(check_tree(debt, BASE), BASE))
    with pytest.raises(InputError, match=r"recorded with --select IB3, this run has every rule"):
        check_change(debt, CheckOptions(), baseline=path)


@pytest.mark.parametrize(
    ("text", "message", "key"),
    [
        ("{", "not a JSON baseline", None),
        ('{"findings": []}', "not an inferbench check baseline", "format"),
        ('{"format": "inferbench-check-baseline", "version": 9}', "baseline version 9", "version"),
        (
            '{"format": "inferbench-check-baseline", "version": 1, "findings": [{"rule": 1}]}',
            "invalid baseline",
            "findings.0.rule",
        ),
    ],
)
def test_a_bad_baseline_names_file_key_and_fix(
    tmp_path: Path, text: str, message: str, key: str | None
) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_baseline(path)
    assert message in caught.value.message
    assert caught.value.location.file == path and caught.value.location.key == key
    assert caught.value.hint


def test_export_tree_writes_the_base_and_leaves_the_repository_alone(debt: Path) -> None:
    repo = debt.parent
    (debt / "link.yaml").symlink_to("perf-changelog.yaml")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "a link")
    edit(debt, RECIPE, 'concurrencies: "1024"', 'concurrencies: "512"')
    status = git(repo, "status", "--porcelain")
    out = repo.parent / "exported"
    out.mkdir()
    commit = export_tree(debt, "main", out)
    assert commit == git(repo, "rev-parse", "main").strip()
    assert 'concurrencies: "1024"' in (out / RECIPE).read_text()
    assert (out / "link.yaml").is_symlink() and (out / "README.md").is_file()
    assert git(repo, "status", "--porcelain") == status
    assert git(repo, "worktree", "list").count("\n") == 1


def test_export_tree_of_a_folder_the_base_lacks(repo: Path) -> None:
    (repo / "later").mkdir()
    with pytest.raises(InputError, match="later does not exist at git base 'main'"):
        export_tree(repo / "later", "main", repo.parent)


@pytest.mark.parametrize(
    ("message", "values"),
    [
        ("'a' is written again here (first at line 104); srtctl reads it", ("'a'",)),
        ("recipe concurrencies [4096] differ from k-1 [2048]", ("[4096]", "[2048]", "k-1")),
        (
            "at NVIDIA/srt-slurm@v1.0.53 the key x.y: Unknown field.",
            ("NVIDIA/srt-slurm@v1.0.53", "x.y"),
        ),
        ("1 worker(s) x 16 = 16 (more than 1.5x); requests will queue", ("1", "16", "16", "1.5x")),
        ("see a.yaml:12:3 and lines 3-9", ("a.yaml",)),
    ],
)
def test_message_values_keep_what_not_where(message: str, values: tuple[str, ...]) -> None:
    assert message_values(message) == values


def test_message_values_drop_the_trees_own_path(tmp_path: Path) -> None:
    assert message_values(f"{tmp_path}/configs/a.yaml is empty", (tmp_path,)) == ("configs/a.yaml",)


def test_a_base_that_does_not_load_is_named_as_the_tree_names_it(repo: Path) -> None:
    bench = repo / "bench"
    runners = bench / "configs" / "runners.yaml"
    good = runners.read_text()
    runners.write_text(good + "\n[")
    git(repo, "commit", "-qam", "a runners file that is no YAML")
    runners.write_text(good)
    with pytest.raises(InputError) as caught:
        check_change(bench, CheckOptions(base="main", srtctl=False))
    text = caught.value.render()
    assert text.startswith("at base main: configs/runners.yaml:"), text
    assert "inferbench-base-" not in text


def test_files_are_named_by_the_tree_or_the_srt_slurm_source(tmp_path: Path) -> None:
    root, checkout = tmp_path / "tree", tmp_path / "srt-slurm"
    assert file_label(root / "configs" / "a.yaml", root, (checkout,)) == "configs/a.yaml"
    assert (
        file_label(checkout / "recipes" / "r.yaml", root, (checkout,)) == "srt-slurm/recipes/r.yaml"
    )
    assert file_label(None, root) == ""
