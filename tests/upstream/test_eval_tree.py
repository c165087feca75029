"""Evals as InferenceX runs them: with a tree, its own task files and its lm-eval patch;
without one, inferbench's copies, held equal to the tree's here."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

from evals.conftest import needs_lm_eval
from evals.known_answers import known_answer_server, write_dataset
from inferbench.evals.lmeval import TREE_TASKS, prepare_task, run_eval
from inferbench.evals.result import EvalStatus
from inferbench.evals.spec import TASKS, EvalSpec, task_dir


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!function", lambda loader, node: f"!function {node.value}")


def _task(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.load(path.read_text(), Loader=_Loader)
    return data


@pytest.mark.parametrize("task", sorted(TASKS))
def test_bundled_task_files_equal_the_trees(inferencex_tree: Path, task: str) -> None:
    info = TASKS[task]
    ours, theirs = _task(task_dir() / info.file), _task(inferencex_tree / TREE_TASKS / info.file)
    # the tree's helper module is utils.py, ours gpqa_utils.py beside the task file
    if "process_docs" in ours:
        assert ours.pop("process_docs").endswith(".process_docs")
        assert theirs.pop("process_docs").endswith(".process_docs")
    # (the tree writes `task: gpqa_diamond_cot_n_shot ` with a trailing space)
    assert ours == {k: v.rstrip(" ") if isinstance(v, str) else v for k, v in theirs.items()}


def test_bundled_gpqa_shuffle_equals_the_trees(inferencex_tree: Path) -> None:
    datasets = pytest.importorskip("datasets")
    docs = datasets.Dataset.from_list(
        [
            {"Question": f"q{i}", "Correct Answer": f"c{i}", "Incorrect Answer 1": f"a{i}",
             "Incorrect Answer 2": f"b{i}", "Incorrect Answer 3": f"d{i}"}
            for i in range(12)
        ]
    )  # fmt: skip
    spec = importlib.util.spec_from_file_location(
        "tree_eval_utils", inferencex_tree / TREE_TASKS / "utils.py"
    )
    assert spec is not None and spec.loader is not None
    theirs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(theirs)
    from inferbench.evals.tasks.gpqa_utils import process_docs

    assert list(process_docs(docs)) == list(theirs.process_docs(docs))


def test_with_a_tree_its_task_file_is_used(inferencex_tree: Path, tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "gsm.jsonl")
    path = prepare_task(EvalSpec(dataset=data, tree=inferencex_tree), tmp_path / "task")
    tree_text = (inferencex_tree / TREE_TASKS / "gsm8k.yaml").read_text()
    assert path.read_text().splitlines()[0] == tree_text.splitlines()[0]  # the tree's header
    bundled = prepare_task(EvalSpec(dataset=data), tmp_path / "bundled")
    assert bundled.read_text().splitlines()[0] != tree_text.splitlines()[0]


@needs_lm_eval
@pytest.mark.slow
@pytest.mark.integration
def test_the_trees_patch_scores_reasoning_answers(inferencex_tree: Path, tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "gsm.jsonl")
    spec = EvalSpec(dataset=data, concurrency=4, tree=inferencex_tree)
    with known_answer_server(known=6, reasoning=True) as srv:
        result = run_eval(srv.url, "known", spec, tmp_path)
    assert result.status is EvalStatus.OK, result.reason
    assert result.primary is not None and result.primary.value == pytest.approx(0.6)
    site = tmp_path / "lm_eval_gsm8k" / "site" / "sitecustomize.py"
    patch = inferencex_tree / "utils" / "evals" / "patches" / "lm_eval_sitecustomize.py"
    assert site.read_text() == patch.read_text()
