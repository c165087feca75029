"""A cache of whole `inferbench check` results, keyed by the bytes of everything they read.

CI re-runs `check` on a tree that did not change (a re-run, another job of the same commit),
and reading the tree is most of what a check costs. The key is a sha256 over: the content and
path of every file a check may read under the tree's root (`.git` left out; the layout's
globs: masters, runners, clusters, launchers, changelog, inferbench.toml, and every YAML and
shell file, which a CONFIG_FILE or a launcher link may name) and, with --srt-slurm, the bytes
of a bundle or, for a checkout, its `recipes/` and every module of its `src/srtctl` (whose
schema judges recipes); the name and size of every other file, and the name and type of a FIFO,
device or socket, which are never opened; every folder name there (an empty folder can
decide a finding); inferbench's own files; the files of the libraries whose messages reach
findings (pydantic, pydantic-core, PyYAML: name, size and mtime); the Python version; the
working directory and the paths as given (findings name files by them); and the options.
Any change to any of them is a new key, so a stored result is exactly what an uncached run
would print.

A symlink inside a tree (git checks InferenceX's `launch_b200-dgxc-slurm.sh` out as one) is
hashed as a link, by its target as written; what it leads to lies in the same tree and is
hashed where it is, and a link a check may read is hashed by its target's content too.

Not cached: `--base` (it reads git history), `--srtctl` (the installed srtctl decides) and
`--srt-slurm` naming a git repository (its refs move without a file below it changing).
Nothing is cached for a tree with a symlink leading out of it (what it leads to is not
hashed), or one whose read files are past MAX_FILES files or MAX_BYTES bytes (hashing it
would cost more than it saves; a file is never read past what is left of that budget).
Entries live beside the parse cache (`config.parse_cache`, folder `check-v1/`) and share its
switches: `INFERBENCH_NO_CACHE=1` turns both off.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.util
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inferbench.checks.finding import Finding, Severity
from inferbench.checks.report import CheckOptions, CheckReport
from inferbench.config import parse_cache
from inferbench.config.project import CONFIG_FILE_NAME, read_layout
from inferbench.config.srt_slurm_refs import parse_source
from inferbench.core.errors import InputError
from inferbench.core.fsio import describe_file_type
from inferbench.core.fsread import read_file

VERSION = b"inferbench-check-2"  # bump when a stored entry's shape changes
FOLDER = "check-v1"
MAX_FILES = 20_000
MAX_BYTES = 64 * 2**20
_LIBRARIES = ("pydantic", "pydantic_core", "yaml")
# Files a check may read wherever they are: a CONFIG_FILE names any YAML file of the tree,
# a launcher checked out as a git symlink names another shell file.
_READ_SUFFIXES = (".yaml", ".yml", ".sh")


@dataclass(frozen=True)
class Lookup:
    """The cache's answer: the key (None: this run is not cached) and the stored report."""

    key: str | None
    report: CheckReport | None = None


class _NotCacheable(Exception):
    pass


def lookup(root: Path, options: CheckOptions) -> Lookup:
    """The stored report of a run on the same inputs, if there is one."""
    key = result_key(root, options)
    if key is None:
        return Lookup(None)
    stored = parse_cache.load(key, FOLDER)
    try:
        return Lookup(key, _report(Path(root), stored) if stored is not None else None)
    except (TypeError, ValueError):  # an entry of another shape: computed again
        return Lookup(key)


def store(key: str, report: CheckReport) -> None:
    findings = [
        (f.rule, f.slug, f.severity.value, f.message, None if f.file is None else str(f.file),
         f.line, f.column, f.key, f.hint)
        for f in report.findings
    ]  # fmt: skip
    parse_cache.store(key, (list(report.rules), findings), FOLDER)


def _report(root: Path, stored: Any) -> CheckReport:
    rules, findings = stored
    return CheckReport(
        root,
        tuple(
            Finding(rule, slug, Severity(severity), message,
                    None if file is None else Path(file), line, column, key, hint)
            for rule, slug, severity, message, file, line, column, key, hint in findings
        ),
        tuple(rules),
    )  # fmt: skip


