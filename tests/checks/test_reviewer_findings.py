"""Findings a reviewer accepts: queueing the recipes choose on purpose, nodes srtctl spreads
workers over, changelog history InferenceX accepted, and paths that name no machine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inferbench.checks.engine import CheckOptions, check_tree
from inferbench.checks.finding import Severity
from inferbench.checks.render import RENDERERS

from .treeutil import CHANGELOG, MASTER, RECIPE, edit

# the example's decode worker: DEP8, 8 schedulers; the master entry's top concurrency: 2048
SEQS = "max-num-seqs: 1024"


def _rules(tree: Path, **options: object) -> list[tuple[str, Severity]]:
    report = check_tree(tree, CheckOptions(**options))  # type: ignore[arg-type]
    return [(f.rule, f.severity) for f in report.findings]


@pytest.mark.parametrize(
    ("seqs", "fires"),
    [(256, False), (147, False), (146, True), (128, True)],
    ids=["1.0x", "1.741x", "1.753x", "2x"],
)
def test_decode_capacity_tolerates_queueing_up_to_three_quarters_of_a_batch(
    tree: Path, seqs: int, fires: bool
) -> None:
    edit(tree, RECIPE, SEQS, f"max-num-seqs: {seqs}")
    report = check_tree(tree, CheckOptions(select=("IB208",)))
    assert bool(report.findings) is fires
    if fires:
        (finding,) = report.findings
        assert f"{2048 / (8 * seqs):.2f}x the decode capacity" in finding.message


def test_decode_capacity_is_not_judged_on_a_recipe_no_active_entry_runs(tree: Path) -> None:
    """A recipe only an archived (configs/deprecated/) entry used is never run by the CI."""
    recipe = tree / RECIPE
    retired = recipe.with_name("2p1d-dep2-dep8-8k1k-old.yaml")
    shutil.copy(recipe, retired)
    edit(tree, str(retired.relative_to(tree)), SEQS, "max-num-seqs: 16")  # 2048 over 128
    assert check_tree(tree, CheckOptions(select=("IB208",))).findings == ()
    edit(tree, RECIPE, SEQS, "max-num-seqs: 16")  # the deployed one fires
    (finding,) = check_tree(tree, CheckOptions(select=("IB208",))).findings
    assert finding.file is not None and finding.file.name == recipe.name


def test_spread_workers_take_a_node_each(tree: Path) -> None:
    """2 prefill workers of 2 GPUs: one node packed, two nodes spread (srtctl's
    `resources.spread_workers`)."""
    spread = "  gpus_per_node: 8\n  spread_workers: true\n"
    edit(tree, RECIPE, "prefill_nodes: 1", "prefill_nodes: 2")
    assert _rules(tree, select=("IB204", "IB205")) == [("IB205", Severity.WARNING)]
    edit(tree, RECIPE, "  gpus_per_node: 8\n", spread)
    assert _rules(tree, select=("IB204", "IB205")) == []
    edit(tree, RECIPE, "prefill_nodes: 2", "prefill_nodes: 1")
    assert _rules(tree, select=("IB204", "IB205")) == [("IB204", Severity.ERROR)]


UNKNOWN_KEY = ('["dsr1-fp8-h200-*"]', '["dsr1-fp8-h100-*"]')


def test_unknown_changelog_key_in_the_history_is_a_warning(tree: Path) -> None:
    edit(tree, CHANGELOG, *UNKNOWN_KEY)
    report = check_tree(tree, CheckOptions(select=("IB501",)))
    assert [(f.rule, f.severity) for f in report.findings] == [("IB501", Severity.WARNING)]
    assert report.exit_code() == 0 and report.exit_code(strict=True) == 1


def test_unknown_changelog_key_in_a_new_entry_is_an_error(repo: Path) -> None:
    bench = repo / "bench"
    text = (bench / CHANGELOG).read_text()
    (bench / CHANGELOG).write_text(
        text.rstrip("\n") + "\n\n- config-keys: [nope-fp8-h100-vllm]\n  description:\n"
        "    - a new entry\n  pr-link: https://github.com/example-org/benchmarks/pull/999\n"
    )
    report = check_tree(bench, CheckOptions(base="main", select=("IB501",)))
    assert [(f.rule, f.severity) for f in report.findings] == [("IB501", Severity.ERROR)]
    assert report.exit_code() == 1


@pytest.mark.parametrize("output_format", sorted(RENDERERS))
def test_no_output_names_an_absolute_path(tree: Path, tmp_path: Path, output_format: str) -> None:
    """Findings in a file of the srt-slurm checkout, and messages naming files, are shown
    relative to the tree's root (`..` where the file lies beside it)."""
    upstream = tmp_path / "srt-slurm"
    target = upstream / "recipes" / "sglang" / "deepseek" / "x.yaml"
    target.parent.mkdir(parents=True)
    text = (tree / RECIPE).read_text().replace(SEQS, "max-num-seqs: 16")
    target.write_text(text.replace("prefill_nodes: 1", "prefill_nodes: 3"))
    edit(tree, MASTER, "recipes/vllm/minimax-m3/b200-fp4/8k1k/2p1d", "recipes/sglang/deepseek/x")
    edit(tree, MASTER, "-dep2-dep8-8k1k.yaml", ".yaml")
    report = check_tree(tree, CheckOptions(srt_slurm=upstream.resolve()))
    out = RENDERERS[output_format](report.findings, tree.resolve())
    assert {"IB205", "IB208"} <= {f.rule for f in report.findings}
    assert str(tmp_path) not in out and str(tmp_path.resolve()) not in out
    assert "../srt-slurm/recipes/sglang/deepseek/x.yaml" in out
    if output_format == "json":
        files = {d["file"] for d in json.loads(out)}
        assert all(not f.startswith("/") for f in files if f)


