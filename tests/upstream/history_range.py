"""InferenceX's own history as the oracle: `sweep` and `sweep --changed-since` on past trees.

`../shared/upstream/inferencex-history.bundle` holds InferenceX's `main` (each commit message
ends with `Upstream-Commit: <sha>`, the commit's id upstream). A clone of it in a tmp folder
is checked out commit by commit; at each, the commit's own generator
(`generate_sweep_configs.py full-sweep --config-files <its MASTER_CONFIGS>`, the default eval
mode) and `inferbench sweep` run on that tree and are compared job for job (generator_driver.py,
generator.py); and at each commit that edits `perf-changelog.yaml`, the commit's own
`process_changelog.py --base-ref <parent> --head-ref <commit>` (as `run-sweep.yml` runs it on a
push to main) and `inferbench sweep --changed-since <parent>` (JSON and github outputs) are
compared bucket for bucket, keys included (changelog_driver.py).

Used by test_history.py (a spread of commits) and by benchmarks/history_conformance.py (every
commit of the range, the run docs/conformance.md quotes).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from inferbench.cli.main import main
from inferbench.core.job import INFERBENCH_KEYS

from .generator import differences, inferencex_view, run_generator
from .oracles import UPSTREAM

BUNDLE = UPSTREAM / "inferencex-history.bundle"
SINCE = "2026-08-01T00:00:00Z"  # the range's start (committer date); its end is the bundle's main
CHANGELOG = "perf-changelog.yaml"
CHANGELOG_DRIVER = Path(__file__).resolve().parent / "changelog_driver.py"

Status = Literal["equal", "different", "oracle-refuses", "both-refuse", "inferbench-refuses"]


@dataclass(frozen=True)
class Commit:
    sha: str  # in the bundle
    upstream: str  # `Upstream-Commit:` of its message
    date: str  # committer date, ISO 8601
    changelog: bool  # edits perf-changelog.yaml (against its first parent)
    parent: str
    index: int = 0  # its place in the range, oldest first (the history is linear)


Rows = list[dict[str, Any]]


def _multinode_agentic(row: dict[str, Any]) -> bool:
    return row.get("scenario-type") == "agentic-coding" and "prefill" in row


def _older_agentic_exp_names(rows: Rows) -> Rows:
    """`p1x4ep4dpa_d1x4ep4dpa` -> `p1x4_d1x4`: multinode agentic exp-names before the worker
    tags carried ep and dp-attn."""
    tag = re.compile(r"_([pd]\d+x\d+)(?:ep\d+)?(?:dpa)?(?=_)")
    return [
        {**row, "exp-name": tag.sub(r"_\1", row["exp-name"])} if _multinode_agentic(row) else row
        for row in rows
    ]


def _no_multinode_agentic_evals(rows: Rows) -> Rows:
    """Before SWE-bench evals, a multinode agentic row had no eval row of its own."""
    return [row for row in rows if not (_multinode_agentic(row) and row.get("eval-only"))]


@dataclass(frozen=True)
class FormatChange:
    """A change of InferenceX's row format within the range. inferbench writes the newest
    format; on a commit from before the change its rows are rewritten to the older one
    (`older`) before they are compared, and the report names the change."""

    upstream: str  # the InferenceX commit that made it
    what: str
    older: Callable[[Rows], Rows]


FORMAT_CHANGES = (
    FormatChange(
        "23f879df2f6e0ba1e59850af07bd8124d3af173d",
        "multinode agentic exp-name tags carry ep and dpa (2026-08-10)",
        _older_agentic_exp_names,
    ),
    FormatChange(
        "23f879df2f6e0ba1e59850af07bd8124d3af173d",
        "multinode agentic rows get SWE-bench eval rows (2026-08-10)",
        _no_multinode_agentic_evals,
    ),
)


def older_format(commit: Commit, commits: list[Commit]) -> list[FormatChange]:
    """The format changes that came after `commit` (all of `commits`: the whole range)."""
    at = {c.upstream: c.index for c in commits}
    return [f for f in FORMAT_CHANGES if f.upstream in at and commit.index < at[f.upstream]]


def as_older(rows: Rows, changes: list[FormatChange]) -> Rows:
    for change in changes:
        rows = change.older(rows)
    return rows


@dataclass(frozen=True)
class Outcome:
    commit: Commit
    status: Status
    jobs: int = 0  # the oracle's job (row) count
    detail: str = ""  # what differs, why a tool refused, or what was not compared

    @property
    def ok(self) -> bool:
        return self.status in ("equal", "oracle-refuses", "both-refuse")


@dataclass
class Clone:
    """A clone of the history bundle in a tmp folder (../shared is read-only)."""

    path: Path
    head: str = ""
    _at: str = field(default="", repr=False)

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=self.path, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    def checkout(self, sha: str) -> None:
        if self._at != sha:
            self.git("checkout", "-q", "--force", "--detach", sha)
            self.git("clean", "-q", "-fdx")
            self._at = sha


def clone(dest: Path, bundle: Path = BUNDLE) -> Clone:
    subprocess.run(
        ["git", "clone", "-q", "--no-checkout", str(bundle), str(dest)],
        capture_output=True,
        text=True,
        check=True,
    )
    repo = Clone(dest)
    repo.head = repo.git("rev-parse", "refs/remotes/origin/main")
    return repo


def range_commits(repo: Clone, since: str = SINCE) -> list[Commit]:
    """Every commit of the range, oldest first."""
    fmt = "%H%x1f%P%x1f%cI%x1f%B%x1e"
    text = repo.git("log", "--reverse", f"--since={since}", f"--format={fmt}", repo.head)
    changed = set(
        repo.git("log", f"--since={since}", "--format=%H", repo.head, "--", CHANGELOG).split()
    )
    commits = []
    for record in text.split("\x1e"):
        if not record.strip():
            continue
        sha, parents, date, body = record.strip("\n").split("\x1f")
        upstream = next(
            (line.split(":", 1)[1].strip() for line in body.splitlines()
             if line.startswith("Upstream-Commit:")),
            "",
        )  # fmt: skip
        parent = parents.split()[0] if parents else ""
        changelog = sha in changed and bool(parent)
        commits.append(Commit(sha, upstream, date, changelog, parent, len(commits)))
    return commits


def spread(commits: list[Commit], count: int) -> list[Commit]:
    """`count` commits evenly spread over `commits`, the first and the last included."""
    if count >= len(commits):
        return list(commits)
    last = len(commits) - 1
    return [commits[round(i * last / (count - 1))] for i in range(count)]


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    return rc, out.getvalue(), err.getvalue()


def compare_sweep(
    repo: Clone, commit: Commit, python: Path, changes: list[FormatChange] | None = None
) -> Outcome:
    """The commit's generator (default mode) and `inferbench sweep` on the commit's tree
    (inferbench's rows in the format of that commit: `changes`, see `older_format`)."""
    repo.checkout(commit.sha)
    generator = run_generator(
        python, repo.path, [["full-sweep", "--config-files", "{master-configs}"]]
    )
    (run,) = generator.runs
    rc, out, err = _cli("sweep", "--root", str(repo.path), "--format", "json")
    if run.rc != 0 or run.jobs is None:
        status: Status = "both-refuse" if rc != 0 else "oracle-refuses"
        return Outcome(commit, status, detail=_last_line(run.error))
    if rc != 0:
        return Outcome(commit, "inferbench-refuses", len(run.jobs), err.strip()[-2000:])
    view = [inferencex_view(row, generator.fields) for row in json.loads(out)]
    problem = differences(run.jobs, as_older(view, changes or []))
    note = _older_note(changes)
    return Outcome(commit, "different" if problem else "equal", len(run.jobs), problem or note)


def _older_note(changes: list[FormatChange] | None) -> str:
    return "in the older format: " + "; ".join(c.what for c in changes) if changes else ""


def _row(job: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in job.items() if key not in INFERBENCH_KEYS}


def _unchunked(matrix: dict[str, Any], changes: list[FormatChange]) -> dict[str, Any]:
    def rows(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return as_older([_row(job) for chunk in chunks for job in chunk["config"]], changes)

    out: dict[str, Any] = {}
    for key, value in matrix.items():
        if key in ("single_node", "multi_node"):
            out[key] = {name: rows(chunks) for name, chunks in value.items()}
        elif key not in ("total", "chunk-size"):
            out[key] = rows(value)
    return out


def _bucket_difference(expected: dict[str, Any], got: dict[str, Any]) -> str:
    for bucket in sorted(set(expected) | set(got)):
        want, have = expected.get(bucket), got.get(bucket)
        if want == have:
            continue
        if isinstance(want, dict) and isinstance(have, dict):
            for name in sorted(set(want) | set(have)):
                if want.get(name) != have.get(name):
                    return _rows_difference(f"{bucket}/{name}", want.get(name), have.get(name))
        return _rows_difference(bucket, want, have)
    return ""


def _rows_difference(where: str, want: Any, have: Any) -> str:
    if not isinstance(want, list) or not isinstance(have, list):
        return f"{where}: InferenceX {want!r:.300}, inferbench {have!r:.300}"
    head = f"{where}: InferenceX {len(want)} rows, inferbench {len(have)}"
    for i, (a, b) in enumerate(zip(want, have, strict=False)):
        if a != b:
            keys = sorted(set(a) ^ set(b)) if isinstance(a, dict) and isinstance(b, dict) else []
            values = sorted(k for k in set(a) & set(b) if a[k] != b[k]) if not keys else []
            return f"{head}; row {i} differs (keys {keys or values})"
    return head


def compare_changelog(
    repo: Clone, commit: Commit, python: Path, changes: list[FormatChange] | None = None
) -> Outcome:
    """The commit's `process_changelog.py` and `inferbench sweep --changed-since` on the lines
    the commit adds to the changelog (against its first parent)."""
    repo.checkout(commit.sha)
    sweep = ("sweep", "--root", str(repo.path), "--changed-since", commit.parent)
    rc, out, err = _cli(*sweep, "--format", "json")
    rows = buckets = None
    if rc == 0:
        rows = as_older([_row(job) for job in json.loads(out)], changes or [])
        code, text, _ = _cli(*sweep, "--format", "github")
        buckets = _unchunked(json.loads(text), changes or []) if code == 0 else None
    case = {
        "base": commit.parent,
        "head": commit.sha,
        "args": [],
        "rows": rows,
        "buckets": buckets,
        "restrict": True,  # compared on the keys that commit's processing knows
    }
    done = subprocess.run(
        [str(python), str(CHANGELOG_DRIVER), str(repo.path)],
        input=json.dumps([case]),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"the changelog driver failed at {commit.sha}:\n{done.stderr[-3000:]}")
    (answer,) = json.loads(done.stdout)
    repo._at = ""  # the driver checked out the commit itself: re-check out next time
    if answer["rc"] != 0 or answer["matrix"] is None:
        status: Status = "both-refuse" if rc != 0 else "oracle-refuses"
        return Outcome(commit, status, detail=_last_line(answer["error"]))
    if rc != 0:
        return Outcome(commit, "inferbench-refuses", detail=err.strip()[-2000:])
    if answer.get("invalid"):
        return Outcome(
            commit, "different", detail=f"refused by its output model: {answer['invalid']}"
        )
    expected = answer["matrix"]
    count = sum(
        len(v) if isinstance(v, list) else sum(map(len, v.values()))
        for k, v in expected.items()
        if k != "changelog_metadata"
    )
    problem = _bucket_difference(expected, answer["other"]) or _bucket_difference(
        expected, answer.get("buckets_out") or {}
    )
    dropped = answer.get("dropped") or []
    notes = [f"not compared (newer than that processing): {', '.join(dropped)}"] if dropped else []
    if changes:
        notes.append(_older_note(changes))
    note = "; ".join(notes)
    return Outcome(commit, "different" if problem else "equal", count, problem or note)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def summary(outcomes: list[Outcome]) -> Iterator[str]:
    """One line per status: how many commits, and which."""
    for status in ("equal", "different", "inferbench-refuses", "oracle-refuses", "both-refuse"):
        hits = [o for o in outcomes if o.status == status]
        if hits:
            yield f"{status}: {len(hits)}"
