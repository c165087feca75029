"""No control, zero-width or bidi character from a user or a store reaches a terminal or a
file name: stored text is printed as escapes, names holding such characters are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inferbench.cli.fit import Col, fit_table
from inferbench.core.printable import printable

from .clirun import run_cli

TITLE_AND_CLEAR = "\x1b]0;owned\x07\x1b[2J"
RTL = "\u202e"


def _sa_bench() -> dict[str, object]:
    """A plain sa-bench summary of 4 requests of 1000 prompt and 1000 output tokens."""
    out: dict[str, object] = {
        "backend": "vllm", "model_id": "m", "num_prompts": 4, "request_rate": "inf",
        "max_concurrency": 8, "duration": 10.0, "completed": 4, "total_input_tokens": 4000,
        "total_output_tokens": 4000, "request_throughput": 0.4, "output_throughput": 400.0,
        "total_token_throughput": 800.0,
    }  # fmt: skip
    for metric in ("ttft", "tpot", "itl", "e2el"):
        out |= {f"{s}_{metric}_ms": 10.0 for s in ("mean", "median", "std", "p99")}
    return out


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain dsr1", "plain dsr1"),
        (f"a{TITLE_AND_CLEAR}b", "a\\x1b]0;owned\\x07\\x1b[2Jb"),
        (f"x{RTL}y\u200bz", "x\\u202ey\\u200bz"),
        ("two\nlines\r", "two\\nlines\\r"),
        ("caf\u00e9 \u4e2d", "caf\u00e9 \u4e2d"),  # letters of any script stay as they are
    ],
)
def test_printable_escapes_only_what_would_act_on_a_terminal(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_a_table_cell_never_carries_an_escape_sequence() -> None:
    fitted = fit_table([Col("model")], [[f"m{TITLE_AND_CLEAR}"]], 80)
    cells = [c.plain for c in fitted.table.columns[0].cells]  # type: ignore[attr-defined]
    assert cells == ["m\\x1b]0;owned\\x07\\x1b[2J"]


def test_results_list_prints_a_stored_escape_sequence_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    path = tmp_path / "p.json"
    path.write_text(json.dumps(_sa_bench()))
    ident = (
        f"model-prefix=dsr1{TITLE_AND_CLEAR},precision=fp8,framework=vllm{RTL},hardware=h200,"
        "isl=1024,osl=1024,conc=8,tp=8"
    )
    ingested = run_cli(["results", "ingest", str(path), "--db", db, "--identity", ident], capsys)
    assert ingested.code == 0, ingested.text
    listed = run_cli(["results", "list", "--db", db], capsys)
    assert listed.code == 0, listed.text
    assert "\x1b" not in listed.text and RTL not in listed.text
    assert "dsr1\\x1b]0;owned" in listed.text


@pytest.mark.parametrize("bad", ["a\nb", f"x{RTL}y", f"z{TITLE_AND_CLEAR}", "zero\u200bwidth"])
def test_bench_refuses_a_label_or_output_name_with_control_characters(
    bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "--base-url", "http://127.0.0.1:9", "--model", "m", "--isl", "8"]
    args += ["--osl", "4", "--num-prompts", "1", "--concurrency", "1"]
    label = run_cli([*args, "--result-dir", str(tmp_path / "d"), "--label", bad], capsys)
    assert label.code == 2 and "--label" in label.text and "fix:" in label.text, label.text
    output = run_cli([*args, "--output", str(tmp_path / f"{bad}.json")], capsys)
    assert output.code == 2 and "--output" in output.text, output.text
    for ran in (label, output):
        assert "\x1b" not in ran.text and RTL not in ran.text and "\u200b" not in ran.text
    assert list(tmp_path.iterdir()) == []