def result_key(root: Path, options: CheckOptions) -> str | None:
    """The key of a check of `root` with `options`; None when it is not to be cached."""
    if options.base is not None or options.srtctl or parse_cache.cache_dir(FOLDER) is None:
        return None
    digest = hashlib.sha256(VERSION)
    given = (root, options.srt_slurm_paths, options.select, options.ignore, sys.version,
             os.getcwd())  # fmt: skip
    _add(digest, repr(given).encode())
    trees = [Path(root)]
    bundles = []
    for written in options.srt_slurm_paths:
        srt_slurm = parse_source(written).path  # PATH@REF: the path (its ref is in the key above)
        if srt_slurm.is_file():  # a git bundle: its bytes are every ref it holds
            bundles.append(srt_slurm)
        elif (srt_slurm / ".git").exists() or (srt_slurm / "HEAD").is_file():
            return None  # a repository's refs move without a file below it changing
        else:  # a checkout: its recipes and the srtctl sources its schema comes from
            trees.extend((srt_slurm / "recipes", srt_slurm / "src" / "srtctl"))
    try:
        budget = [MAX_FILES, MAX_BYTES]
        for bundle in bundles:
            _hash_file(digest, bundle.name, str(bundle), str(bundle), bundle.parent, budget, None)
        for tree in trees:
            if tree.name == "srtctl" and not tree.exists():
                continue  # a checkout without sources: judged with the bundled schema
            if not tree.is_dir() or tree.is_symlink():
                return None
            _add(digest, os.path.realpath(tree).encode())
            every = tree.name == "srtctl"  # srtctl's sources: a schema may read any module
            _hash_tree(digest, tree, budget, read=None if every else _read_by_check(Path(root)))
        _hash_tree(digest, Path(__file__).resolve().parents[1], budget, skip="__pycache__")
        for name in _LIBRARIES:
            _stat_library(digest, name)
    except (_NotCacheable, OSError, InputError):
        return None
    return digest.hexdigest()


def _read_by_check(root: Path) -> Callable[[str], bool]:
    """Whether a check may read the file at this path (relative to a tree's root)."""
    layout, _ = read_layout(root)  # a bad inferbench.toml: InputError, not cached
    patterns = (
        *layout.masters,
        *layout.deprecated,
        *layout.launchers,
        *layout.clusters,
        layout.runners,
        layout.changelog,
        CONFIG_FILE_NAME,
    )

    def read(rel: str) -> bool:
        return rel.endswith(_READ_SUFFIXES) or any(
            fnmatch.fnmatchcase(rel, pattern) for pattern in patterns
        )

    return read


def _add(digest: Any, part: bytes) -> None:
    digest.update(len(part).to_bytes(8, "little"))
    digest.update(part)


def _hash_tree(
    digest: Any,
    top: Path,
    budget: list[int],
    skip: str = ".git",
    read: Callable[[str], bool] | None = None,
) -> None:
    """Hash the folders and files under `top`: the content of each regular file `read`
    selects (all with None), within `budget` [files, bytes]; of the others, what they are;
    of a symlink, its target (_NotCacheable when it leads out of `top`)."""
    inside = os.path.realpath(top)
    for folder, dirs, files in os.walk(top):  # never follows a link to a folder
        links = sorted(n for n in (*dirs, *files) if os.path.islink(os.path.join(folder, n)))
        dirs[:] = sorted(d for d in dirs if d != skip and d not in links)
        _add(digest, b"d" + os.path.relpath(folder, top).encode())
        for name in dirs:
            _add(digest, b"n" + name.encode())
        for name in links:
            path = os.path.join(folder, name)
            target = os.path.realpath(path)
            if not _below(target, inside):
                raise _NotCacheable
            _add(digest, f"l{name}\0{os.readlink(path)}".encode())
            if os.path.isfile(target):  # a check reading the link reads the target
                _hash_file(digest, name, target, path, top, budget, read)
        for name in sorted(files):
            if name not in links:
                path = os.path.join(folder, name)
                _hash_file(digest, name, path, path, top, budget, read)


def _below(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath((folder, path)) == folder
    except ValueError:  # another drive
        return False


def _hash_file(
    digest: Any,
    name: str,
    path: str,
    shown: str,
    top: Path,
    budget: list[int],
    read: Callable[[str], bool] | None,
) -> None:
    """One file (`path`, found at `shown`): its content when a check may read it."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):  # a FIFO or device: named, never opened
        _add(digest, f"s{name}:{describe_file_type(info.st_mode)}".encode())
        return
    if read is not None and not read(os.path.relpath(shown, top)):
        _add(digest, f"u{name}:{info.st_size}".encode())  # no check reads it
        return
    budget[0] -= 1
    if budget[0] < 0 or info.st_size > budget[1]:
        raise _NotCacheable
    data = read_file(path, budget[1])  # over what is left (it grew): InputError
    budget[1] -= len(data)
    _add(digest, b"f" + name.encode())
    _add(digest, hashlib.sha256(data).digest())


def _stat_library(digest: Any, name: str) -> None:
    """A library's installed files by name, size and mtime (an upgrade rewrites them)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise _NotCacheable
    folder = os.path.dirname(spec.origin)
    _add(digest, folder.encode())
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_file():
            info = entry.stat()
            _add(digest, f"{entry.name}:{info.st_size}:{info.st_mtime_ns}".encode())
