"""Trace readers beyond Weka: Mooncake request traces and BurstGPT logs, read from small
fixtures written here in each published format, and replayed against a real HTTP server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inferbench.bench.traces.load import load_traces
from inferbench.bench.traces.model import Segment
from inferbench.core.errors import InputError

# Mooncake's published fields (FAST'25 traces): ms timestamps, 512-token hash blocks
MOONCAKE = [
    {"timestamp": 0, "input_length": 1200, "output_length": 12, "hash_ids": [0, 1, 2]},
    {"timestamp": 250, "input_length": 700, "output_length": 30, "hash_ids": [0, 3]},
    {"timestamp": 100, "input_length": 1100, "output_length": 0, "hash_ids": [0, 1]},
]
# BurstGPT's published header and rows (a 0-token response is a failed request)
BURSTGPT = (
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
    "5,ChatGPT,472,18,490,Conversation log\n"
    "45,GPT-4,1087,0,1087,Conversation log\n"
    "3,ChatGPT,300,120,420,API log\n"
)


def _mooncake(tmp_path: Path, rows: list[dict[str, object]] = MOONCAKE) -> Path:
    path = tmp_path / "conversation_trace.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_mooncake_requests_share_their_hashed_blocks_in_arrival_order(tmp_path: Path) -> None:
    traces = load_traces(_mooncake(tmp_path))
    assert traces.format == "mooncake" and len(traces.traces) == 3
    assert all(t.scope == "global" for t in traces.traces)  # ids are shared trace-wide
    turns = [t.turns()[0][1] for t in traces.traces]
    assert [t.line for t in turns] == [1, 3, 2]  # by timestamp: 0, 100, 250 ms
    first, second, third = turns
    assert first.prompt[:3] == (Segment(0, 512), Segment(1, 512), Segment(2, 176))
    assert second.prompt[:2] == (Segment(0, 512), Segment(1, 512))  # the shared prefix
    assert second.prompt[2].length == 76 and second.prompt[2].key > 2  # its own tail
    assert third.input_len == 700 and third.output == 30
    assert second.output == 1  # a 0-token answer still asks for one token


def test_burstgpt_rows_are_requests_without_reuse(tmp_path: Path) -> None:
    path = tmp_path / "BurstGPT_1.csv"
    path.write_text(BURSTGPT)
    traces = load_traces(path)
    assert traces.format == "burstgpt"
    turns = [t.turns()[0][1] for t in traces.traces]
    assert [(t.input_len, t.output, t.line) for t in turns] == [(300, 120, 4), (472, 18, 2)]
    assert len({t.prompt[0].key for t in turns}) == 2  # no two prompts alike


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        (
            "x.jsonl",
            '{"timestamp": 0, "input_length": 0, "output_length": 5}\n',
            "x.jsonl:1: input_length",
        ),
        ("x.jsonl", '{"timestamp": -1, "input_length": 9, "output_length": 5}\n', "timestamp"),
        ("x.csv", "a,b,c\n1,2,3\n", "unknown CSV trace format"),
        ("x.csv", BURSTGPT.replace("472", "many"), "Request tokens"),
    ],
)
def test_a_bad_record_is_named_with_its_line(
    tmp_path: Path, name: str, text: str, says: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_traces(path)
    assert says in err.value.render(), err.value.render()


@pytest.mark.integration
def test_a_mooncake_trace_replays_with_prefix_reuse(tmp_path: Path) -> None:
    model = "meta-llama/Llama-3.1-8B-Instruct"
    serve = [sys.executable, "-m", "inferbench.cli.main", "sim", "serve", "--port", "0"]
    serve += ["--model", model, "--gpu", "h100", "--max-model-len", "4096"]
    proc = subprocess.Popen(serve, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().rsplit(" ", 1)[-1]
        out = tmp_path / "replay.json"
        ran = subprocess.run(
            [sys.executable, "-m", "inferbench.cli.main", "replay", "--base-url", url,
             "--model", model, "--trace", str(_mooncake(tmp_path)), "--concurrency", "1",
             "--sessions", "3", "--output", str(out)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        result = json.loads(out.read_text())
        assert result["completed"] == 3 and result["failed"] == 0
        agentic = result["inferbench"]["agentic"]
        assert agentic["trace_format"] == "mooncake" and agentic["requests"] == 3
        # sent before: blocks 0 and 1 of the second request, block 0 of the third
        assert agentic["reused_prompt_tokens"] == 1536 and agentic["client_reuse_share"] > 0
    finally:
        proc.terminate()
        proc.wait(timeout=30)
