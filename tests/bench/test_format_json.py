"""`bench --format json` and `sim estimate --format json`: one JSON document on stdout, the
same shape for both (inferbench.bench.points_json), with each point's result file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.testserver import TestServer
from inferbench.bench.points_json import SCHEMA
from inferbench.cli.main import main


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(args)
    code = exc.value.code
    out = capsys.readouterr()
    return (code if isinstance(code, int) else 1), out.out, out.err


def test_bench_json_holds_each_point_and_its_file(
    server: TestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "--base-url", f"http://127.0.0.1:{server.port}", "--model", "org/Tiny-1B"]
    args += ["--isl", "64", "--osl", "8", "--concurrency", "1,2", "--num-prompts", "4"]
    args += ["--output-dir", str(tmp_path / "d"), "--disable-tqdm", "--format", "json"]
    code, out, err = _run(args, capsys)
    assert code == 0, err
    doc = json.loads(out)  # stdout is the document and nothing else
    assert doc["schema"] == SCHEMA and doc["command"] == "bench"
    assert [(p["point"], p["repeat"]) for p in doc["points"]] == [("conc1", 1), ("conc2", 1)]
    for p in doc["points"]:
        written = json.loads(Path(p["file"]).read_text())
        assert p["result"] == written  # the result file, as written
        assert p["result"]["completed"] == 4 and p["result"]["inferbench"]["complete"]
    assert "inferbench bench" in err  # the table stays on stderr


def test_bench_json_without_a_file_and_with_repeats(
    server: TestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "--base-url", f"http://127.0.0.1:{server.port}", "--model", "org/Tiny-1B"]
    args += ["--isl", "32", "--osl", "4", "--concurrency", "2", "--num-prompts", "2"]
    code, out, err = _run([*args, "--repeats", "2", "--disable-tqdm", "--format", "json"], capsys)
    assert code == 0, err
    points = json.loads(out)["points"]
    assert [(p["point"], p["repeat"], p["file"]) for p in points] == [
        ("conc2", 1, None),
        ("conc2", 2, None),
    ]
    assert all(p["result"]["max_concurrency"] == 2 for p in points)


def test_bench_json_refuses_a_second_writer_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "--base-url", "http://127.0.0.1:9", "--model", "m", "--isl", "8"]
    code, out, err = _run([*args, "--osl", "4", "--output", "-", "--format", "json"], capsys)
    assert code == 2 and out == ""
    assert "--format json and --output - both write to stdout" in err
    code, _, err = _run([*args, "--osl", "4", "--format", "yaml"], capsys)
    assert code == 2 and "unknown --format 'yaml'" in err


SIM = ["sim", "estimate", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h200"]
SIM += ["--isl", "256", "--osl", "32", "--num-prompts", "16"]


def test_sim_estimate_json_has_the_table_figures_and_the_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, table, err = _run([*SIM, "--concurrency", "4x8"], capsys)
    assert code == 0, err
    code, out, err = _run(
        [*SIM, "--concurrency", "4x8", "--format", "json", "--output-dir", str(tmp_path)], capsys
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == SCHEMA and doc["command"] == "sim estimate"
    assert [p["point"] for p in doc["points"]] == ["conc4", "conc8"]
    for p in doc["points"]:
        figures = p["estimate"]
        assert figures["requests"] == 16 and figures["total_tok_s_per_gpu"] > 0
        assert p["result"]["max_concurrency"] == figures["concurrency"]
        assert p["result"]["completed"] == 16
        assert json.loads(Path(p["file"]).read_text()) == p["result"]
        # the virtual clock is seeded: the table printed the same figures
        assert f"{figures['total_tok_s_per_gpu']:,.0f}" in table


def test_sweep_topologies_json_holds_every_layout_and_the_frontier(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [*SIM, "--sweep-topologies", "--concurrency", "8", "--gpu-budget", "2"]
    code, table, err = _run(args, capsys)
    assert code == 0, err
    code, out, err = _run([*args, "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)  # stdout holds the document only
    assert doc["schema"] == "inferbench.topologies/1" and doc["gpu_budget"] == 2
    assert doc["concurrencies"] == [8] and doc["isl"] == 256 and doc["osl"] == 32
    points = doc["points"]
    layouts = {p["topology"] for p in points}
    assert {"TP1", "TP2"} <= layouts and all(p["concurrency"] == 8 for p in points)
    rates = [p["total_tok_s_gpu"] for p in points]
    assert rates == sorted(rates, reverse=True)  # as the table orders them
    front = [p for p in points if p["pareto"]]
    assert front and front[0] is points[0]  # the fastest point is always on the frontier
    for p in points:  # the table printed the same figures, frontier included
        assert f"{p['total_tok_s_gpu']:,.0f}" in table
    assert f"Pareto frontier: {len(front)} of {len(points)} points" in table


def test_agentic_estimate_json_holds_each_lane_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = {
        "model": "meta-llama/Llama-3.1-8B-Instruct", "precision": "bf16", "runner": "h200",
        "framework": "vllm", "tp": 1, "conc": 2, "scenario-type": "agentic-coding",
    }  # fmt: skip
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    args = ["sim", "estimate", "--job", str(path), "--concurrency", "1,2", "--sessions", "2"]
    args += ["--synth", "sessions=4,turns=2", "--output-dir", str(tmp_path / "out")]
    code, out, err = _run([*args, "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == SCHEMA and [p["point"] for p in doc["points"]] == ["conc1", "conc2"]
    for p in doc["points"]:
        figures = p["estimate"]
        assert figures["lanes"] == p["result"]["max_concurrency"]
        assert figures["requests"] > 0 and figures["output_tok_s_per_gpu"] > 0
        assert p["result"]["inferbench"]["agentic"]["requests"] == figures["requests"]
        assert json.loads(Path(p["file"]).read_text()) == p["result"]
