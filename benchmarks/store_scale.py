"""How `results list`, `results export`, `report` and ingest grow with the store's size.

    nice .venv/bin/python benchmarks/store_scale.py [--sizes 10000,100000] [--repeats 3]
        [--ingest 10000] [--db-dir DIR] [--pg-url postgresql+psycopg://.../throwaway]

For each size, builds a SQLite store (with --pg-url, a PostgreSQL one) of that many
synthetic records (not timed): one run of 400 points (40 jobs x 10 concurrencies,
`results_ingest.write_tree`) is ingested for real, then copied as runs 1, 2, ... (each
copy re-keyed for its run, as an ingest would key it) until the store holds the size.
Then each command runs in its own child process (`inferbench ...`, the CLI's entry
point), `--repeats` times, and this reports the median wall time, CPU time (user +
system) and peak RSS of that command's process alone (`os.wait4`'s rusage). `--ingest N`:
also `results ingest` of N synthetic result files into a fresh SQLite store (with --pg-url,
also into the PostgreSQL one); with `--baseline-src DIR` (another checkout's `src`, e.g.
from `git archive HEAD~1 src`), each repeat runs that tree's ingest and this one's in turn,
so both are measured under the same load. Prints the load average beside every figure:
the machine may be shared.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inferbench.results.ingest import ingest_paths
from inferbench.results.record import Record, content_hash
from inferbench.results.store import StoreRow, open_store, store_row
from results_ingest import write_tree

BATCH = 20_000


def build_store(url: str, size: int, tmp: Path) -> None:
    """A store of `size` records: one real ingest, then its rows copied as further runs."""
    tree = tmp / "template"
    if not tree.exists():
        write_tree(tree, 400)
    ingest_paths([tree], url, workers=1)
    with open_store(url) as store:
        template = [s.record for s in store.query()]
        now = str(template[0].provenance.started_at)
        rows = [(r, store_row(r, now)) for r in template]
        have = store.count()
        run = 1
        while have < size:
            batch: list[StoreRow] = []
            while len(batch) < BATCH and have + len(batch) < size:
                batch += [_copy(r, row, f"run-{run:05d}") for r, row in rows]
                run += 1
            batch = batch[: size - have]
            store.write_rows(batch)
            have += len(batch)


def _copy(record: Record, row: StoreRow, run_id: str) -> StoreRow:
    """`row` as the same point of another run: its key from the record, as an ingest keys
    it; its JSON with the run id replaced (what serialising the changed record gives)."""
    prov = record.provenance.model_copy(update={"run_id": run_id})
    key = record.model_copy(update={"provenance": prov}).natural_key()
    old = f'"run_id":"{record.provenance.run_id}"'
    assert row.record_json.count(old) == 1, old
    payload = row.record_json.replace(old, f'"run_id":"{run_id}"')
    return dataclasses.replace(
        row, natural_key=key, run_id=run_id, record_json=payload, content_hash=content_hash(payload)
    )


def drop_store_tables(url: str) -> None:
    from sqlalchemy import create_engine, text

    from inferbench.results.migrations import metadata

    names = ", ".join(table.name for table in metadata.sorted_tables)
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(f"DROP TABLE IF EXISTS {names} CASCADE"))
    engine.dispose()


def store_mb(url: str) -> float:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        size = conn.execute(text("SELECT pg_total_relation_size('records')")).scalar_one()
    engine.dispose()
    return float(size) / 1e6


@dataclasses.dataclass(frozen=True)
class Sample:
    wall_s: float
    cpu_s: float
    rss_mb: float
    load: float


# A child forked from this (large) process would report this process's peak RSS as its
# own (Linux carries the peak across fork and exec): a small Python forks the command and
# reports that grandchild's rusage alone.
_WRAPPER = """
import json, os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
code = os.waitstatus_to_exitcode(status)
print(json.dumps([wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, code]))
"""


def measure(argv: list[str], src: str | None = None) -> Sample:
    """One run of `argv`: wall, CPU (user + sys) and peak RSS of that process alone (its
    reader processes' CPU included: `wait4` counts the children it waited for). `src`: run
    the inferbench found there instead of this one."""
    load = os.getloadavg()[0]
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *argv],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    try:
        wall, cpu, rss_kb, code = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"{' '.join(argv)}: no figures: {done.stderr[-2000:]}") from None
    if code != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({code}): {done.stderr[-2000:]}")
    return Sample(wall, cpu, rss_kb / 1024, load)


NAMES = {
    "list": "results list",
    "nomatch": "results list (no match)",
    "csv": "results export csv",
    "json": "results export json",
    "report": "report",
}


def report_line(size: int, what: str, samples: list[Sample]) -> str:
    def med(field: str) -> float:
        return statistics.median(getattr(s, field) for s in samples)

    loads = "/".join(f"{s.load:.1f}" for s in samples)
    return (
        f"{size:>9,} records  {what:<26} wall {med('wall_s'):7.2f} s  cpu {med('cpu_s'):7.2f} s"
        f"  peak RSS {med('rss_mb'):7.0f} MB  (median of {len(samples)}; load {loads})"
    )


def ingest_runs(args: argparse.Namespace, tmp: Path, cli: list[str]) -> None:
    """`results ingest` of the tree into fresh stores, alternating with the baseline's."""
    trees: dict[str, str | None] = {"this tree": None}
    if args.baseline_src:
        trees = {"baseline": str(args.baseline_src.resolve()), "this tree": None}
    databases = ["sqlite"] + (["postgresql"] if args.pg_url else [])
    samples: dict[tuple[str, str], list[Sample]] = {}
    for rep in range(args.repeats):
        for db in databases:
            for name, src in trees.items():
                if db == "sqlite":  # a fresh file for every run
                    slug = name.replace(" ", "-")
                    url = f"sqlite:///{tmp / f'ingest-{rep}-{slug}.sqlite'}"
                else:
                    drop_store_tables(args.pg_url)
                    url = args.pg_url
                argv = [*cli, "results", "ingest", str(tmp / "ingest-tree"), "--db", url]
                samples.setdefault((db, name), []).append(measure(argv, src))
    for (db, name), runs in samples.items():
        print(report_line(args.ingest, f"ingest {db} {name}", runs), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ingest", type=int, default=0, help="result files to ingest (0: none)")
    parser.add_argument(
        "--commands", default="list,nomatch,csv,json,report", help="which, in this order"
    )
    parser.add_argument("--db-dir", type=Path, default=None, help="where the stores go")
    parser.add_argument(
        "--baseline-src",
        type=Path,
        default=None,
        help="another checkout's src folder: its ingest runs beside this one's",
    )
    parser.add_argument(
        "--pg-url",
        default=None,
        help="build the stores in this PostgreSQL database instead (its store tables are"
        " DROPPED first: name a throwaway one)",
    )
    args = parser.parse_args()
    cli = [sys.executable, "-c", "from inferbench.cli.main import main; main()"]
    with tempfile.TemporaryDirectory(dir=args.db_dir) as tmp_name:
        tmp = Path(tmp_name)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {os.uname().release}")
        if args.ingest:
            write_tree(tmp / "ingest-tree", args.ingest)
            ingest_runs(args, tmp, cli)
        for size in (int(s) for s in args.sizes.split(",") if s):
            db = tmp / f"store-{size}.sqlite"
            url = args.pg_url or f"sqlite:///{db}"
            if args.pg_url:
                drop_store_tables(args.pg_url)
            t0 = time.perf_counter()
            build_store(url, size, tmp)
            mb = db.stat().st_size / 1e6 if not args.pg_url else store_mb(args.pg_url)
            print(f"built {size:,} records ({mb:,.0f} MB) in {time.perf_counter() - t0:.0f} s")
            commands = {
                "list": ["results", "list", "--db", url],
                "nomatch": ["results", "list", "--db", url, "--run", "none"],
                "csv": ["results", "export", "--db", url, "--format", "csv",
                                       "-o", str(tmp / "export.csv")],
                "json": ["results", "export", "--db", url, "--format", "json",
                                        "-o", str(tmp / "export.json")],
                "report": ["report", "--db", url, "--output-dir", str(tmp / "report")],
            }  # fmt: skip
            for what in args.commands.split(","):
                argv = commands[what]
                samples = [measure([*cli, *argv]) for _ in range(args.repeats)]
                print(report_line(size, NAMES[what], samples), flush=True)
            db.unlink(missing_ok=True)
            shutil.rmtree(tmp / "report", ignore_errors=True)


if __name__ == "__main__":
    main()
