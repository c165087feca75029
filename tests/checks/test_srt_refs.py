"""`check --srt-slurm` judges each recipe at the srt-slurm ref its job runs: the example
tree's catalog pins srt-slurm v0.4.2, whose schema (unlike the bundled one) has
`telemetry.provider`."""

from __future__ import annotations

import json
from pathlib import Path

from inferbench.checks.engine import check_tree
from inferbench.checks.render import render_json
from inferbench.checks.report import CheckOptions
from srtctl_gen import bundled_tree, git, srt_slurm_repo, with_key, write_srtctl

from .treeutil import MASTER, RECIPE, edit

PROVIDER = ("telemetry", "provider")
UPSTREAM = "recipes/sglang/deepseek/b200-fp4/8k1k/2p1d-dep2-dep8-8k1k.yaml"


def _with_provider(tree: Path) -> None:
    path = tree / RECIPE
    path.write_text(path.read_text() + "telemetry:\n  provider: dcgm-power\n")


def _bundle(tmp_path: Path, refs: list[str], recipe: str | None = None) -> Path:
    """A bundle whose v0.4.2 (only) accepts telemetry.provider."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    trees = {
        ref: with_key(bundled_tree(), PROVIDER, {"kind": "string", "nullable": True})
        if ref == "v0.4.2"
        else bundled_tree()
        for ref in refs
    }
    recipes = {ref: {UPSTREAM.removeprefix("recipes/"): recipe} for ref in refs} if recipe else None
    repo = srt_slurm_repo(tmp_path / "srt-slurm-repo", trees, recipes)
    bundle = tmp_path / "refs.bundle"
    git(repo, "bundle", "create", str(bundle), "--all")
    return bundle


def _rules(report) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(f.rule for f in report.findings)


def test_a_recipe_is_judged_by_the_schema_of_its_ref(tree: Path, tmp_path: Path) -> None:
    _with_provider(tree)
    bundled = check_tree(tree)  # no srt-slurm given: the bundled schema
    assert _rules(bundled) == ["IB203"]
    assert "telemetry.provider: Unknown field." in bundled.findings[0].message
    at_ref = check_tree(tree, CheckOptions(srt_slurm=(_bundle(tmp_path, ["v0.4.1", "v0.4.2"]),)))
    assert at_ref.findings == ()


def test_a_ref_not_at_hand_is_said_plainly(tree: Path, tmp_path: Path) -> None:
    _with_provider(tree)
    report = check_tree(tree, CheckOptions(srt_slurm=(_bundle(tmp_path, ["v0.4.1"]),)))
    assert _rules(report) == ["IB002"]  # no verdict from another ref's schema
    assert "1 NVIDIA/srt-slurm@v0.4.2 (not given; its recipe was not checked against a " in (
        report.findings[0].message
    )


def test_a_wrong_key_at_the_ref_is_named_with_it(tree: Path, tmp_path: Path) -> None:
    path = tree / RECIPE
    path.write_text(path.read_text() + "telemetry:\n  providr: dcgm-power\n")
    report = check_tree(tree, CheckOptions(srt_slurm=(_bundle(tmp_path, ["v0.4.2"]),)))
    assert _rules(report) == ["IB203"]
    assert report.findings[0].message == (
        "srtctl at NVIDIA/srt-slurm@v0.4.2 rejects it: telemetry.providr: Unknown field."
    )


def test_a_checkout_is_judged_by_its_own_source(tree: Path, tmp_path: Path) -> None:
    """A checkout of another ref than the bundled schema's: no false IB203 from it."""
    _with_provider(tree)
    checkout = tmp_path / "srt-slurm"
    (checkout / "recipes").mkdir(parents=True)
    write_srtctl(
        checkout / "src", with_key(bundled_tree(), PROVIDER, {"kind": "string", "nullable": True})
    )
    report = check_tree(tree, CheckOptions(srt_slurm=checkout))
    assert _rules(report) == ["IB002"]  # a plain folder: its ref is not known
    assert "judged with the checkout srt-slurm given, whose ref is unknown" in (
        report.findings[0].message
    )


def test_an_upstream_recipe_is_read_at_the_ref(tree: Path, tmp_path: Path) -> None:
    edit(tree, MASTER, "recipes/vllm/minimax-m3", "recipes/sglang/deepseek")
    text = (tree / RECIPE).read_text()
    (tree / RECIPE).unlink()  # left behind, no entry would name it (IB212 recipe-retired)
    clean = check_tree(tree, CheckOptions(srt_slurm=(_bundle(tmp_path / "a", ["v0.4.2"], text),)))
    assert clean.findings == ()
    bundle = _bundle(tmp_path / "b", ["v0.4.2"], text + "bogus: 1\n")
    report = check_tree(tree, CheckOptions(srt_slurm=(bundle,)))
    assert _rules(report) == ["IB203"]
    # the recipe of the ref, named by it (never by a path in the cache)
    shown = json.loads(render_json(report.findings, tree))
    assert shown[0]["file"] == f"NVIDIA/srt-slurm@v0.4.2/{UPSTREAM}"


def _provider_copy(tmp_path: Path, provider: bool) -> Path:
    """A plain srt-slurm copy (no git) whose schema has telemetry.provider or not."""
    checkout = tmp_path / "srt-slurm"
    (checkout / "recipes").mkdir(parents=True)
    tree = bundled_tree()
    if provider:
        tree = with_key(tree, PROVIDER, {"kind": "string", "nullable": True})
    write_srtctl(checkout / "src", tree)
    return checkout


def test_a_copy_of_unknown_ref_beside_a_bundle_stands_in_for_no_ref(
    tree: Path, tmp_path: Path
) -> None:
    """`--srt-slurm BUNDLE --srt-slurm COPY`: each source only for the refs it holds; the
    copy, whose ref is unknown, judges nothing (it would call v0.4.2's key unknown)."""
    _with_provider(tree)
    bundle = _bundle(tmp_path / "b", ["v0.4.1"])
    copy = _provider_copy(tmp_path / "c", provider=False)
    report = check_tree(tree, CheckOptions(srt_slurm=(bundle, copy)))
    assert _rules(report) == ["IB002"]  # no IB203 from the copy's schema
    message = report.findings[0].message
    assert "1 NVIDIA/srt-slurm@v0.4.2 (not given (the copy srt-slurm, whose ref is " in message
    assert "give it as srt-slurm@REF" in message


def test_a_copy_named_with_its_ref_judges_that_ref(tree: Path, tmp_path: Path) -> None:
    _with_provider(tree)
    bundle = _bundle(tmp_path / "b", ["v0.4.1"])
    wrong = _provider_copy(tmp_path / "w", provider=False)  # said to be v0.4.2, judged so
    report = check_tree(tree, CheckOptions(srt_slurm=(bundle, Path(f"{wrong}@v0.4.2"))))
    assert _rules(report) == ["IB203"]
    assert report.findings[0].message.startswith("srtctl at NVIDIA/srt-slurm@v0.4.2 rejects")
    right = _provider_copy(tmp_path / "r", provider=True)
    report = check_tree(tree, CheckOptions(srt_slurm=(Path(f"{right}@v0.4.2"), bundle)))
    assert report.findings == ()
