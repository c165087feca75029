"""The evidence behind IB207's and IB208's thresholds on a real tree: every deployed recipe's
decode capacity against the concurrency it runs, and its context length against the lengths
it runs, with IB208's precision and recall per threshold against the defects read one by one
(`decode_capacity_defects.yaml`).

    python tests/upstream/decode_capacity.py ../shared/upstream/inferencex \
        --srt-slurm ../shared/upstream/srt-slurm-refs.bundle
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from inferbench.checks.collect import Collector
from inferbench.checks.engine_limits import role_limits, serving_limits
from inferbench.checks.render import display_path
from inferbench.checks.subjects import RecipeUse
from inferbench.config.project import load_project
from inferbench.config.srt_slurm_refs import SrtSlurmSources

DEFECTS = Path(__file__).with_name("decode_capacity_defects.yaml")
THRESHOLDS = (1.0, 1.1, 1.2, 1.25, 1.3, 1.4, 1.5, 1.75, 2.0)


@dataclass(frozen=True)
class CapacityRow:
    """One deployed recipe variant: the top concurrency it runs over its decode slots."""

    recipe: str  # as findings name it
    selector: str | None
    top: int
    capacity: int
    agentic: bool

    @property
    def ratio(self) -> float:
        return self.top / self.capacity


@dataclass(frozen=True)
class LengthRow:
    """One role of a deployed recipe variant: its context length and what it must hold."""

    recipe: str
    mode: str
    model_len: int
    need: int
    own_lengths: bool


@dataclass(frozen=True)
class Score:
    threshold: float
    fired: int
    true: int
    defects: int

    @property
    def precision(self) -> float:
        return self.true / self.fired if self.fired else 1.0

    @property
    def recall(self) -> float:
        return self.true / self.defects if self.defects else 1.0


def deployed_uses(root: Path, srt_slurm: Sequence[Path] = ()) -> list[RecipeUse]:
    project = load_project(root).read_all()
    sources = SrtSlurmSources(list(srt_slurm)) if srt_slurm else None
    subjects = Collector(project, sources).collect()
    seen: set[tuple[int, object]] = set()
    uses = []
    for d in subjects.deployments:
        key = (id(d.use.recipe), d.use.workload)
        if key not in seen:
            seen.add(key)
            uses.append(d.use)
    return uses


def _shown(use: RecipeUse, root: Path) -> str:
    source = use.recipe.source
    return display_path(source.file if source is not None else None, root)


def capacity_rows(uses: Sequence[RecipeUse], root: Path) -> list[CapacityRow]:
    rows = []
    for use in uses:
        limits = serving_limits(use.recipe)
        workers = use.recipe.resources.workers(limits.mode)
        if limits.capacity is None or not workers or not use.workload.concurrencies:
            continue
        source = use.recipe.source
        rows.append(
            CapacityRow(
                _shown(use, root),
                source.selector if source is not None else None,
                max(use.workload.concurrencies),
                limits.capacity * workers,
                use.workload.agentic,
            )
        )
    return rows


def length_rows(uses: Sequence[RecipeUse], root: Path) -> list[LengthRow]:
    rows = []
    for use in uses:
        isl, osl = use.workload.isl, use.workload.osl
        if isl is None or osl is None:
            continue
        for mode in use.recipe.modes:
            value = role_limits(use.recipe, mode).model_len
            if value is not None:
                need = isl if mode == "prefill" else isl + osl
                rows.append(
                    LengthRow(_shown(use, root), mode, value, need, use.workload.own_lengths)
                )
    return rows


def read_defects(path: Path = DEFECTS) -> dict[str, str]:
    data = yaml.safe_load(path.read_text())
    return {item["recipe"]: item["why"] for item in data["defects"]}


def score(rows: Sequence[CapacityRow], defects: set[str], threshold: float) -> Score:
    """IB208 at `threshold` over the closed-loop rows (agentic ones are never judged)."""
    fired = {r.recipe for r in rows if not r.agentic and r.ratio > threshold}
    return Score(threshold, len(fired), len(fired & defects), len(defects))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--srt-slurm", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    uses = deployed_uses(args.root, args.srt_slurm)
    rows = capacity_rows(uses, args.root)
    defects = read_defects()
    closed = [r for r in rows if not r.agentic]
    print(f"{len(rows)} deployed recipe variants with a decode batch limit, "
          f"{len(rows) - len(closed)} agentic (not judged), "
          f"{sum(r.ratio > 1 for r in closed)} closed-loop above 1.0x; "
          f"{len(defects)} defects read one by one")  # fmt: skip
    print("| threshold | IB208 findings | true defects | precision | recall |")
    print("|---:|---:|---:|---:|---:|")
    for t in THRESHOLDS:
        s = score(closed, set(defects), t)
        print(f"| {t}x | {s.fired} | {s.true} | {s.precision:.2f} | {s.recall:.2f} |")
    print()
    for r in sorted(closed, key=lambda r: -r.ratio):
        if r.ratio > 1:
            mark = "defect" if r.recipe in defects else ""
            print(f"{r.ratio:5.2f}x {r.top:>5} on {r.capacity:>5}  {mark:6}  {r.recipe}")
    lengths = length_rows(uses, args.root)
    short = [r for r in lengths if r.model_len < r.need]
    print(f"\nIB207: {len(lengths)} role limits of deployed variants, "
          f"{sum(r.own_lengths for r in lengths)} against the recipe's own lengths; "
          f"{len(short)} below what they must hold; least headroom "
          f"{min(r.model_len - r.need for r in lengths)} tokens")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
