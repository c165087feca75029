"""`sweep` and `sweep --changed-since` against InferenceX's own tools on every commit of its
history since 2026-04-01 (the run docs/conformance.md quotes).

The history is `../shared/upstream/inferencex-history.bundle` (or --bundle), cloned into a tmp
folder. At every commit of the range the commit's own generator and `inferbench sweep` are
compared job for job, field for field, in each eval mode (default, --no-evals, --evals-only),
inferbench's rows in the format of that commit (history_range.FORMAT_CHANGES); at every commit
from 2026-08-01 on that edits `perf-changelog.yaml`, the commit's own `process_changelog.py`
and `inferbench sweep --changed-since <parent>` are compared bucket for bucket, keys included
(tests/upstream/history_range.py does the work; tests/upstream/test_history.py runs one commit
of each format era in CI). A commit whose inputs (master configs, runners.yaml, the
generator's code, recipes) equal an earlier one's has that commit's outcome. InferenceX's
tools run in the oracle venv: --oracle-python, else INFERBENCH_INFERENCEX_PYTHON (set by
`source .ci/services/25-inferencex-oracle.sh`); --cache DIR keeps the generator's answers.

    python benchmarks/history_conformance.py [--count N] [--since 2026-04-01T00:00:00Z]
        [--sweep-only | --changelog-only] [--cache DIR] [--json FILE]

Exit 0 when no commit differs and inferbench refuses no tree the oracle accepts.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from upstream import history_range as history  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--bundle", type=Path, default=history.BUNDLE)
    parser.add_argument("--since", default=history.SINCE)
    parser.add_argument("--count", type=int, help="a spread of N commits (default: all)")
    parser.add_argument("--oracle-python", type=Path)
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--sweep-only", action="store_true")
    only.add_argument("--changelog-only", action="store_true")
    parser.add_argument("--json", type=Path, help="write every outcome to FILE")
    parser.add_argument(
        "--cache", type=Path, help="keep the generator's answers in DIR (by what it reads)"
    )
    args = parser.parse_args()
    python = args.oracle_python or os.environ.get("INFERBENCH_INFERENCEX_PYTHON")
    if not python:
        parser.error("give --oracle-python or source .ci/services/25-inferencex-oracle.sh")
    with tempfile.TemporaryDirectory(prefix="inferbench-history-") as tmp:
        os.environ.setdefault("INFERBENCH_CACHE_DIR", str(Path(tmp) / "cache"))
        repo = history.clone(Path(tmp) / "inferencex", args.bundle)
        every = history.range_commits(repo, args.since)
        commits = history.spread(every, args.count) if args.count else every
        print(f"{len(commits)} commits from {commits[0].date} to {commits[-1].date}", flush=True)
        results: dict[str, list[history.Outcome]] = {"sweep": [], "changelog": []}
        started = time.perf_counter()
        seen: dict[str, list[history.Outcome]] = {}  # sweep outcomes by the inputs read
        for commit in commits:
            older = history.older_format(commit, every)
            if not args.changelog_only:
                key = history.inputs_key(repo, commit, history.SWEEP_INPUTS)
                if key in seen:  # the same files as an earlier commit: the same outcomes
                    outcomes = [dataclasses.replace(o, commit=commit) for o in seen[key]]
                else:
                    policy = history.older_evals(commit, every)
                    outcomes = history.compare_sweep(
                        repo, commit, Path(python), older, args.cache, policy
                    )
                    seen[key] = outcomes
                results["sweep"] += outcomes
                for outcome in outcomes:
                    _show(f"sweep {outcome.mode}", outcome)
            recent = commit.date >= history.CHANGELOG_SINCE[:10]
            if commit.changelog and recent and not args.sweep_only:
                outcome = history.compare_changelog(repo, commit, Path(python), older)
                results["changelog"].append(outcome)
                _show("changed-since", outcome)
        print(f"\n{time.perf_counter() - started:.0f} s")
    by_commit: dict[str, list[history.Outcome]] = {}
    for outcome in results["sweep"]:
        by_commit.setdefault(outcome.commit.sha, []).append(outcome)
    if by_commit:
        accepted = [v for v in by_commit.values() if v[0].status not in _REFUSED]
        equal = [v for v in accepted if all(o.status == "equal" for o in v)]
        print(
            f"sweep: {len(by_commit)} commits checked, {len(accepted)} accepted by their"
            f" generator, {len(equal)} field-equal in all {len(history.MODES)} modes"
        )
    for name, outcomes in results.items():
        if name == "sweep":
            for mode, _ in history.MODES:
                of_mode = [o for o in outcomes if o.mode == mode]
                if of_mode:
                    print(
                        f"sweep {mode}: {len(of_mode)} commits; "
                        + ", ".join(history.summary(of_mode))
                    )
        elif outcomes:
            print(f"{name}: {len(outcomes)} commits; " + ", ".join(history.summary(outcomes)))
    if args.json:
        args.json.write_text(
            json.dumps(
                {k: [dataclasses.asdict(o) for o in v] for k, v in results.items()}, indent=1
            )
        )
    return 0 if all(o.ok for v in results.values() for o in v) else 1


_REFUSED = ("oracle-refuses", "both-refuse")


def _show(kind: str, outcome: history.Outcome) -> None:
    c = outcome.commit
    line = f"{c.date[:10]} {c.upstream[:9]} {kind:18} {outcome.status:18} {outcome.jobs:5}"
    if outcome.detail:
        line += f"  {outcome.detail.splitlines()[0][:160]}"
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
