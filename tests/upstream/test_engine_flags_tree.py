"""IB309 on the real InferenceX tree: every vLLM and SGLang flag its recipes write is one
the engine release of the master image accepts (no false alarms; Dynamo's `--dyn-*` flags
are Dynamo's own)."""

from __future__ import annotations

from pathlib import Path

from inferbench.checks.engine import CheckOptions, check_tree
from inferbench.config.engine_releases import judge_flag
from inferbench.config.project import load_project


def test_the_real_tree_has_no_unknown_engine_flag(
    inferencex_tree: Path, srt_slurm_tree: Path
) -> None:
    report = check_tree(inferencex_tree, CheckOptions(select=("IB309",), srt_slurm=srt_slurm_tree))
    assert [f.message for f in report.findings] == []


def test_the_tables_judge_the_trees_recipes(inferencex_tree: Path) -> None:
    """The rule has something to judge: the tree's vLLM and SGLang recipes write hundreds of
    flags, each found in a table."""
    project = load_project(inferencex_tree)
    judged = 0
    for path in project.recipe_paths():
        recipe_file = project.recipe_file(path)
        if recipe_file.is_override_file:
            continue
        data = recipe_file.doc.data
        backend = data.get("backend") if isinstance(data, dict) else None
        if not isinstance(backend, dict) or backend.get("type") not in ("vllm", "sglang"):
            continue
        engine = backend["type"]
        for flags in (backend.get(f"{engine}_config") or {}).values():
            for flag in flags or {}:
                verdict = judge_flag(engine, str(flag))
                judged += verdict is not None and verdict.known
    assert judged > 500
