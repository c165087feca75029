"""A workspace for one run of a benchmark script: the tree as the launchers mount it.

InferenceX's launchers mount the checkout at `/workspace` and run `bash benchmarks/...sh`
from there, and the scripts hard-code `/workspace/` (server log, `--result-dir`). Locally the
workspace is a folder of the run instead: the script, the other shell files of its folder and
`benchmarks/benchmark_lib.sh` are copied with every `/workspace` path written as that folder;
everything else of the tree is linked, read-only as it is. `utils/bench_serving/` is the one
folder replaced: its `benchmark_serving.py` is the caller's shim (inferbench's client standing
in for sa-bench, or a recorder). Nothing is written into the tree.
"""

from __future__ import annotations

import re
from pathlib import Path

from inferbench.errors import InputError, Location
from inferbench.fsio import make_executable
from inferbench.launch.treescript.locate import inside

CONTAINER_WORKSPACE = "/workspace"
LIB = "benchmarks/benchmark_lib.sh"
SHIM = "utils/bench_serving/benchmark_serving.py"
# `/workspace` as a path of its own: not `/sgl-workspace`, not `/workspace_x`
_MOUNT = re.compile(r"(?<![\w.-])/workspace(?![\w.-])")
_PLAIN = re.compile(r"[A-Za-z0-9_./+-]+\Z")


def map_workspace(text: str, workspace: str) -> str:
    return _MOUNT.sub(workspace, text)


def _copy_mapped(source: Path, target: Path, workspace: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    text = source.read_text(encoding="utf-8", errors="surrogateescape")
    target.write_text(map_workspace(text, workspace), encoding="utf-8", errors="surrogateescape")
    make_executable(target)


def _link_children(source: Path, target: Path, skip: set[str]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for child in sorted(source.iterdir()):
        if child.name in skip or child.name == ".git" or (target / child.name).exists():
            continue
        (target / child.name).symlink_to(child)


def stage_workspace(root: Path, script: str, workspace: Path, shim: str) -> Path:
    """Lay the tree out under `workspace` for `script` (tree-relative); returns the staged
    script. `shim` is the text of utils/bench_serving/benchmark_serving.py."""
    ws = str(workspace.resolve())
    if not _PLAIN.match(ws):
        raise InputError(
            f"the run folder {ws!r} has characters a benchmark script cannot take unquoted",
            location=Location(file=workspace),
            hint="use a --runs-dir whose path has only letters, digits and . _ - + /",
        )
    tree = root.resolve()
    source = inside(tree, script, "benchmark script")
    folder = source.parent.relative_to(tree)
    workspace.mkdir(parents=True, exist_ok=True)
    for sibling in source.parent.glob("*.sh"):  # helpers a script runs (`bash "$(dirname ...`)
        _copy_mapped(sibling, workspace / folder / sibling.name, ws)
    _copy_mapped(inside(tree, LIB, "benchmark library"), workspace / LIB, ws)
    # link what was not copied: the folders on the way to the script hold real copies
    _link_children(tree, workspace, {"utils"})
    for part in (folder, *folder.parents):
        if part != Path("."):
            _link_children(tree / part, workspace / part, set())
    if (tree / "utils").is_dir():
        _link_children(tree / "utils", workspace / "utils", {"bench_serving"})
    shim_path = workspace / SHIM
    shim_path.parent.mkdir(parents=True, exist_ok=True)
    shim_path.write_text(shim, encoding="utf-8")
    (workspace / "results").mkdir(exist_ok=True)
    return workspace / script
