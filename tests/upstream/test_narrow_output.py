"""`sweep` and `check` of the real InferenceX tree in an 80-column log: every config key on
one line (they are up to 64 characters; Rich used to fold them into 4-letter fragments)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _inferbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=600,
    )  # fmt: skip


def test_sweep_keeps_every_config_key_on_one_line(inferencex_tree: Path, tmp_path: Path) -> None:
    root = str(inferencex_tree)
    jobs = json.loads(_inferbench("sweep", "--root", root, "--format", "json", cwd=tmp_path).stdout)
    table = _inferbench("sweep", "--root", root, cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    keys = {job["config-key"] for job in jobs}
    rows = [line.split()[0] for line in lines[3:] if line[:1].strip()]  # a row starts a job
    assert len(rows) == len(jobs) and set(rows) == keys
    assert max(len(line) for line in lines) <= 80  # the longest key fits beside seq and conc
    assert len(lines) < 3 * len(jobs)  # not 14,273 lines of fragments


def test_check_text_keeps_each_finding_on_one_line(inferencex_tree: Path, tmp_path: Path) -> None:
    root = str(inferencex_tree)
    as_json = _inferbench("check", "--root", root, "--format", "json", cwd=tmp_path)
    found = json.loads(as_json.stdout)
    text = _inferbench("check", "--root", root, cwd=tmp_path)
    lines = set(text.stdout.splitlines())
    for f in found:
        key = f" [{f['key']}]" if f["key"] else ""
        head = f"{f['rule']} {f['severity']} {f['slug']}: {f['message']}{key}"
        assert any(line.endswith(head) for line in lines), head
    stats = _inferbench("check", "--root", root, "--statistics", cwd=tmp_path)
    assert stats.returncode == text.returncode
    counted = [line.split() for line in stats.stdout.splitlines()[:-1]]
    assert sum(int(c[0]) for c in counted) == len(found)
    assert stats.stdout.splitlines()[-1] == text.stdout.splitlines()[-1].split(" Most:")[0]
