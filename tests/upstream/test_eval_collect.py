"""InferenceX's own eval collector (`utils/collect_eval_results.py`, from the upstream tree, in
its own venv) reads the eval artifacts inferbench writes, with inferbench's scores."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from evals.conftest import needs_lm_eval
from evals.known_answers import known_answer_server, write_dataset
from inferbench.cli.main import main
from inferbench.core.job import Job
from inferbench.evals.result import read_eval_result
from inferbench.launch.evalstep import run_evals
from inferbench.launch.plan import BenchSpec, EvalPlan

_COLLECT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from collect_eval_results import collect_eval_rows
from pathlib import Path
print(json.dumps(collect_eval_rows(Path(sys.argv[2])), default=str))
"""


def _collect(python: Path, tree: Path, root: Path) -> list[dict[str, object]]:
    proc = subprocess.run(
        [str(python), "-c", _COLLECT, str(tree / "utils"), str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    rows: list[dict[str, object]] = json.loads(proc.stdout)
    return rows


@needs_lm_eval
@pytest.mark.slow
@pytest.mark.integration
def test_the_collector_reads_an_eval_result_dir(
    inferencex_tree: Path, inferencex_python: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_dataset(tmp_path / "gsm.jsonl")
    monkeypatch.chdir(tmp_path)
    with known_answer_server(known=6) as srv, pytest.raises(SystemExit) as exc:
        # a relative --output-dir: lm-eval runs inside it, which once doubled the path
        main(["eval", "--base-url", srv.url, "--model", "known", "--dataset", str(data),
              "--concurrency", "4", "--output-dir", "out"])  # fmt: skip
    assert exc.value.code in (0, None)
    ours = read_eval_result(tmp_path / "out" / "eval_gsm8k.json").primary
    (row,) = _collect(inferencex_python, inferencex_tree, tmp_path / "out")
    assert ours is not None and ours.value == pytest.approx(0.6)
    assert row["task"] == "gsm8k" and row["score_name"] == "em_strict"
    assert row["score"] == pytest.approx(ours.value) and row["n_eff"] == ours.samples
    assert row["score_se"] == pytest.approx(ours.stderr) and row["conc"] == 4


@needs_lm_eval
@pytest.mark.slow
@pytest.mark.integration
def test_the_collector_reads_a_runs_eval_results(
    inferencex_tree: Path, inferencex_python: Path, tmp_path: Path
) -> None:
    """Two eval concurrencies of one job: staged as InferenceX's batched evals, with the
    job's identity in meta_env.json."""
    fields = {
        "config-key": "llama-fp8-h200-vllm", "image": "vllm/vllm-openai:v0.25.1",
        "model": "known", "model-prefix": "llama", "precision": "fp8", "framework": "vllm",
        "runner": "h200", "isl": 8192, "osl": 1024, "max-model-len": 9472, "tp": 2, "ep": 1,
        "pp": 1, "dcp-size": 1, "pcp-size": 1, "dp-attn": False, "conc": 8,
        "exp-name": "llama_8k1k", "spec-decoding": "none",
    }  # fmt: skip
    job = Job.model_validate(fields)
    bench = BenchSpec(
        model="known",
        isl=8192,
        osl=1024,
        points=(),
        eval=EvalPlan(
            concurrencies=(4, 8),
            context_length=4096,
            dataset=str(write_dataset(tmp_path / "gsm.jsonl")),
        ),
    )
    job_dir = tmp_path / "run" / "abc123"
    (job_dir / "results").mkdir(parents=True)
    with known_answer_server(known=7) as srv:
        files = run_evals(srv.url, bench, job_dir / "results", job_dir / "logs", job)
    assert len(files) == 2
    rows = _collect(inferencex_python, inferencex_tree, tmp_path / "run" / "eval_results")
    assert sorted(r["conc"] for r in rows) == [4, 8]
    for row in rows:
        assert row["score"] == pytest.approx(0.7) and row["n_eff"] == 10
        assert (row["hw"], row["framework"], row["precision"]) == ("H200", "vllm", "fp8")
        assert (row["isl"], row["osl"], row["tp"], row["ep"]) == (8192, 1024, 2, 1)
        assert row["model_prefix"] == "llama" and row["is_multinode"] is False
