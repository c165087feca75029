"""Every input a command reads is a regular file, read with a cap: a FIFO nobody writes to,
a device that never ends (/dev/zero) or a folder is refused by name, unread, exit 2."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from inferbench.core.errors import InputError
from inferbench.core.fsread import read_file

from .clirun import run_cli
from .corpus import EXAMPLES

SIM = ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--isl", "64"]
SIM += ["--osl", "8", "--concurrency", "1"]
BENCH = ["bench", "--base-url", "http://127.0.0.1:9", "--model", "m", "--isl", "8", "--osl"]
BENCH += ["4", "--num-prompts", "1", "--concurrency", "1"]

# (id, command line with {} where the input goes)
READERS: list[tuple[str, list[str]]] = [
    ("bench-config", ["bench", "--model", "m", "--config", "{}"]),
    ("bench-dataset", [*BENCH, "--dataset-name", "custom", "--dataset", "{}"]),
    ("sim-calibration", ["sim", "estimate", *SIM, "--calibration", "{}"]),
    ("sim-job", ["sim", "estimate", "--job", "{}"]),
    ("sim-recipe", ["sim", "estimate", "--concurrency", "1", "--recipe", "{}"]),
    ("sim-calibrate-points", ["sim", "calibrate", "{}", "-o", "cal.yaml"]),
    ("results-ingest", ["results", "ingest", "{}", "--db", "sqlite:///r.sqlite"]),
    (
        "replay-trace",
        [
            "replay",
            "--base-url",
            "http://127.0.0.1:9",
            "--model",
            "m",
            "--concurrency",
            "1",
            "--trace",
            "{}",
        ],
    ),  # fmt: skip
    ("traces-show", ["traces", "show", "--trace", "{}"]),
    ("report-prices", ["report", "--db", "sqlite:///r.sqlite", "--prices", "{}"]),
]
FOLDERS_OK = {"results-ingest", "replay-trace", "traces-show"}  # a folder of files is input


def _device(path: Path) -> Path:
    """A /dev/zero at `path` where mknod is allowed (root), else /dev/zero itself."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 5))
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EACCES):
            raise
        return Path("/dev/zero")
    return path


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INFERBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("INFERBENCH_DB", raising=False)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
@pytest.mark.parametrize(("reader", "args"), READERS, ids=[r[0] for r in READERS])
def test_an_input_that_is_no_regular_file_is_refused_unread(
    reader: str, args: list[str], kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if kind == "directory" and reader in FOLDERS_OK:
        pytest.skip("a folder of files is what this option reads")
    target = tmp_path / "input.yaml"
    if kind == "fifo":
        os.mkfifo(target)  # nobody writes: opened for reading, it would block for ever
        said = "is a FIFO"
    elif kind == "device":
        target = _device(target)
        said = "is a character device"
    else:
        target.mkdir()
        said = "is a directory"
    ran = run_cli([a.replace("{}", str(target)) for a in args], capsys)
    assert ran.code == 2, ran.text
    assert said in ran.text and str(target) in ran.text and "fix:" in ran.text, ran.text
    assert "not found" not in ran.text and "Traceback" not in ran.text


@pytest.mark.timeout(60)
def test_a_fifo_in_an_ingest_folder_is_skipped_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    os.mkfifo(folder / "x.json")
    ran = run_cli(["results", "ingest", str(folder), "--db", "sqlite:///r.sqlite"], capsys)
    assert "x.json: is a FIFO" in " ".join(ran.text.split()), ran.text
    assert ran.code in (1, 2) and "Traceback" not in ran.text


@pytest.mark.timeout(60)
@pytest.mark.parametrize("root", ["masters", "clusters"])
def test_a_fifo_a_tree_glob_matches_is_named_not_skipped(
    root: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Skipped, a FIFO'd master would take its configs out of check and sweep silently."""
    import shutil

    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree, ignore=shutil.ignore_patterns("broken"))
    fifo = tree / ("configs/amd-master.yaml" if root == "masters" else "clusters/x.yaml")
    os.mkfifo(fifo)
    for command in (["check", str(tree)], ["sweep", "--root", str(tree)]):
        ran = run_cli(command, capsys)
        assert ran.code == 2, ran.text
        assert f"{fifo}: is a FIFO" in ran.text, ran.text


def test_read_file_stops_at_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 1000)
    assert read_file(path, 1000) == b"x" * 1000
    with pytest.raises(InputError, match="larger than the 999 bytes"):
        read_file(path, 999)


def test_a_huge_config_is_refused_without_being_read(tmp_path: Path) -> None:
    """A sparse 20 GiB file: read whole it would take the machine's memory."""
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(20 * 2**30)
    with pytest.raises(InputError, match="larger than"):
        read_file(path, 2**20)
