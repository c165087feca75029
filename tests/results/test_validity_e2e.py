"""A server that answers every request with no generated token yields an invalid point:
stored as invalid with the reason, listed as invalid, left out of comparisons and never
drawn in the report. The server is `inferbench sim serve --fault-empty-rate 1`, a real HTTP
server, measured by `inferbench bench` as any engine is."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from cli_helper import run_cli
from results_fixtures import sa_bench, write_json

from inferbench.report import build_report

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
IDENT = (
    "model-prefix=llama8b,precision=bf16,framework=vllm,hardware=h100,isl=128,osl=16,conc=4,tp=1"
)


@contextmanager
def _serve(*faults: str) -> Iterator[str]:
    args = ["--model", MODEL, "--gpu", "h100", "--isl", "128", "--osl", "16"]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "inferbench.cli.main",
            "sim",
            "serve",
            "--port",
            "0",
            *args,
            *faults,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("inferbench sim: listening on http://127.0.0.1:"), line
        yield line.strip().rsplit(" ", 1)[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _bench(url: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "bench", "--base-url", url, "--model", MODEL,
         "--isl", "128", "--osl", "16", "--concurrency", "4", "--num-prompts", "16",
         "--output", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.integration
def test_empty_completions_are_stored_invalid_and_never_compared_or_drawn(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with _serve() as url:
        healthy = _bench(url, tmp_path / "base" / "point.json")
    assert healthy.returncode == 0, healthy.stderr
    with _serve("--fault-empty-rate", "1") as url:
        empty = _bench(url, tmp_path / "head" / "point.json")
    assert empty.returncode == 1 and "no generated content" in empty.stdout + empty.stderr
    for run in ("base", "head"):
        res = run_cli(
            "results", "ingest", str(tmp_path / run), "--db", db, "--identity",
            f"{IDENT},run-id={run}",
        )  # fmt: skip
        assert res.code == 0, res

    listed = json.loads(run_cli("results", "list", "--db", db, "--format", "json").out)
    by_run = {p["run_id"]: p for p in listed["points"]}
    assert by_run["base"]["valid"] is True and by_run["base"]["invalid_reasons"] is None
    assert by_run["head"]["valid"] is False
    assert "no request completed" in by_run["head"]["invalid_reasons"]
    table = run_cli("results", "list", "--db", db)
    assert (
        "1 invalid (never drawn or compared" in table.out and str(by_run["head"]["id"]) in table.out
    )

    cmp = json.loads(
        run_cli("results", "compare", "base", "head", "--db", db, "--format", "json").out
    )
    assert cmp["points"] == [] and cmp["only_base"]  # the head's point is not compared
    assert [i["side"] for i in cmp["invalid"]] == ["head"]
    assert "no request completed" in cmp["invalid"][0]["reasons"]
    text = " ".join(run_cli("results", "compare", "base", "head", "--db", db).out.split())
    assert "left out, invalid in head: " in text and "no request completed" in text

    paths = build_report(db, tmp_path / "report", plots=False)
    html = paths.dashboard.read_text()
    data = json.loads(html.split('id="ib-data">', 1)[1].split("</script>", 1)[0])
    # the point's latest measurement is the invalid one: listed with its reason, not drawn
    assert paths.stored == 2 and paths.points == 0 and data["points"]["c"] == []
    assert len(data["invalid"]) == 1 and data["invalid"][0].startswith("head llama8b 128/16")
    assert "no request completed" in data["invalid"][0]


def test_a_plain_sa_bench_file_with_no_generated_token_is_stored_invalid(tmp_path: Path) -> None:
    # sa-bench counts a request whose stream ended as a success, even with no token in it
    # (the KV-transfer failure of NVIDIA/srt-slurm#429): the ingest judges it anyway
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    empty = sa_bench(
        conc=8, total_output_tokens=0, output_throughput=0.0, total_token_throughput=400.0,
        output_lens=[0, 0, 0, 0], itls=[[], [], [], []],
    )  # fmt: skip
    path = write_json(tmp_path / "empty.json", empty)
    ident = (
        "model-prefix=dsr1,precision=fp8,framework=vllm,hardware=h200,isl=1024,osl=1024,conc=8,tp=8"
    )
    assert run_cli("results", "ingest", str(path), "--db", db, "--identity", ident).code == 0
    shown = json.loads(run_cli("results", "show", "1", "--db", db).out)
    assert shown["validity"]["valid"] is False
    assert shown["validity"]["reasons"][0].startswith("the server generated no tokens (4 requests")
