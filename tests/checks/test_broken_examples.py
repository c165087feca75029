"""Every tree under examples/broken/ is caught by its own rule, at the right file:line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inferbench.checks.engine import CheckOptions, check_tree
from inferbench.checks.finding import Severity

from .treeutil import BROKEN, CHANGELOG, MASTER, RECIPE, git

# folder -> (rule, file the finding is in, text on the reported line)
EXPECTED = {
    "model-alias-missing": ("IB401", RECIPE, 'path: "nvidia/MiniMax-M3-NVFP4"'),
    "max-model-len-short": ("IB207", RECIPE, "max-model-len: 8192"),
    "workers-exceed-nodes": ("IB204", RECIPE, "prefill_nodes: 1"),
    "decode-capacity-exceeded": ("IB208", RECIPE, "max-num-seqs: 128"),
    "config-file-missing": ("IB201", MASTER, "2p1d-dep2-dep8-1k1k.yaml"),
    "config-file-outside-tree": ("IB202", MASTER, "CONFIG_FILE=recipes/../"),
    "recipe-schema": ("IB203", RECIPE, "gpus_per_prefil:"),
    "container-mismatch": ("IB301", RECIPE, "container: vllm/vllm-openai:v0.11.0"),
    "image-unpinned": ("IB701", MASTER, "image: vllm/vllm-openai\n"),
    "recipe-name-topology": ("IB602", RECIPE.replace("dep8-8k1k", "dep4-8k1k"), "decode:"),
    "runner-label-unknown": ("IB101", MASTER, "runner: h200-single"),
    "spec-decoding-mismatch": ("IB306", RECIPE, "decode:"),
    "concurrency-mismatch": ("IB307", RECIPE, 'concurrencies: "1024x2048"'),
}
# what else a broken tree fires, because every cross-check still runs on it
CONSEQUENCES = {"recipe-schema": {"IB206", "IB304"}}  # the misspelt key's value is missing
NEEDS_BASE = {
    "changelog-entry-missing": ("IB503", MASTER, "minimaxm3-fp4-b200-dynamo-vllm:"),
    "changelog-rewritten": ("IB502", CHANGELOG, "TP1 and DEP2 (rerun)"),
    "changelog-4p2d": ("IB504", CHANGELOG, "4P2D"),
}


def _line_text(path: Path, line: int) -> str:
    return path.read_text().splitlines(keepends=True)[line - 1]


def test_every_broken_tree_is_listed() -> None:
    folders = {p.name for p in BROKEN.iterdir() if p.is_dir()}
    assert folders == set(EXPECTED) | set(NEEDS_BASE)
    readme = (BROKEN / "README.md").read_text()
    for name, (rule, _, _) in {**EXPECTED, **NEEDS_BASE}.items():
        assert f"| `{name}/` | {rule} |" in readme


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_tree_is_caught_by_its_rule(name: str) -> None:
    rule, rel, text = EXPECTED[name]
    tree = BROKEN / name
    report = check_tree(tree)
    also = CONSEQUENCES.get(name, set())
    findings = [
        f for f in report.findings if f.severity is not Severity.INFO and f.rule not in also
    ]
    assert [f.rule for f in findings] == [rule], report.findings
    assert {f.rule for f in report.findings} - {rule, "IB002", "IB212"} == also
    (finding,) = findings
    assert finding.file is not None and finding.line is not None
    assert finding.file.resolve() == (tree / rel).resolve()
    assert text in _line_text(finding.file, finding.line)


@pytest.mark.parametrize("name", sorted(NEEDS_BASE))
def test_broken_tree_against_a_git_base(repo: Path, name: str) -> None:
    rule, rel, text = NEEDS_BASE[name]
    bench = repo / "bench"
    shutil.rmtree(bench)
    # copies keep the checkout's mtimes: changed files are found by content, not stat data
    shutil.copytree(BROKEN / name, bench)
    assert check_tree(bench).findings == ()  # without a base nothing can be said
    report = check_tree(bench, CheckOptions(base="main"))
    assert [f.rule for f in report.findings] == [rule], report.findings
    (finding,) = report.findings
    assert finding.file is not None and finding.line is not None
    assert finding.file.resolve() == (bench / rel).resolve()
    assert text in _line_text(finding.file, finding.line)
    assert finding.hint and finding.hint.strip()  # the `fix:` line (test_rules has the rest)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "broken")
    assert check_tree(bench, CheckOptions(base="main")).findings == ()  # nothing since HEAD
