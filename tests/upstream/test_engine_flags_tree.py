"""IB309 on the real InferenceX tree: every vLLM and SGLang flag its recipes write is one
the engine release of the master image accepts (no false alarms; Dynamo's `--dyn-*` flags
are Dynamo's own). TRT-LLM recipes are judged once a TRT-LLM table exists; until then no
verdict is given on them (docs/conformance.md says why)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from inferbench.checks.engine import CheckOptions, check_tree
from inferbench.config.engine_releases import flag_tables, judge_flag
from inferbench.config.project import load_project


def test_the_real_tree_has_no_unknown_engine_flag(
    inferencex_tree: Path, srt_slurm_tree: Path
) -> None:
    report = check_tree(inferencex_tree, CheckOptions(select=("IB309",), srt_slurm=srt_slurm_tree))
    assert [f.message for f in report.findings] == []


def _recipe_flags(tree: Path, engines: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(engine, flag) for every flag the tree's recipes of `engines` write in their
    `<engine>_config` blocks (override files left out: they only restate their base)."""
    project = load_project(tree)
    for path in project.recipe_paths():
        recipe_file = project.recipe_file(path)
        if recipe_file.is_override_file:
            continue
        data = recipe_file.doc.data
        backend = data.get("backend") if isinstance(data, dict) else None
        if not isinstance(backend, dict) or backend.get("type") not in engines:
            continue
        engine = backend["type"]
        for flags in (backend.get(f"{engine}_config") or {}).values():
            for flag in flags or {}:
                yield engine, str(flag)


def test_the_tables_judge_the_trees_recipes(inferencex_tree: Path) -> None:
    """The rule has something to judge: the tree's vLLM and SGLang recipes write hundreds of
    flags, each found in a table."""
    judged = 0
    for engine, flag in _recipe_flags(inferencex_tree, ("vllm", "sglang")):
        verdict = judge_flag(engine, flag)
        judged += verdict is not None and verdict.known
    assert judged > 500


def test_trtllm_recipes_are_judged_once_a_table_exists(inferencex_tree: Path) -> None:
    """The tree's TRT-LLM recipes write `trtllm_config` keys; with a TRT-LLM table each must
    be known, without one none gets a verdict (no finding from an unproven table)."""
    verdicts = [
        (key, judge_flag("trtllm", key)) for _, key in _recipe_flags(inferencex_tree, ("trtllm",))
    ]
    assert len(verdicts) > 500
    if "trtllm" in flag_tables():
        assert [key for key, v in verdicts if v is None or not v.known] == []
    else:
        assert all(v is None for _, v in verdicts)
