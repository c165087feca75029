"""Time the config layer alone on synthetic InferenceX-scale trees: discovery + every recipe.

For each scale the tree comes from `synth_tree.py`. Each run, in one process:
`load_project(tree)` (masters, runners, changelog, clusters, launchers), then every
recipe file parsed and every variant validated. Reported: the median, min and max of
wall and CPU time over --runs runs, and the parse-only CPU time of the recipes compared
with ruamel.yaml's C loader composing the same files (the alternative we measured).
Run it pinned to one core for the one-core figure:

    taskset -c 0 python benchmarks/config_load.py [--scales 1 2 4] [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from inferbench.config.project import load_project  # noqa: E402
from inferbench.config.yamlio import load_yaml  # noqa: E402
from synth_tree import generate  # noqa: E402


def _load_everything(tree: Path) -> tuple[int, int]:
    project = load_project(tree)
    variants = 0
    for path in project.recipe_paths():
        variants += len(project.recipe_file(path).variants())
    return len(project.masters), variants


def _ruamel_compose(texts: list[str]) -> None:
    try:
        from ruamel.yaml.cyaml import CSafeLoader
    except ImportError:  # ruamel.yaml.clib missing: nothing to compare against
        return
    for text in texts:
        loader = CSafeLoader(text)
        loader.get_single_node()
        loader.dispose()


def _stats(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})"


def measure(tree: Path, runs: int) -> None:
    wall: list[float] = []
    cpu: list[float] = []
    masters = variants = 0
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        masters, variants = _load_everything(tree)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    recipes = sorted((tree / "benchmarks/multi_node/srt-slurm-recipes").rglob("*.yaml"))
    texts = [p.read_text(encoding="utf-8") for p in recipes]
    ours: list[float] = []
    ruamel: list[float] = []
    for _ in range(runs):
        c0 = time.process_time()
        for path in recipes:
            load_yaml(path)
        c1 = time.process_time()
        _ruamel_compose(texts)
        c2 = time.process_time()
        ours.append(c1 - c0)
        ruamel.append(c2 - c1)
    lines = sum(t.count("\n") for t in texts)
    print(f"{tree.name}: {masters} master entries, {len(recipes)} recipe files ({lines} lines),")
    print(f"  {variants} recipes validated")
    print(f"  load everything, wall: {_stats(wall)}")
    print(f"  load everything, cpu:  {_stats(cpu)}")
    print(f"  recipes parse-only cpu, inferbench yamlio: {_stats(ours)}")
    if any(ruamel):
        ratio = statistics.median(ruamel) / statistics.median(ours)
        print(f"  recipes compose-only cpu, ruamel C loader: {_stats(ruamel)} ({ratio:.2f}x ours)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="inferbench-config-load-") as work:
        for scale in args.scales:
            tree = Path(work) / f"scale{scale}"
            generate(tree, scale=scale)
            measure(tree, args.runs)


if __name__ == "__main__":
    main()