def test_a_missing_recipe_is_named_below_its_root(tree: Path, tmp_path: Path) -> None:
    edit(tree, MASTER, "2p1d-dep2-dep8-8k1k.yaml", "2p1d-dep2-dep8-9k1k.yaml")
    upstream = tmp_path / "srt-slurm"
    (upstream / "recipes" / "vllm" / "minimax-m3").mkdir(parents=True)
    for options in (CheckOptions(), CheckOptions(srt_slurm=upstream.resolve())):
        report = check_tree(tree.resolve(), options)
        messages = [f.message for f in report.findings if f.rule == "IB201"]
        assert messages and all(str(tmp_path.resolve()) not in m for m in messages), messages


def test_max_model_len_is_judged_on_the_recipes_own_lengths(tree: Path) -> None:
    """srtctl runs the recipe's benchmark: osl 2048 needs 8192 + 2048, more than 9472."""
    assert check_tree(tree, CheckOptions(select=("IB207",))).findings == ()
    edit(tree, RECIPE, "osl: 1024", "osl: 2048")
    findings = check_tree(tree, CheckOptions(select=("IB207",))).findings
    assert {f.message for f in findings} == {
        "decode max-model-len 9472 is below isl + osl = 8192 + 2048 = 10240 (the recipe's "
        "benchmark)"
    }
    assert all(f.hint and "10496" in f.hint for f in findings)


def test_max_model_len_falls_back_to_the_master_lengths(tree: Path) -> None:
    edit(tree, RECIPE, "  isl: 8192\n  osl: 1024\n", "")
    decode = "max-model-len: {}\n      max-num-seqs"  # the decode worker's
    edit(tree, RECIPE, decode.format(9472), decode.format(9000))
    (finding,) = check_tree(tree, CheckOptions(select=("IB207",))).findings
    assert finding.message.endswith("= 9216 (the master scenario)")


@pytest.mark.parametrize(
    ("recipe_conc", "seqs", "fires"),
    [("1024", 128, False), ("4096", 256, True)],
    ids=["runs-1024-master-2048", "runs-4096-master-2048"],
)
def test_decode_capacity_is_judged_on_the_concurrency_the_recipe_runs(
    tree: Path, recipe_conc: str, seqs: int, fires: bool
) -> None:
    """The master asks 2048; srtctl runs the recipe's own benchmark.concurrencies."""
    edit(tree, RECIPE, 'concurrencies: "2048"', f'concurrencies: "{recipe_conc}"')
    edit(tree, RECIPE, SEQS, f"max-num-seqs: {seqs}")
    findings = check_tree(tree, CheckOptions(select=("IB208",))).findings
    assert bool(findings) is fires
    if fires:
        assert findings[0].message.startswith("concurrency 4096 (the recipe runs) is 2.00x")


def test_agentic_users_are_not_requests_in_flight(tree: Path) -> None:
    from inferbench.checks.rules.recipe import decode_capacity_exceeded
    from inferbench.checks.subjects import RecipeUse, RecipeWorkload
    from inferbench.config.project import load_project

    edit(tree, RECIPE, SEQS, "max-num-seqs: 16")  # 2048 users over 128 slots
    project = load_project(tree).read_all()
    (recipe,) = project.recipe_file(tree / RECIPE).variants(None)
    closed = RecipeWorkload(8192, 1024, (2048,))
    assert list(decode_capacity_exceeded(RecipeUse(recipe, closed)))
    agentic = RecipeWorkload(None, None, (2048,), agentic=True)
    assert list(decode_capacity_exceeded(RecipeUse(recipe, agentic))) == []


def test_a_retired_recipe_is_reported_once_and_not_rule_by_rule(tree: Path) -> None:
    recipe = tree / RECIPE
    retired = recipe.with_name("2p1d-dep2-dep8-8k1k-old.yaml")
    shutil.copy(recipe, retired)
    rel = str(retired.relative_to(tree))
    edit(tree, rel, "prefill_nodes: 1", "prefill_nodes: 2")  # IB205 if it were checked
    edit(tree, rel, "  gpus_per_node: 8\n", "  gpus_per_node: 4\n  gpus_per_node: 8\n")  # IB210
    report = check_tree(tree)
    assert [(f.rule, f.severity) for f in report.findings] == [("IB212", Severity.INFO)]
    (finding,) = report.findings
    assert finding.file == retired and finding.hint
    assert finding.message.startswith("1 recipe file(s) are retired")
    assert "recipes/vllm/minimax-m3/b200-fp4/8k1k/ (1)" in finding.message
    # a launcher route to it: a job may run it, so it is checked on its own
    launcher = tree / "runners" / "launch_b200-dgxc.sh"
    launcher.parent.mkdir()
    launcher.write_text(
        '#!/bin/bash\nif [[ "$CONFIG_FILE" == recipes/vllm/minimax-m3/b200-fp4/8k1k/*-old.yaml'
        " ]]; then\n    echo old\nfi\n"
    )
    rules = {f.rule for f in check_tree(tree).findings}
    assert "IB212" not in rules and {"IB205", "IB210"} <= rules
