"""Every shell command block of README.md and docs/*.md runs, with the exit code the doc says.

Each block runs in a fresh sandbox: a copy of `examples/` in a temporary folder, made a git
repository whose HEAD appends the changelog's last entry to `origin/main` (so
`--base origin/main` and `--changed-since origin/main` see a pull request), with this
checkout's `inferbench` on PATH. Commands of a
block run in order in one bash (a variable set by one is seen by the next); each must exit
as the block's annotation says (see blocks.py). A block that cannot run here (a GPU, a
cluster, a long benchmark) is annotated `skip="reason"`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from blocks import AnnotationError, Block, doc_files, read_blocks

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = [block for path in doc_files(ROOT) for block in read_blocks(path, ROOT)]
_HOW = (
    "if the doc is right, annotate the block on the line above its fence with "
    '<!-- doc-test: exit=N --> (or exit=0,1,... per command, or skip="reason"); '
    "see tests/docs/blocks.py"
)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=doc-test", "-c", "user.email=doc-test@example.org", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _sandbox(tmp: Path) -> Path:
    """A fresh copy of examples/ as a pull request would have it: origin/main is the tree
    without the changelog's last entry, HEAD appends it."""
    work = tmp / "work"
    shutil.copytree(ROOT / "examples", work / "examples")
    changelog = work / "examples" / "perf-changelog.yaml"
    full = changelog.read_text()
    last = full.rstrip().rfind("\n- ")
    changelog.write_text(full[: last + 1])
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "examples")
    _git(work, "update-ref", "refs/remotes/origin/main", "HEAD")
    changelog.write_text(full)
    _git(work, "commit", "-q", "-am", "append a changelog entry")
    return work


def _script(block: Block, logs: Path) -> str:
    lines = []
    for i, command in enumerate(block.commands):
        lines.append(f"{{ {command}\n}} > {logs}/{i}.out 2>&1 < /dev/null")
        lines.append(f'echo "$?" >> {logs}/codes')
    return "\n".join(lines) + "\n"


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_command_block_runs_as_documented(block: Block, tmp_path: Path) -> None:
    if block.skip is not None:
        pytest.skip(block.skip)
    work = _sandbox(tmp_path)
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "COLUMNS": "120",
    }
    proc = subprocess.Popen(
        ["bash", "-c", _script(block, logs)], cwd=work, env=env, start_new_session=True
    )
    try:
        proc.wait(timeout=block.timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the block's servers and children too
        proc.wait()
    codes_file = logs / "codes"
    codes = [int(c) for c in codes_file.read_text().split()] if codes_file.is_file() else []
    if len(codes) < len(block.commands):
        pytest.fail(
            f"{block.id}: `{block.commands[len(codes)]}` still ran after {block.timeout_s:g} s; "
            f"make it shorter, or raise the block's timeout=; {_HOW}"
        )
    expected = block.expected()
    for i, (command, want, got) in enumerate(zip(block.commands, expected, codes, strict=True)):
        out = (logs / f"{i}.out").read_text(errors="replace")
        assert "Traceback (most recent call last)" not in out, f"{block.id}: {command}\n{out}"
        assert got == want, (
            f"{block.id}: `{command}` exited {got}, the doc says {want}; {_HOW}\n{out[-3000:]}"
        )


def test_every_doc_block_parses() -> None:
    assert BLOCKS and all(b.commands for b in BLOCKS)
    assert any(b.file == Path("README.md") for b in BLOCKS)


def test_annotations_are_read(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "text\n"
        "<!-- doc-test: exit=0,2 timeout=9 -->\n"
        "```bash\n"
        "# a comment\n"
        "inferbench check --root x \\\n"
        "    --strict\n"
        "\n"
        "inferbench sweep --bogus\n"
        "```\n"
        "```yaml\n"
        "not: run\n"
        "```\n"
        '<!-- doc-test: skip="needs a GPU" -->\n'
        "```sh\n"
        "vllm serve m\n"
        "```\n"
    )
    first, second = read_blocks(Path("doc.md"), tmp_path)
    assert first.commands == (
        "inferbench check --root x \\\n    --strict",
        "inferbench sweep --bogus",
    )
    assert first.expected() == [0, 2] and first.timeout_s == 9 and first.line == 3
    assert second.skip == "needs a GPU" and second.commands == ("vllm serve m",)
    doc.write_text("<!-- doc-test: exits=1 -->\n```bash\ntrue\n```\n")
    with pytest.raises(AnnotationError, match="unknown doc-test annotation"):
        read_blocks(Path("doc.md"), tmp_path)
    doc.write_text("<!-- doc-test: exit=1,2 -->\n```bash\ntrue\n```\n")
    with pytest.raises(AnnotationError, match="2 codes for 1 commands"):
        read_blocks(Path("doc.md"), tmp_path)
