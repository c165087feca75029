"""What a tree looked like at a base revision, read with a handful of git calls.

`read_base` answers two questions for the changelog rules: the text of a few files at the base
(master configs, the changelog) and which files under the tree changed since (tracked edits plus
new untracked files). It runs git five times whatever the size of the tree.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from inferbench.errors import ExternalToolError, InputError


@dataclass(frozen=True)
class GitBase:
    """The base revision: its name, commit, the base text of requested files, changed files."""

    rev: str
    commit: str
    toplevel: Path
    texts: dict[Path, str | None]
    changed: frozenset[Path]

    def text(self, path: Path) -> str | None:
        """The file's text at the base, or None when it did not exist there."""
        return self.texts.get(path.resolve())


def _git(
    args: Sequence[str], cwd: Path, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    exe = shutil.which("git")
    if exe is None:
        raise ExternalToolError("git is not installed", hint="install git to use --base")
    return subprocess.run(
        [exe, *args], cwd=cwd, input=stdin, capture_output=True, check=False, timeout=60
    )


def _toplevel(root: Path) -> Path:
    proc = _git(["rev-parse", "--show-toplevel"], root)
    if proc.returncode != 0:
        raise InputError(
            f"{root} is not inside a git repository, so --base cannot be read",
            hint="run inside a git checkout of the benchmark tree, or drop --base",
        )
    return Path(proc.stdout.decode().strip()).resolve()


def _commit(top: Path, rev: str) -> str:
    if rev.startswith("-"):
        raise InputError(f"git base {rev!r} is not a revision", hint="pass a branch, tag or sha")
    proc = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], top)
    if proc.returncode != 0:
        raise InputError(
            f"git base {rev!r} does not exist in {top}",
            hint="fetch it first (e.g. `git fetch origin main`) or pass an existing revision",
        )
    return proc.stdout.decode().strip()


def _changed(top: Path, commit: str, root: Path) -> frozenset[Path]:
    rel = root.relative_to(top).as_posix() or "."
    diff = _git(["diff", "--name-only", "-z", "--no-renames", commit, "--", rel], top)
    new = _git(["ls-files", "--others", "--exclude-standard", "-z", "--", rel], top)
    for proc in (diff, new):
        if proc.returncode != 0:
            raise ExternalToolError(f"git failed: {proc.stderr.decode().strip()}")
    names = [n for out in (diff.stdout, new.stdout) for n in out.decode().split("\0") if n]
    return frozenset((top / n).resolve() for n in names)


def _blobs(top: Path, commit: str, paths: Sequence[Path]) -> dict[Path, str | None]:
    """The text of each path at `commit` via one `git cat-file --batch` call."""
    if not paths:
        return {}
    rels = [p.resolve().relative_to(top).as_posix() for p in paths]
    request = "".join(f"{commit}:{rel}\n" for rel in rels).encode()
    proc = _git(["cat-file", "--batch"], top, stdin=request)
    if proc.returncode != 0:
        raise ExternalToolError(f"git cat-file failed: {proc.stderr.decode().strip()}")
    out, pos = proc.stdout, 0
    texts: dict[Path, str | None] = {}
    for path in paths:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode().split()
        pos = end + 1
        if len(header) == 3 and header[1] == "blob":
            size = int(header[2])
            texts[path.resolve()] = out[pos : pos + size].decode("utf-8", errors="replace")
            pos += size + 1
        else:  # "<name> missing" (or a tree): absent at the base
            texts[path.resolve()] = None
    return texts


def read_base(root: Path, rev: str, paths: Sequence[Path]) -> GitBase:
    """Read `paths` (files under `root`) at `rev` and list the files under `root` changed since."""
    root = root.resolve()
    top = _toplevel(root)
    commit = _commit(top, rev)
    inside = [p for p in paths if p.resolve().is_relative_to(top)]
    return GitBase(
        rev=rev,
        commit=commit,
        toplevel=top,
        texts=_blobs(top, commit, inside),
        changed=_changed(top, commit, root),
    )
