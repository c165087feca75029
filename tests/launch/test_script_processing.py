"""A local run of a tree script: aiperf's call as `inferbench replay`, and the workflow's
processing steps run from the tree (postprocess.py)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from inferbench.launch.treescript.aiperfshim import replay_argv
from inferbench.launch.treescript.postprocess import process_point

# what build_replay_cmd gives aiperf (benchmark_lib.sh), cut to the options that matter
AIPERF = shlex.split(
    "profile --scenario inferencex-agentx-mvp --url http://localhost:8888 --endpoint "
    "/v1/chat/completions --endpoint-type chat --streaming --model org/m --tokenizer org/m "
    "--concurrency 4 --benchmark-duration 20 --random-seed 42 --use-server-token-count "
    "--output-artifact-dir /r/results/aiperf_artifacts --unsafe-override "
    "--public-dataset semianalysis_cc_traces_weka_062126"
)


def test_aiperf_profile_becomes_inferbench_replay() -> None:
    env = {"INFERBENCH_REPLAY_SYNTH": "sessions=2", "INFERBENCH_REPLAY_RESULT": "/j/conc4.json"}
    assert replay_argv(AIPERF, env) == [
        "replay", "--endpoint", "chat", "--base-url", "http://localhost:8888",
        "--model", "org/m", "--tokenizer", "org/m", "--concurrency", "4", "--duration", "20",
        "--aiperf-artifacts", "/r/results/aiperf_artifacts", "--seed", "42",
        "--synth", "sessions=2", "--output", "/j/conc4.json",
    ]  # fmt: skip
    traced = replay_argv(AIPERF, {"INFERBENCH_REPLAY_TRACE": "/t.jsonl"})
    assert traced[-2:] == ["--trace", "/t.jsonl"]


def _env(**over: str) -> dict[str, str]:
    import os

    return {"PATH": os.environ["PATH"], "RESULT_FILENAME": "pt", "EXP_NAME": "x_1k1k", **over}


def test_process_result_runs_from_the_tree_and_its_aggregate_is_kept(tmp_path: Path) -> None:
    ws, results = tmp_path / "ws", tmp_path / "job" / "results"
    (ws / "utils").mkdir(parents=True)
    (ws / "utils" / "process_result.py").write_text(
        "import json, os\n"
        "name = os.environ['RESULT_FILENAME']\n"
        "data = json.load(open(name + '.json'))\n"
        "json.dump({'conc': data['max_concurrency']}, open('agg_' + name + '.json', 'w'))\n"
    )
    (ws / "pt.json").write_text(json.dumps({"max_concurrency": 4}))
    log = tmp_path / "process.log"
    done = process_point(ws, _env(), results, log, 4)
    assert done.failure == "" and done.kept == (results / "agg_conc4.json",)
    assert json.loads((results / "agg_conc4.json").read_text()) == {"conc": 4}
    assert "utils/process_result.py" in log.read_text()


def test_a_failing_step_fails_the_point_and_a_missing_one_is_skipped(tmp_path: Path) -> None:
    ws, results = tmp_path / "ws", tmp_path / "results"
    ws.mkdir()
    log = tmp_path / "process.log"
    assert process_point(ws, _env(), results, log, 4).failure == ""
    assert "the tree has no utils/process_result.py" in log.read_text()
    (ws / "utils").mkdir()
    (ws / "utils" / "process_result.py").write_text("raise SystemExit(3)\n")
    assert "exited with status 3" in process_point(ws, _env(), results, log, 4).failure
    agentic = _env(SCENARIO_TYPE="agentic-coding")
    assert "wrote no pt.json" in process_point(ws, agentic, results, log, 4).failure


def test_eval_artifacts_are_collected_by_the_trees_collector(tmp_path: Path) -> None:
    ws, results = tmp_path / "ws", tmp_path / "job" / "results"
    (ws / "utils").mkdir(parents=True)
    (ws / "utils" / "collect_eval_results.py").write_text(
        "import json, sys, pathlib\n"
        "found = sorted(p.name for p in pathlib.Path(sys.argv[1]).rglob('*.json'))\n"
        "json.dump(found, open('agg_eval_' + sys.argv[2] + '.json', 'w'))\n"
    )
    for name in ("meta_env.json", "results_2026.json"):
        (ws / name).write_text("{}")
    env = _env(EVAL_ONLY="true", RUN_EVAL="true")
    done = process_point(ws, env, results, tmp_path / "process.log", 16)
    assert done.failure == ""
    assert json.loads((results / "agg_eval_conc16.json").read_text()) == [
        "meta_env.json",
        "results_2026.json",
    ]
    artifact = tmp_path / "job" / "eval_results" / "conc16" / "eval_x_1k1k_pt"
    assert sorted(p.name for p in artifact.iterdir()) == ["meta_env.json", "results_2026.json"]
