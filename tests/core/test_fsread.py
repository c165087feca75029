"""read_file: every byte of a regular file, in one read or several, never past its cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inferbench.core.errors import InputError
from inferbench.core.fsread import MiB, read_file


@pytest.mark.parametrize("size", [0, 1, 4096, 8 * MiB - 1, 8 * MiB, 8 * MiB + 1, 9 * MiB])
def test_reads_the_whole_file(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    (tmp_path / "f").write_bytes(data)
    assert read_file(tmp_path / "f", 16 * MiB) == data
    assert read_file(str(tmp_path / "f"), size) == data  # exactly at the cap


def test_refuses_a_file_over_its_cap(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 101)
    with pytest.raises(InputError, match="larger than the 100 bytes"):
        read_file(tmp_path / "f", 100, what="result file")


def test_a_file_whose_size_says_zero_is_read_to_its_end() -> None:
    # /proc files are regular files that report size 0 and hold text
    assert b"Name:" in read_file("/proc/self/status", MiB)


def test_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(InputError, match="not a regular file"):
        read_file(tmp_path / "fifo", MiB)
    with pytest.raises(InputError, match="file not found"):
        read_file(tmp_path / "missing", MiB)


def test_a_file_over_its_cap_is_refused_unread(tmp_path: Path) -> None:
    # a sparse 2 GiB file: reading it would take 2 GiB of memory before refusing it
    big = tmp_path / "big.jsonl"
    with big.open("wb") as f:
        f.truncate(2 * 1024 * MiB)
    before = _rss_peak_kb()
    with pytest.raises(InputError, match="larger than the 1024 MiB"):
        read_file(big, 1024 * MiB, what="dataset")
    assert _rss_peak_kb() - before < 64 * 1024  # nothing like the file was read


def _rss_peak_kb() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
