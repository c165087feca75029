"""Tables at 80 columns: columns dropped by priority, no key or number broken across lines."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from inferbench.cli.fit import KEEP, Col, fit_table, print_table

from .clirun import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _render(width: int, cols: list[Col], rows: list[tuple[str, ...]]) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    console = Console(file=out, width=width, highlight=False)
    print_table(console, cols, rows, note=Console(file=err, width=width))
    return out.getvalue(), err.getvalue()


def test_columns_go_by_priority_and_prose_wraps() -> None:
    cols = [
        Col("key"),
        Col("fp", priority=3),
        Col("runner", priority=1),
        Col("reason", wrap=True),
    ]
    rows = [("a-very-long-config-key", "0123456789ab", "h200-nv", "the server died at start")]
    out, err = _render(48, cols, rows)
    assert "0123456789ab" not in out and "h200-nv" in out  # fp (3) left before runner (1)
    assert "(fp not shown at 48 columns" in err
    assert all(cell_len(line) <= 48 for line in out.splitlines())
    assert any("a-very-long-config-key" in line for line in out.splitlines())
    first, second = (line.rstrip() for line in out.splitlines()[-2:])
    assert first.endswith("the server died") and second.strip() == "at start"  # between words
    wide, _ = _render(120, cols, rows)
    assert "0123456789ab" in wide and "the server died at start" in wide


def test_kept_columns_print_wider_than_the_terminal_rather_than_break() -> None:
    cols = [Col("key"), Col("conc", wrap=True), Col("fp", priority=1)]
    rows = [("k" * 50, "4, 8, 16", "fp")]
    fitted = fit_table(cols, rows, 30)
    assert fitted.dropped == ("fp",) and fitted.width > 30
    out, _ = _render(30, cols, rows)
    assert any("k" * 50 in line for line in out.splitlines())


def test_headers_wrap_at_spaces_over_narrow_numbers() -> None:
    cols = [Col("conc"), Col("TTFT p50 ms", justify="right")]
    out, _ = _render(80, cols, [("4", "12")])
    assert "…" not in out and "TTFT" in out and "ms" in out
    assert KEEP == 0


def test_sweep_at_80_columns_keeps_every_config_key_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = json.loads(run_cli(["sweep", "--root", str(EXAMPLES), "--format", "json"], capsys).out)
    monkeypatch.setenv("COLUMNS", "80")
    ran = run_cli(["sweep", "--root", str(EXAMPLES)], capsys)
    assert ran.code == 0, ran.text
    lines = ran.out.splitlines()
    assert all(cell_len(line) <= 80 for line in lines)
    starts = {line.split()[0] for line in lines if line.strip()}
    assert {job["config-key"] for job in jobs} <= starts
    assert "not shown at 80 columns" in ran.err  # and it says what it left out


def test_sim_estimate_at_80_columns_keeps_headers_and_numbers(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    ran = run_cli(
        ["sim", "estimate", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100",
         "--isl", "128", "--osl", "16", "--concurrency", "2,1024", "--num-prompts", "16"],
        capsys,
    )  # fmt: skip
    assert ran.code == 0, ran.text
    table = ran.out.splitlines()[1:]  # the line above the table names the deployment
    assert all(cell_len(line) <= 80 for line in table)
    assert "…" not in ran.out
    header = "\n".join(table[:4])
    for word in ("conc", "tok/s/GPU", "TTFT", "p50"):
        assert word in header
    rows = [line.split() for line in table if line.strip().split(" ")[0] in ("2", "1024")]
    assert [r[0] for r in rows] == ["2", "1024"] and len({len(r) for r in rows}) == 1


def test_rule_table_at_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from inferbench.checks.registry import all_rules

    monkeypatch.setenv("COLUMNS", "80")
    ran = run_cli(["check", "--list-rules"], capsys)
    assert ran.code == 0
    firsts = [line.split()[:2] for line in ran.out.splitlines() if line.startswith("IB")]
    assert firsts == [[r.id, r.slug] for r in all_rules()]
    # the descriptions wrap between words: none is cut (one is a 52-character pattern, so
    # this table may be wider than 80)
    words = {w for line in ran.out.splitlines() for w in line.split()}
    assert {w for r in all_rules() for w in r.title.split()} <= words


def test_bench_summary_at_narrow_widths_keeps_every_number_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.testserver import ServerConfig, serve_in_thread

    with serve_in_thread(ServerConfig()) as srv:
        for width, cells in ((80, 9), (50, 6)):  # at 50: in flight, ITL and req/s go
            monkeypatch.setenv("COLUMNS", str(width))
            ran = run_cli(
                ["bench", "--base-url", f"http://127.0.0.1:{srv.port}", "--model", "m",
                 "--isl", "16", "--osl", "4", "--concurrency", "2,64", "--num-prompts", "64",
                 "--output-dir", str(tmp_path / str(width))],
                capsys,
            )  # fmt: skip
            assert ran.code == 0, ran.text
            lines = ran.err.splitlines()  # progress lines, then the table
            first = next(k for k, line in enumerate(lines) if "inferbench bench" in line)
            last = max(k for k, line in enumerate(lines) if line.startswith("conc"))
            assert all(cell_len(line) <= width for line in lines[first : last + 1]), ran.err
            # one line per point with every figure on it: TTFT p50/p99 is one whole cell
            rows = [line.split() for line in lines if line.startswith("conc")]
            assert [r[0] for r in rows] == ["conc2", "conc64"], ran.err
            assert all(len(r) == cells for r in rows), ran.err
            assert all(any(re.fullmatch(r"[\d.]+/[\d.]+", c) for c in r) for r in rows)
    assert "(req/s, ITL p99 ms, in flight max/mean not shown at 50 columns" in ran.err


def test_sweep_topologies_at_80_columns_keeps_topologies_and_numbers_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    args = ["sim", "estimate", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100",
            "--isl", "128", "--osl", "16", "--concurrency", "2,64", "--num-prompts", "16",
            "--sweep-topologies", "--gpu-budget", "4"]  # fmt: skip
    listed = json.loads(run_cli([*args, "--format", "json"], capsys).out)
    ran = run_cli(args, capsys)
    assert ran.code == 0, ran.text
    lines = ran.out.splitlines()
    assert all(cell_len(line) <= 80 for line in lines), ran.out
    topologies = {p["topology"] for p in listed["points"]}
    assert any(" " in t for t in topologies)  # disaggregated: `1P1D TP2/TP2`
    # every row holds its whole topology label and its figures on one line
    rows = [line for line in lines if any(line.startswith(t + " ") for t in topologies)]
    assert {next(t for t in topologies if row.startswith(t + " ")) for row in rows} == topologies
    starred = sum(row.rstrip().endswith("*") for row in rows)
    assert len(rows) == len(listed["points"]) + starred  # the sweep, then its frontier
    assert all(re.search(r"\d[\d,.]*(\s+\*)?\s*$", row) for row in rows)
