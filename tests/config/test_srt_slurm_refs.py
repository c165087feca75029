"""The srt-slurm trees `--srt-slurm` names: checkouts, clones and bundles, each looked up
by (repository, ref) and judged with the schema of its own source (`srt_slurm_refs`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from inferbench.config.srt_slurm_refs import (
    SourceSpec,
    SrtSlurmSources,
    parse_source,
    repository_name,
    unpacked_label,
)
from inferbench.config.srtctl_schema import schema_problems, srtctl_schema
from inferbench.core.errors import InputError
from srtctl_gen import with_key, write_srtctl

PROVIDER = ("telemetry", "provider")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def bundled_tree() -> dict:  # type: ignore[type-arg]
    schema = srtctl_schema()
    return {"srtctl": schema.version, "recipe": schema.recipe, "backends": schema.backends}


def make_refs(root: Path) -> Path:
    """A clone of srt-slurm with: tag v1 (the bundled schema), tag v2 and branch feature
    (telemetry.provider added), and a pinned commit kept as tag commit-<sha>."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "pyproject.toml").write_text('[project]\nname = "srtctl"\nversion = "0.3.0"\n')
    (root / "recipes").mkdir()
    (root / "recipes" / "a.yaml").write_text("name: v1\n")
    write_srtctl(root / "src", bundled_tree())
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "v1")
    git(root, "tag", "v1")
    write_srtctl(root / "src", with_key(bundled_tree(), PROVIDER, {"kind": "string"}))
    (root / "recipes" / "a.yaml").write_text("name: v2\n")
    git(root, "commit", "-q", "-am", "v2")
    git(root, "tag", "v2")
    git(root, "branch", "feature")
    git(root, "tag", "commit-0123456789abcdef0123456789abcdef01234567", "v1")
    return root


RECIPE = {
    "name": "r",
    "model": {"path": "m", "container": "c", "precision": "fp8"},
    "resources": {"gpu_type": "h100"},
    "telemetry": {"provider": "dcgm-power"},
}


def test_refs_of_a_bundle_are_found_by_name_and_judged_by_their_own_schema(
    tmp_path: Path,
) -> None:
    repo = make_refs(tmp_path / "repo")
    bundle = tmp_path / "refs.bundle"
    git(repo, "bundle", "create", str(bundle), "--all")
    sources = SrtSlurmSources([bundle])
    v1 = sources.at("NVIDIA/srt-slurm", "v1")
    v2 = sources.at("nvidia/srt-slurm", "v2")
    assert v1 is not None and v2 is not None
    assert not (v1.root / "recipes" / "a.yaml").exists()  # recipes come when asked for
    v1.fetch_recipes(["a.yaml", "missing.yaml"])
    assert (v1.root / "recipes" / "a.yaml").read_text() == "name: v1\n"
    assert [p.render() for p in schema_problems(RECIPE, v1.schema)] == [
        "telemetry.provider: Unknown field."
    ]
    assert schema_problems(RECIPE, v2.schema) == []
    assert v2.schema.origin == "NVIDIA/srt-slurm@v2" and v2.label == "NVIDIA/srt-slurm@v2"
    pinned = sources.at("NVIDIA/srt-slurm", "0123456789abcdef0123456789abcdef01234567")
    assert pinned is not None and pinned.root == v1.root  # commit-<sha> tag, same commit
    assert sources.at("NVIDIA/srt-slurm", "01234567") is not None  # abbreviated
    assert sources.at("NVIDIA/srt-slurm", "feature") is not None
    head = sources.at("NVIDIA/srt-slurm", "HEAD")  # a bundle has no HEAD: main
    assert head is not None and head.root == v2.root
    assert sources.at("NVIDIA/srt-slurm", "v9") is None
    assert sources.at("someone/srt-slurm-fork", "v2") is None  # another repository
    assert sources.checkout is None and sources.has_refs
    shown = unpacked_label(v1.root / "recipes" / "a.yaml")
    assert shown == (v1.root, "NVIDIA/srt-slurm@v1")


