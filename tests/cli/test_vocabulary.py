"""One spelling per idea across commands (src/inferbench/cli/vocabulary.yaml), and the old
spellings that still work with a note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inferbench.cli.reference import command_docs
from inferbench.cli.vocabulary import (
    OptionUse,
    deprecated_problems,
    parse,
    problems,
    rewrite,
    vocabulary,
)

from .clirun import run_cli

FIX = "see src/inferbench/cli/vocabulary.yaml"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _uses() -> list[OptionUse]:
    return [
        OptionUse(" ".join(doc.path), p.names, p.hidden)
        for doc in command_docs()
        for p in doc.params
        if not p.argument and doc.path
    ] + [
        OptionUse("", p.names, p.hidden)  # the root's own options
        for doc in command_docs()
        if not doc.path
        for p in doc.params
    ]


def test_every_option_is_spelled_as_the_vocabulary_says() -> None:
    found = problems(_uses(), vocabulary())
    assert not found, "; ".join(found) + f"; {FIX}"


def test_every_old_spelling_has_its_new_one() -> None:
    found = deprecated_problems(_uses(), vocabulary())
    assert not found, "; ".join(found) + f"; {FIX}"


TOY = parse(
    {
        "ideas": {
            "concurrency": {
                "option": "--concurrency",
                "ecosystem": {"--max-concurrency": {"commands": ["bench"], "from": "vLLM"}},
                "deprecated": {"--conc": {"commands": ["sweep"]}},
            },
            "output": {"option": "--output", "short": "-o"},
        },
        "options": {"--seed": "seed", "--plots": "plots"},
    }
)


def _toy(*uses: tuple[str, tuple[str, ...]]) -> list[str]:
    base = [OptionUse("x", ("--seed",), False), OptionUse("x", ("--plots", "--no-plots"), False)]
    return problems(base + [OptionUse(c, n, False) for c, n in uses], TOY)


def test_the_check_finds_two_spellings_of_one_idea() -> None:
    fine = ("bench", ("--concurrency", "--max-concurrency")), ("run", ("--output", "-o"))
    assert _toy(*fine) == []
    # the old spelling back as an option
    assert _toy(("sweep", ("--conc",))) == [
        "inferbench sweep --conc: deprecated spelling of --concurrency; name the option"
        " --concurrency"
    ]
    # another tool's spelling outside the commands that take it
    assert _toy(("sweep", ("--concurrency", "--max-concurrency"))) == [
        "inferbench sweep --concurrency: --max-concurrency is a second spelling; drop it, or list"
        " it in vocabulary.yaml as another tool's spelling (ecosystem) for this command"
    ]
    # a spelling that is some idea's other name, as the primary one
    assert _toy(("replay", ("--max-concurrency",))) == [
        "inferbench replay --max-concurrency: not in the vocabulary; another spelling of"
        " --concurrency"
    ]
    # a new spelling nobody listed
    assert _toy(("eval", ("--lanes",))) == [
        "inferbench eval --lanes: not in the vocabulary; use the spelling of its idea, or add it"
        " to vocabulary.yaml"
    ]
    # a short form that belongs to another idea
    assert _toy(("eval", ("--concurrency", "-o")))[0].startswith(
        "inferbench eval --concurrency: -o is a second spelling"
    )


def test_the_check_finds_stale_entries() -> None:
    assert problems([OptionUse("x", ("--seed",), False)], TOY) == [
        "vocabulary: --plots is listed but no command has it"
    ]
    assert deprecated_problems([OptionUse("sweep", ("--seed",), False)], TOY) == [
        "inferbench sweep lacks --concurrency (--conc)"
    ]


def test_rewrite_replaces_old_spellings_only_before_a_double_dash() -> None:
    args, notes = rewrite("plan", ["--json", "--json", "--root", "x", "--", "--json"])
    assert args == ["--format", "json", "--format", "json", "--root", "x", "--", "--json"]
    assert notes == [
        "inferbench plan: --json is deprecated, use --format json (the old spelling still"
        " works for now)"
    ]
    assert rewrite("sweep", ["--conc=4,8", "--max-conc", "16"])[0] == [
        "--concurrency=4,8",
        "--max-concurrency",
        "16",
    ]
    assert rewrite("bench", ["--conc", "4"]) == (["--conc", "4"], [])  # not bench's


def _jobs(out: str) -> list[tuple[str, int]]:
    return sorted((job["config-key"], job["conc"]) for job in json.loads(out))


def test_an_old_spelling_works_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["sweep", "--root", str(EXAMPLES), "--single-node", "--format", "json"]
    new = run_cli([*base, "--max-concurrency", "8"], capsys)
    old = run_cli([*base, "--max-conc", "8"], capsys)
    assert new.code == old.code == 0, new.err + old.err
    assert _jobs(old.out) == _jobs(new.out)
    assert max(conc for _, conc in _jobs(new.out)) <= 8
    assert new.err.count("deprecated") == 0
    assert old.err.count("\n") >= 1
    assert "--max-conc is deprecated, use --max-concurrency" in old.err


def test_an_old_spelling_of_a_subcommand(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "one.json"
    ran = run_cli(
        [
            "sim",
            "estimate",
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--gpu",
            "h200",
            "--isl",
            "128",
            "--osl",
            "16",
            "--concurrency",
            "4",
            "--num-prompts",
            "8",
            "--result-file",
            str(out),
        ],
        capsys,
    )
    assert ran.code == 0, ran.text
    assert "inferbench sim estimate: --result-file is deprecated, use --output" in ran.err
    assert json.loads(out.read_text())["max_concurrency"] == 4


def test_a_bench_config_file_takes_the_old_names_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`result-file:` in a --config file written before the rename is --output: two points
    to one stream is refused naming --output, before any request is sent."""
    config = tmp_path / "bench.yaml"
    config.write_text("result-file: /dev/stdout\nconcurrency: [1, 2]\n")
    args = ["bench", "--config", str(config), "--base-url", "http://127.0.0.1:9"]
    ran = run_cli([*args, "--model", "m", "--isl", "8", "--osl", "4", "--num-prompts", "1"], capsys)
    assert ran.code == 2, ran.text
    assert "--output /dev/stdout is a stream, and 2 points need a file each" in ran.err
