"""A workspace for one run of a benchmark script: the tree as the launchers mount it.

InferenceX's launchers run `bash benchmarks/...sh` in a container: the checkout mounted at
`/workspace`, the host's Hugging Face cache at the workflow's HF_HUB_CACHE, some caches at
paths of their own (`/aiperf_mmap_cache`), and a `/tmp` that is the container's own. The
scripts and the environment they are given name those container paths. Locally each is a
folder (`Mounts`): the workspace and `tmp` are folders of the run, the caches where the
caller keeps them. The variables the scripts read get the local paths
(INFMAX_CONTAINER_WORKSPACE, RESULT_DIR, TMPDIR, HF_HUB_CACHE, ...); what the scripts
hard-code (`SERVER_LOG=/workspace/server.log`, `mktemp -d /tmp/eval_out-XXXXXX`,
`${X:-/workspace}`) is mapped in the copies the run executes: the script, the other shell
files of its folder and `benchmarks/benchmark_lib.sh`. Everything else of the tree is linked,
read-only as it is. `utils/bench_serving/` is the one folder replaced: its
`benchmark_serving.py` is the caller's shim (inferbench's client standing in for sa-bench,
or a recorder). Nothing is written into the tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from inferbench.core.errors import InputError, Location
from inferbench.core.fsio import make_executable
from inferbench.launch.treescript.locate import inside

CONTAINER_WORKSPACE = "/workspace"
CONTAINER_TMP = "/tmp"
EVAL_TASK_DIR = f"{CONTAINER_TMP}/inferbench-eval"  # `--eval-dataset`'s copy of the task file
LIB = "benchmarks/benchmark_lib.sh"
SHIM = "utils/bench_serving/benchmark_serving.py"
_PLAIN = re.compile(r"[A-Za-z0-9_./+-]+\Z")
# A container path as a path of its own: `/workspace`, `/workspace/x`, `${X:-/workspace}`,
# `:/workspace`; not `/sgl-workspace`, `/workspace_x`, `./workspace`, `~/workspace`,
# `$HOME/workspace` or `${DIR}/workspace` (a folder named so under another one).
_BEFORE = r"(?<![\w.~}\)/])"
_AFTER = r"(?![\w.-])"


def _pattern(*containers: str) -> re.Pattern[str]:
    """Any of `containers` as a path of its own (the longest first: `/tmp/x` before `/tmp`)."""
    names = sorted({c.rstrip("/") for c in containers}, key=len, reverse=True)
    return re.compile(_BEFORE + "(" + "|".join(map(re.escape, names)) + ")" + _AFTER)


@dataclass(frozen=True)
class Mounts:
    """The container paths a script's world names, and the local folder of each."""

    workspace: str
    tmp: str
    others: tuple[tuple[str, str], ...] = ()  # (container path, local path), e.g. the HF cache

    def pairs(self) -> tuple[tuple[str, str], ...]:
        own = ((CONTAINER_WORKSPACE, self.workspace), (CONTAINER_TMP, self.tmp))
        return (*own, *((c.rstrip("/"), local.rstrip("/")) for c, local in self.others))

    def map(self, text: str) -> str:
        """`text` with every container path written as its local folder (in one pass: a
        local folder under /tmp is not mapped again)."""
        local = dict(self.pairs())
        return _pattern(*local).sub(lambda m: local[m.group(1)], text)

    def show(self, text: str) -> str:
        """The inverse, for what is shown: local folders written as the container's paths."""
        container = {local: c for c, local in self.pairs()}
        names = sorted(container, key=len, reverse=True)
        return re.sub("|".join(map(re.escape, names)), lambda m: container[m.group(0)], text)


def map_workspace(text: str, workspace: str) -> str:
    """`/workspace` written as `workspace` wherever it is a path of its own."""
    return _pattern(CONTAINER_WORKSPACE).sub(lambda _: workspace, text)


def _copy_mapped(source: Path, target: Path, mounts: Mounts) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    text = source.read_text(encoding="utf-8", errors="surrogateescape")
    target.write_text(mounts.map(text), encoding="utf-8", errors="surrogateescape")
    make_executable(target)


def _link_children(source: Path, target: Path, skip: set[str]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for child in sorted(source.iterdir()):
        if child.name in skip or child.name == ".git" or (target / child.name).exists():
            continue
        (target / child.name).symlink_to(child)


def _plain(folder: Path) -> str:
    path = str(folder.resolve())
    if not _PLAIN.match(path):
        raise InputError(
            f"the run folder {path!r} has characters a benchmark script cannot take unquoted",
            location=Location(file=folder),
            hint="use a --runs-dir whose path has only letters, digits and . _ - + /",
        )
    return path


def run_mounts(workspace: Path, tmp: Path, others: tuple[tuple[str, Path], ...] = ()) -> Mounts:
    """The mounts of one run: `workspace` and `tmp` (created) are folders of the run."""
    tmp.mkdir(parents=True, exist_ok=True)
    workspace.mkdir(parents=True, exist_ok=True)
    return Mounts(
        workspace=_plain(workspace),
        tmp=_plain(tmp),
        others=tuple((container, str(local)) for container, local in others),
    )


def stage_workspace(root: Path, script: str, mounts: Mounts, shim: str) -> Path:
    """Lay the tree out in `mounts.workspace` for `script` (tree-relative); returns the
    staged script. `shim` is the text of utils/bench_serving/benchmark_serving.py."""
    workspace = Path(mounts.workspace)
    tree = root.resolve()
    source = inside(tree, script, "benchmark script")
    folder = source.parent.relative_to(tree)
    workspace.mkdir(parents=True, exist_ok=True)
    for sibling in source.parent.glob("*.sh"):  # helpers a script runs (`bash "$(dirname ...`)
        _copy_mapped(sibling, workspace / folder / sibling.name, mounts)
    _copy_mapped(inside(tree, LIB, "benchmark library"), workspace / LIB, mounts)
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
