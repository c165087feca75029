"""The bad-input corpus (tests/cli/corpus.py) through the real CLI, in-process.

Every case must end without a traceback and without hanging, exit 2 for bad input (a
`check` may instead report the broken file as a finding and exit 1), and say where the
problem is (a file, option or key named in the case) and how to fix it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .clirun import run_cli
from .corpus import EXAMPLES, Case, all_cases
from .corpus_known import KNOWN_FAILURES

CASES = all_cases()
FIX_WORDS = ("fix:", "Usage:", "Try '", "hint:")


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 600  # issue 27
    assert len({c.id for c in CASES}) == len(CASES), "case ids are unique"
    assert len({c.args[0] for c in CASES}) >= 10  # commands covered
    assert {c.id for c in CASES} >= KNOWN_FAILURES, "a known failure names no case"


def _prepare(case: Case, tmp: Path) -> list[str]:
    if case.tree:
        shutil.copytree(EXAMPLES, tmp / "tree", ignore=shutil.ignore_patterns("broken"))
    for rel, body in case.files.items():
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body)
    for rel, target in case.links.items():
        link = tmp / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_dir() and not link.is_symlink():
            shutil.rmtree(link)
        link.unlink(missing_ok=True)
        link.symlink_to(target)
    return [a.replace("{tree}", str(tmp / "tree")).replace("{tmp}", str(tmp)) for a in case.args]


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="known, see corpus_known"))
        if c.id in KNOWN_FAILURES
        else c
        for c in CASES
    ],
    ids=[c.id for c in CASES],
)
def test_bad_input(
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
    assert "Traceback" not in text, text
    assert "internal error" not in text, text
    assert ran.code in case.codes, f"exit {ran.code}, wanted {sorted(case.codes)}:\n{text}"
    assert any(w in text for w in case.where), f"names none of {case.where}:\n{text}"
    assert any(w in text for w in FIX_WORDS), f"says no fix:\n{text}"
    assert not any(w in text for w in case.never), f"blames {case.never}:\n{text}"
