"""Trace readers, the context rule and the generator, on traces written here."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from inferbench.bench.traces.context import ContextRule
from inferbench.bench.traces.load import load_traces
from inferbench.bench.traces.model import Fork, Turn
from inferbench.bench.traces.source import open_traces, parse_synth, synth_traces
from inferbench.bench.traces.synth import SynthSpec, synth_jsonl
from inferbench.core.errors import InputError

WEKA = {
    "id": "w1",
    "models": ["m"],
    "block_size": 64,
    "hash_id_scope": "local",
    "requests": [
        {
            "t": 0.0,
            "type": "s",
            "model": "m",
            "in": 150,
            "out": 20,
            "hash_ids": [0, 1],
            "api_time": 1.0,
        },
        {
            "t": 3.0,
            "type": "subagent",
            "agent_id": "explore_001",
            "subagent_type": "Explore",
            "status": "completed",
            "models": ["m"],
            "requests": [
                {
                    "t": 3.0,
                    "type": "n",
                    "model": "m",
                    "in": 64,
                    "out": 5,
                    "hash_ids": [0],
                    "api_time": 0.5,
                },
                {
                    "t": 4.0,
                    "type": "n",
                    "model": "m",
                    "in": 100,
                    "out": 5,
                    "hash_ids": [0, 7],
                    "api_time": 0.5,
                    "think_time": 0.5,
                },
            ],
        },
        {
            "t": 3.5,
            "type": "subagent",
            "agent_id": "grep_002",
            "subagent_type": "Grep",
            "status": "completed",
            "models": ["m"],
            "requests": [
                {"t": 3.5, "type": "n", "model": "m", "in": 64, "out": 5, "hash_ids": [0]},
            ],
        },
        {
            "t": 6.0,
            "type": "s",
            "model": "m",
            "in": 200,
            "out": 10,
            "hash_ids": [0, 1, 2],
            "think_time": 1.25,
        },
    ],
}


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_weka_trace_maps_blocks_forks_and_gaps(tmp_path: Path) -> None:
    traces = load_traces(_jsonl(tmp_path / "traces.jsonl", [WEKA]))
    assert traces.format == "weka"
    (trace,) = traces.traces
    first, fork, last = trace.root.steps
    assert isinstance(first, Turn) and isinstance(fork, Fork) and isinstance(last, Turn)
    # 150 tokens over two 64-token blocks: 64 + 64, then a 22-token unhashed tail
    assert [s.length for s in first.prompt] == [64, 64, 22]
    assert [s.key for s in first.prompt[:2]] == [0, 1]
    assert first.delay_s == 0.0 and first.output == 20
    assert [b.name for b in fork.branches] == ["explore_001", "grep_002"]
    assert fork.offsets_s == (0.0, 0.5) and fork.join
    assert fork.delay_s == pytest.approx(2.0)  # t 3.0 after the first request ended at 1.0
    explore = fork.branches[0].steps
    assert explore[1].delay_s == 0.5  # think_time wins
    assert [s.length for s in explore[1].prompt] == [64, 36]
    assert last.delay_s == 1.25 and last.input_len == 200
    assert trace.requests == 5


def test_hugging_face_cache_layout(tmp_path: Path) -> None:
    entry = tmp_path / "hub" / "datasets--org--cc-traces"
    snap = entry / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (entry / "refs").mkdir()
    (entry / "refs" / "main").write_text("abc123")
    _jsonl(snap / "traces.jsonl", [WEKA, {**WEKA, "id": "w2"}])
    traces = open_traces(dataset="org/cc-traces", cache=tmp_path / "hub")
    assert [t.id for t in traces.traces] == ["w1", "w2"]
    with pytest.raises(InputError, match="not in the local cache"):
        open_traces(dataset="org/missing", cache=tmp_path / "hub")


@pytest.mark.parametrize(
    ("row", "line", "key"),
    [
        ({"session": "a", "input": 0, "output": 1}, 2, "input"),
        ({"session": "a", "input": 5}, 2, "output"),
        ({"session": "a", "input": 5, "output": 1, "delay": -1}, 2, "delay"),
        ({"session": "a", "input": 5, "output": 1, "color": "red"}, 2, "color"),
        (
            {"session": "a", "subagent": "s", "input": 5, "output": 1, "shared_prefix": 99},
            2,
            "shared_prefix",
        ),
    ],
)
def test_malformed_turn_lines_name_file_line_and_field(
    tmp_path: Path, row: dict[str, object], line: int, key: str
) -> None:
    path = _jsonl(tmp_path / "t.jsonl", [{"session": "a", "input": 5, "output": 1}, row])
    with pytest.raises(InputError) as info:
        load_traces(path)
    loc = info.value.location
    assert (loc.file, loc.line, loc.key) == (path, line, key)


def test_malformed_weka_request_names_its_nested_field(tmp_path: Path) -> None:
    bad = orjson.loads(orjson.dumps(WEKA))
    bad["requests"][1]["requests"][0]["in"] = -3
    path = _jsonl(tmp_path / "w.jsonl", [WEKA, bad])
    with pytest.raises(InputError) as info:
        load_traces(path)
    assert info.value.location.line == 2
    assert info.value.location.key == "requests.1.subagent.requests.0.n.in"
    (tmp_path / "junk.jsonl").write_text('{"session": "a", "input": 1, "output": 1}\n{oops\n')
    with pytest.raises(InputError, match="not valid JSON") as info:
        load_traces(tmp_path / "junk.jsonl")
    assert info.value.location.line == 2


def test_context_rule_trims_or_rejects(tmp_path: Path) -> None:
    rows = [
        {"session": "a", "input": 100, "output": 10},
        {"session": "a", "input": 100, "output": 10},  # 220 + 10 > 200: cut here
        {"session": "a", "input": 5, "output": 1},
        {"session": "b", "input": 500, "output": 1},  # too long from the start: dropped
        {"session": "c", "input": 10, "output": 1},
    ]
    path = _jsonl(tmp_path / "t.jsonl", rows)
    traces = load_traces(path, max_model_len=200)
    assert [t.id for t in traces.traces] == ["a", "c"]
    assert traces.traces[0].requests == 1
    assert traces.notes == ("context 200: trimmed 3 requests, dropped 1 traces",)
    with pytest.raises(InputError, match="longer than the context") as info:
        load_traces(path, max_model_len=200, rule=ContextRule.REJECT)
    assert info.value.location.line == 2 and info.value.location.key == "a.main"


def test_synth_is_seeded_and_documented_distributions_hold(tmp_path: Path) -> None:
    spec = SynthSpec(sessions=40, seed=7, turns=10, delay=2.0, subagent_p=0.3)
    assert synth_jsonl(spec) == synth_jsonl(spec)
    assert synth_jsonl(spec) != synth_jsonl(spec.model_copy(update={"seed": 8}))
    # session k does not depend on how many sessions are generated
    small = synth_jsonl(spec.model_copy(update={"sessions": 3}))
    assert synth_jsonl(spec).startswith(small)
    traces = synth_traces(spec)
    summary = traces.summary()
    assert 7 <= summary["root_turns_mean"] <= 13
    assert summary["subagent_forks"] > 0
    assert traces.traces[0].longest <= spec.max_context
    path = tmp_path / "s.jsonl"
    path.write_bytes(synth_jsonl(spec))
    assert load_traces(path).summary()["requests"] == summary["requests"]


def test_cli_bad_trace_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from inferbench.cli.main import main

    path = _jsonl(tmp_path / "t.jsonl", [{"session": "a", "input": "x", "output": 1}])
    with pytest.raises(SystemExit) as info:
        main(["traces", "show", "--trace", str(path)])
    assert info.value.code == 2
    assert f"{path}:1: input" in capsys.readouterr().err.replace("\n", "")


def test_cli_show_takes_the_file_as_an_argument(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inferbench.cli.main import main

    path = tmp_path / "s.jsonl"
    path.write_bytes(synth_jsonl(parse_synth("sessions=3,seed=1")))
    shown = []
    for args in ([str(path)], ["--trace", str(path)]):
        with pytest.raises(SystemExit) as info:
            main(["traces", "show", *args])
        assert info.value.code == 0
        shown.append(capsys.readouterr().out)
    assert shown[0] == shown[1] and "longest_request" in shown[0]
    with pytest.raises(SystemExit) as info:
        main(["traces", "show", str(path), "--trace", str(tmp_path / "other.jsonl")])
    assert info.value.code == 2 and "two traces given" in capsys.readouterr().err


def test_a_long_session_shares_its_context_between_turns(tmp_path: Path) -> None:
    # 20,000 turns: copying each turn's context would hold 4e8 segment references
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"session": "s", "input": 3, "output": 2}\n' * 20_000)
    (trace,) = load_traces(path).traces
    turns = [t for _, t in trace.turns()]
    last = turns[-1]
    assert last.input_len == 19_999 * 5 + 3 and len(last.prompt) == 2 * 19_999 + 1
    assert last.prompt.base.base is turns[-2].prompt  # type: ignore[union-attr]  # shared
    assert [s.length for s in turns[2].prompt] == [3, 2, 3, 2, 3]
    assert turns[2].prompt[:2] == tuple(turns[1].prompt)[:2]
    assert trace.longest == last.input_len + 2


def test_a_session_past_the_context_cap_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    path.write_bytes(b'{"session": "s", "input": 4000000, "output": 1}\n' * 3)
    with pytest.raises(InputError) as err:
        load_traces(path)
    said = err.value.render()
    assert f"{path}:3: input" in said and "10,000,000 inferbench replays" in said, said