def test_a_clone_names_its_repository_and_its_working_tree_is_the_ref_at_head(
    tmp_path: Path,
) -> None:
    repo = make_refs(tmp_path / "repo")
    git(repo, "remote", "add", "origin", "https://github.com/someone/srt-slurm-nv.git")
    (repo / "recipes" / "a.yaml").write_text("name: edited\n")  # what a user submits
    sources = SrtSlurmSources([repo])
    assert sources.at("NVIDIA/srt-slurm", "v1") is None
    v1 = sources.at("someone/srt-slurm-nv", "v1")
    assert v1 is not None and v1.root != repo  # another ref: unpacked from git
    main = sources.at("someone/srt-slurm-nv", "main")
    assert main is not None and main.root == repo and main.label == "someone/srt-slurm-nv@main"
    v2 = sources.at("someone/srt-slurm-nv", "v2")
    assert v2 is not None and v2.root == repo  # the same commit: the working tree
    assert schema_problems(RECIPE, main.schema) == []  # the working tree's own schema
    # its ref is known, so it stands in for no other
    assert sources.checkout is None and sources.unnamed == ()


def test_each_of_several_sources_gives_only_the_refs_it_holds(tmp_path: Path) -> None:
    repo = make_refs(tmp_path / "repo")
    bundle = tmp_path / "refs.bundle"
    git(repo, "bundle", "create", str(bundle), "v1")
    copy = tmp_path / "copy"
    (copy / "recipes").mkdir(parents=True)
    (copy / "recipes" / "a.yaml").write_text("name: copy\n")
    both = SrtSlurmSources([bundle, copy])
    assert both.at("NVIDIA/srt-slurm", "v1") is not None
    assert both.at("NVIDIA/srt-slurm", "v2") is None  # the copy of unknown ref is not v2
    assert both.checkout is None and [t.root for t in both.unnamed] == [copy]
    alone = SrtSlurmSources([copy])  # alone, it stands in for every ref, as it always did
    assert alone.checkout is not None and alone.checkout.root == copy
    assert alone.unnamed == ()
    named = SrtSlurmSources([bundle, f"{copy}@v2"])
    v2 = named.at("nvidia/srt-slurm", "v2")
    assert v2 is not None and v2.root == copy and v2.label == "NVIDIA/srt-slurm@v2"
    v1 = named.at("NVIDIA/srt-slurm", "v1")
    assert v1 is not None and v1.root != copy and named.checkout is None
    fork = SrtSlurmSources([f"{copy}@someone/srt-slurm-nv@cam/q2"])
    assert fork.at("someone/srt-slurm-nv", "cam/q2") is not None
    assert fork.at("NVIDIA/srt-slurm", "cam/q2") is None


def test_source_values_name_a_ref_after_the_path(tmp_path: Path) -> None:
    odd = tmp_path / "srt@copy"  # an `@` in a path that exists is the path's
    odd.mkdir()
    assert parse_source(odd) == SourceSpec(odd)
    assert parse_source(f"{odd}@main") == SourceSpec(odd, "main")
    assert parse_source(f"{odd}@o/n@cam/x") == SourceSpec(odd, "cam/x", "o/n")
    with pytest.raises(InputError, match="is not a git ref"):
        parse_source(f"{odd}@")
    with pytest.raises(InputError, match="not a repository owner/name"):
        parse_source(f"{odd}@no-slash@main")
    repo = make_refs(tmp_path / "repo")
    with pytest.raises(InputError, match="whose refs are known by name"):
        SrtSlurmSources([f"{repo}@v1"])


def test_a_plain_checkout_is_judged_by_its_own_source(tmp_path: Path) -> None:
    checkout = tmp_path / "srt-slurm"
    (checkout / "recipes").mkdir(parents=True)
    write_srtctl(checkout / "src", with_key(bundled_tree(), PROVIDER, {"kind": "string"}))
    sources = SrtSlurmSources([checkout])
    assert sources.checkout is not None and not sources.has_refs
    assert schema_problems(RECIPE, sources.checkout.schema) == []
    bare = tmp_path / "recipes-only"
    (bare / "recipes").mkdir(parents=True)
    assert SrtSlurmSources([bare]).checkout.schema is srtctl_schema()  # type: ignore[union-attr]


def test_unusable_sources_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or folder"):
        SrtSlurmSources([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="has no recipes/ folder"):
        SrtSlurmSources([tmp_path / "empty"])
    (tmp_path / "junk.bundle").write_text("not a bundle")
    with pytest.raises(InputError, match="git bundle"):
        SrtSlurmSources([tmp_path / "junk.bundle"])


def test_repository_names() -> None:
    assert repository_name("https://github.com/NVIDIA/srt-slurm.git") == "NVIDIA/srt-slurm"
    assert repository_name("git@github.com:cquil11/srt-slurm-nv.git") == "cquil11/srt-slurm-nv"
    assert repository_name("not a url") is None
