"""A cache of parsed YAML documents, keyed by file content.

Parsing is most of what `inferbench check` and `sweep` spend on a real tree (InferenceX's 469
recipes and two 10k-line master files); unpacking a stored parse is about fifteen times
faster. An entry is the document's plain data and position map, `marshal`led, under the
sha256 of the parser version and the file's bytes, so an edited file is a new key and a stale
entry is never read. The cache lives outside the tree:
`$INFERBENCH_CACHE_DIR` or `${XDG_CACHE_HOME:-~/.cache}/inferbench`, folder `yaml-v1/`;
`INFERBENCH_NO_CACHE=1` turns it off. Any failure to read or write it is ignored: the file is
then parsed, as without a cache.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from pathlib import Path
from typing import Any

VERSION = b"inferbench-yaml-4"  # bump when the parse result's shape or what it refuses changes


_MADE: set[Path] = set()  # cache folders this process made or found


def cache_dir(folder: str = "yaml-v1") -> Path | None:
    """Where the cache keeps `folder` (parses; `checks.result_cache` keeps check results in
    a folder of its own), or None when the cache is off."""
    if os.environ.get("INFERBENCH_NO_CACHE"):
        return None
    base = os.environ.get("INFERBENCH_CACHE_DIR")
    if base:
        return Path(base) / folder
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "inferbench" / folder


def key(raw: bytes, mode: str) -> str:
    return hashlib.sha256(VERSION + b"\0" + mode.encode() + b"\0" + raw).hexdigest()


def load(digest: str, where: str = "yaml-v1") -> Any | None:
    """The stored value for `digest` (in cache folder `where`), or None."""
    folder = cache_dir(where)
    if folder is None:
        return None
    try:
        return marshal.loads((folder / digest[:2] / digest).read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None


def has(digest: str, where: str = "yaml-v1") -> bool:
    """Whether an entry for `digest` is stored (False when the cache is off)."""
    folder = cache_dir(where)
    return folder is not None and (folder / digest[:2] / digest).is_file()


def store(digest: str, value: Any, where: str = "yaml-v1") -> None:
    """Keep `value` (plain data only) for `digest`; written atomically, errors ignored."""
    folder = cache_dir(where)
    if folder is None:
        return
    try:
        blob = marshal.dumps(value)
        target = folder / digest[:2]
        if target not in _MADE:  # (a cold run stores hundreds of entries in 256 folders)
            target.mkdir(parents=True, exist_ok=True)
            _MADE.add(target)
        try:
            fd, tmp = tempfile.mkstemp(dir=target, prefix=".tmp-")
        except FileNotFoundError:  # the folder went away since: made again
            target.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(blob)
            os.replace(tmp, target / digest)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except (OSError, ValueError):
        return
