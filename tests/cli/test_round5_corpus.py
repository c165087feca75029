"""Issue 40's corpus cases (tests/cli/corpus_round5.py), in the fast tier: each was an
internal error or a silent acceptance; each is now exit 2 with the option or file named and
a fix, never a traceback. (The whole corpus runs in test_bad_input_corpus.py, marked slow.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from .clirun import run_cli
from .corpus import SIM_POINT, Case  # first: it imports every round, this one's too
from .corpus_round5 import round5_cases
from .test_bad_input_corpus import FIX_WORDS, _prepare

CASES = list(round5_cases())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_round5_case(
    case: Case,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INFERBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("INFERBENCH_DB", raising=False)
    ran = run_cli(_prepare(case, tmp_path), capsys)
    text = ran.text
    assert "Traceback" not in text and "internal error" not in text, text
    assert ran.code in case.codes, f"exit {ran.code}, wanted {sorted(case.codes)}:\n{text}"
    assert any(w in text for w in case.where), f"names none of {case.where}:\n{text}"
    assert any(w in text for w in FIX_WORDS), f"says no fix:\n{text}"


OUTPUTS = {
    "sweep": ("sweep", "--root", "{tree}", "--format", "json", "--output"),
    "traces-synth": ("traces", "synth", "--sessions", "2", "--output"),
    "sim-estimate": ("sim", "estimate", *SIM_POINT, "--concurrency", "1", "--output"),
}


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_an_output_folder_made_is_said(
    name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """issue 40: a missing folder of an output file was made without a word."""
    monkeypatch.chdir(tmp_path)
    case = Case(name, (*OUTPUTS[name], "{tmp}/missing/deeper/out.json"), (), tree=True)
    ran = run_cli(_prepare(case, tmp_path), capsys)
    assert ran.code == 0, ran.text
    assert f"folder {tmp_path}/missing/deeper does not exist; it is made" in ran.err, ran.err
    assert (tmp_path / "missing" / "deeper" / "out.json").is_file()
