"""What a tree looked like at a base revision, read with a handful of git calls.

`read_base` answers two questions for the changelog rules: the text of a few files at the base
(master configs, the changelog) and which files under the tree changed since (edits, deletions,
new tracked or untracked files). It runs git six times whatever the size of the tree (up to
2,000 files per `hash-object`).

Changed files are found by content, never through the index's stat cache: `git diff BASE`
takes a file whose size, mtime and inode match its index entry as unchanged, so a file
rewritten with its old size and mtime (racy git) would be missed. Here each working file is
hashed (`git hash-object`, with the repository's filters) and its blob id compared with the
base's (`git ls-tree`); the user's index is only read, never written.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from inferbench.core.errors import ExternalToolError, InputError


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
    args: Sequence[str],
    cwd: Path,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    exe = shutil.which("git")
    if exe is None:
        raise ExternalToolError("git is not installed", hint="install git to use --base")
    # stdout goes to a file, not a pipe: git flushes every line (`hash-object` once a file),
    # and waking up for each of hundreds of small writes costs more than git's own work
    with tempfile.TemporaryFile() as out:
        proc = subprocess.run(
            [exe, *args],
            cwd=cwd,
            input=stdin,
            stdout=out,
            stderr=subprocess.PIPE,
            check=False,
            timeout=60,
            env=None if env is None else {**os.environ, **env},
        )
        out.seek(0)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), proc.stderr)


def _git_out(
    args: Sequence[str],
    cwd: Path,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> bytes:
    """The stdout of a git command that must succeed."""
    proc = _git(args, cwd, stdin, env)
    if proc.returncode != 0:
        raise ExternalToolError(f"git {args[0]} failed: {proc.stderr.decode().strip()}")
    return proc.stdout


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


def _base_blobs(top: Path, commit: str, rel: str) -> dict[str, str]:
    """Path (relative to `top`) -> blob id of every file under `rel` at `commit`; a symlink's
    is the id of its link text prefixed `l:`, and submodules are left out."""
    blobs: dict[str, str] = {}
    for record in _git_out(["ls-tree", "-r", "-z", commit, "--", rel], top).split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, blob = meta.decode().split()
        if kind == "blob":
            blobs[os.fsdecode(name)] = f"l:{blob}" if mode == "120000" else blob
    return blobs


def _raw_blob_id(data: bytes, commit: str) -> str:
    """The blob id git gives `data` stored as is (no filters), in the commit's hash format."""
    digest = hashlib.sha256 if len(commit) == 64 else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


_HASH_BATCH = 2000  # paths per `git hash-object` call, well inside the argument limit


def _working_blobs(top: Path, names: Sequence[str], commit: str) -> dict[str, str | None]:
    """Path -> blob id of each working file as `git add` would store it (a symlink's as in
    `_base_blobs`); None where the path is no file or symlink now."""
    out: dict[str, str | None] = {}
    hashed: list[str] = []
    prefix = f"{top}{os.sep}"  # plain strings: a Path per file costs more than the lstat
    for name in names:
        try:
            mode = os.lstat(prefix + name).st_mode
        except OSError:  # deleted, or a parent became a file
            out[name] = None
            continue
        if stat.S_ISLNK(mode):
            out[name] = "l:" + _raw_blob_id(os.fsencode(os.readlink(prefix + name)), commit)
        elif stat.S_ISREG(mode):
            hashed.append(name)
        else:
            out[name] = None
    # paths as arguments, not on stdin: feeding --stdin-paths a line at a time while it
    # answers each costs more than the hashing
    for start in range(0, len(hashed), _HASH_BATCH):
        batch = hashed[start : start + _HASH_BATCH]
        ids = _git_out(["hash-object", "--", *batch], top).decode().split()
        out.update(zip(batch, ids, strict=True))
    return out


def _listed(top: Path, rel: str) -> tuple[set[str], set[str]]:
    """The index's paths and the untracked, not ignored files under `rel`; and which index
    paths are outside a sparse checkout (skip-worktree: absent on disk, yet not deleted)."""
    args = ["ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard", "--", rel]
    names: set[str] = set()
    sparse: set[str] = set()
    for record in _git_out(args, top).split(b"\0"):
        if record:
            tag, name = record[:1], os.fsdecode(record[2:])
            names.add(name)
            if tag == b"S":
                sparse.add(name)
    return names, sparse


def _changed(top: Path, commit: str, root: Path) -> frozenset[Path]:
    """Files under `root` whose content differs from `commit`: edited or deleted base files
    (a sparse checkout's absent ones excepted), and files now present that the base lacks."""
    rel = root.relative_to(top).as_posix() or "."
    base = _base_blobs(top, commit, rel)
    listed, sparse = _listed(top, rel)
    now = _working_blobs(top, sorted(base), commit)
    changed = [
        n for n, blob in base.items() if now[n] != blob and not (now[n] is None and n in sparse)
    ]
    prefix = f"{top}{os.sep}"
    changed += [n for n in listed - base.keys() if os.path.lexists(prefix + n)]
    return frozenset((top / n).resolve() for n in changed)


def _blobs(top: Path, commit: str, paths: Sequence[Path]) -> dict[Path, str | None]:
    """The text of each path at `commit` via one `git cat-file --batch` call."""
    if not paths:
        return {}
    rels = [p.resolve().relative_to(top).as_posix() for p in paths]
    request = "".join(f"{commit}:{rel}\n" for rel in rels).encode()
    out, pos = _git_out(["cat-file", "--batch"], top, stdin=request), 0
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


def read_texts(root: Path, rev: str, paths: Sequence[Path]) -> tuple[str, dict[Path, str | None]]:
    """The commit `rev` names and the text of `paths` there (None where absent), without
    listing changed files (two git calls, whatever the size of the tree)."""
    top = _toplevel(root.resolve())
    commit = _commit(top, rev)
    inside = [p for p in paths if p.resolve().is_relative_to(top)]
    return commit, _blobs(top, commit, inside)


def export_tree(root: Path, rev: str, dest: Path) -> str:
    """Write the tree under `root` as it was at `rev` into the empty folder `dest` (files,
    symlinks and executable bits as a checkout gives them) and return the commit.

    A private index (`GIT_INDEX_FILE`) is filled from the base and checked out under `dest`
    as a prefix: the repository's own index, working tree and worktree list stay untouched,
    and the repository's filters apply as in a checkout (unlike `git archive`, no
    `export-ignore` drops a file).
    """
    root = root.resolve()
    top = _toplevel(root)
    commit = _commit(top, rev)
    rel = root.relative_to(top).as_posix()
    treeish = f"{commit}:" if rel == "." else f"{commit}:{rel}"  # `<commit>:` is its root
    if _git(["cat-file", "-t", treeish], top).stdout.strip() != b"tree":
        raise InputError(
            f"{rel} does not exist at git base {rev!r}",
            hint="pass a base that holds the tree, or --baseline FILE recorded without git",
        )
    with tempfile.TemporaryDirectory(prefix="inferbench-index-") as scratch:
        env = {"GIT_INDEX_FILE": os.path.join(scratch, "index")}
        _git_out(["read-tree", treeish], top, env=env)
        prefix = f"{dest.resolve()}{os.sep}"
        _git_out(["checkout-index", "--all", "--force", f"--prefix={prefix}"], top, env=env)
    return commit
