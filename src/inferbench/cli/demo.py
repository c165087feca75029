"""The README's main job: check `examples/`, run a small sweep of it on the simulator's
virtual clock (seconds), ingest the run into the results store and build the dashboard.

The library part: where the examples are, which small sweep, and the steps as functions; the
CLI renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from inferbench.core.errors import InputError, Location
from inferbench.launch.deployment import Deployment, group_jobs
from inferbench.launch.plan import Backend, Engine
from inferbench.launch.planner import PlanOptions
from inferbench.launch.session import RunOptions

if TYPE_CHECKING:
    from inferbench.config.project import Project
    from inferbench.matrix.filters import SweepFilters

# One deployment per config (its first curve: two single-node jobs and the seed's
# disaggregated 2P1D job), each drawn as a whole curve: the simulator's virtual clock makes
# a point cost a fraction of a second whatever its simulated length, so the sweep's own
# concurrencies are filled in with powers of two below its largest, DEMO_POINTS at least.
DEMO_CONFIG_KEYS = (
    "llama3.1-8b-bf16-h200-vllm",
    "gptoss-fp4-b200-trt",
    "minimaxm3-fp4-b200-dynamo-vllm",
)
DEMO_POINTS = 7


def find_examples(root: Path | None) -> Path:
    """`root` if given, else the repository's `examples/` (src layout: three levels up).
    A `root` given is the only candidate: falling back would demo another tree than asked."""
    here = Path(__file__).resolve()
    candidates = [root] if root is not None else []
    if root is None:
        candidates += [here.parents[3] / "examples", Path.cwd() / "examples"]
    for path in candidates:
        if path is not None and (path / "configs").is_dir():
            return path
    if root is not None:
        raise InputError(
            "is no benchmark tree (it has no configs/ folder)",
            location=Location(file=root, key="--root"),
            hint="pass --root a tree with configs/ (e.g. examples/), or leave it out",
        )
    raise InputError(
        "cannot find the examples/ tree",
        location=Location(file=candidates[0], key="--root"),
        hint="run from a checkout of the repository, or pass --root PATH/TO/examples",
    )


def demo_filters(project: Project) -> SweepFilters:
    from inferbench.matrix.filters import SweepFilters

    known = set(project.masters)
    keys = tuple(k for k in DEMO_CONFIG_KEYS if k in known) or tuple(sorted(known))[:2]
    return SweepFilters(config_keys=keys)


def demo_concurrencies(sweep: tuple[int, ...]) -> tuple[int, ...]:
    """The sweep's concurrencies and the powers of two below its largest: a curve of at least
    DEMO_POINTS points (64 -> 1, 2, 4, ... 64; 2048 -> 32, 64, ... 2048)."""
    top = max(sweep)
    low = max(1, top >> (DEMO_POINTS - 1))
    powers = [1 << k for k in range(top.bit_length()) if low <= 1 << k <= top]
    return tuple(sorted({*sweep, *powers}))


def demo_deployments(project: Project) -> list[Deployment]:
    """The first deployment of each demo config, as a whole curve."""
    from inferbench.matrix.expand import expand_project

    chosen: dict[str | None, Deployment] = {}
    for dep in group_jobs(expand_project(project, demo_filters(project))):
        chosen.setdefault(dep.config_key, dep)
    return [replace(d, concurrencies=demo_concurrencies(d.concurrencies)) for d in chosen.values()]


def demo_options(root: Path, runs_dir: Path, filters: SweepFilters) -> RunOptions:
    return RunOptions(
        root=root,
        backend=Backend.LOCAL,
        engine=Engine.SIM,
        runs_dir=runs_dir,
        # sa-bench's prompts per point (cheap on the virtual clock); no evals: the simulator
        # answers with random tokens, and an eval would start its server for nothing
        plan=PlanOptions(evals=False),
        filters={"config_keys": list(filters.config_keys)},
    )


@dataclass(frozen=True)
class StoredDemo:
    db_url: str
    inserted: int
    dashboard: Path | None
    note: str = ""


def store_and_report(run_path: Path, runs_dir: Path) -> StoredDemo:
    """Ingest the run into a SQLite store under runs_dir and build the dashboard there."""
    from inferbench.report import build_report
    from inferbench.results.ingest import ingest_paths
    from inferbench.results.store import DEFAULT_DB_FILE

    db_url = f"sqlite:///{(runs_dir / DEFAULT_DB_FILE).resolve()}"
    report = ingest_paths([run_path], db_url)
    # the dashboard only: `report` writes the PNG plots where the `plots` extra is installed
    paths = build_report(db_url, runs_dir / "report", plots=False)
    return StoredDemo(db_url=db_url, inserted=report.inserted, dashboard=paths.dashboard)


def check_tree(root: Path) -> tuple[str, int]:
    """The static checks of `root` (the checks stage's library): summary line and exit code."""
    from inferbench.checks.engine import check_tree as run_checks
    from inferbench.checks.render import summary_line

    report = run_checks(root)
    return summary_line(report.findings), report.exit_code(strict=False)
