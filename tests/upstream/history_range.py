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
import hashlib
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

from .generator import GeneratorRun, differences, inferencex_view, run_generator
from .oracles import UPSTREAM

BUNDLE = UPSTREAM / "inferencex-history.bundle"
SINCE = "2026-04-01T00:00:00Z"  # the range's start (committer date); its end is the bundle's main
# `--changed-since` is compared from here on (process_changelog.py's keys were stable since)
CHANGELOG_SINCE = "2026-08-01T00:00:00Z"
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


def _agentic(row: dict[str, Any]) -> bool:
    return row.get("scenario-type") == "agentic-coding"


def _multinode_agentic_batches(rows: Rows) -> Rows:
    """Before #2170 a multinode agentic row ran up to 4 concurrencies on one allocation: each
    run of rows that differ only in conc (and the `_conc<c>` of the exp-name) is one row per
    4, `conc` their list and the name `_conc<c1>x<c2>...`; it had no total-cpu-dram-gb."""
    out: Rows = []
    batch: Rows = []

    def key(row: dict[str, Any]) -> str:
        rest = {k: v for k, v in row.items() if k not in ("conc", "exp-name")}
        return json.dumps([rest, re.sub(r"_conc\d+", "_conc", row["exp-name"], count=1)])

    def flush() -> None:
        for at in range(0, len(batch), 4):
            part = batch[at : at + 4]
            concs = [c for row in part for c in row["conc"]]
            name = re.sub(
                r"_conc\d+", "_conc" + "x".join(map(str, concs)), part[0]["exp-name"], count=1
            )
            out.append({**part[0], "conc": concs, "exp-name": name})
        batch.clear()

    for row in rows:
        if not _multinode_agentic(row):
            flush()
            out.append(row)
            continue
        row = {k: v for k, v in row.items() if k != "total-cpu-dram-gb"}
        if batch and key(batch[-1]) != key(row):
            flush()
        batch.append(row)
    flush()
    return out


def _multinode_agentic_one_conc(rows: Rows) -> Rows:
    """Before AgentX v1.0 (#1970) a multinode agentic row ran one concurrency, an integer:
    each batch is split back into one row per concurrency (`_conc<c>`)."""
    out: Rows = []
    for row in rows:
        if not _multinode_agentic(row) or not isinstance(row["conc"], list):
            out.append(row)
            continue
        for conc in row["conc"]:
            name = re.sub(r"_conc\d+(?:x\d+)*", f"_conc{conc}", row["exp-name"], count=1)
            out.append({**row, "conc": conc, "exp-name": name})
    return out


def _single_node_agentic_offloading(rows: Rows) -> Rows:
    """Before AgentX v1.0 (#1970) a single-node agentic row said `offloading` (default none),
    named `_offload<x>`: an entry with no offloading key at all was `offloadnone`."""
    out: Rows = []
    for row in rows:
        if _agentic(row) and "prefill" not in row and "offloading" not in row:
            name = re.sub(r"_kvnone$", "_offloadnone", row["exp-name"])
            row = {**row, "offloading": "none", "exp-name": name}
        out.append(row)
    return out


def _no_single_node_agentic_spec_decoding(rows: Rows) -> Rows:
    """Before #2183 a single-node agentic row had no spec-decoding."""
    return [
        {k: v for k, v in row.items() if k != "spec-decoding"}
        if _agentic(row) and "prefill" not in row
        else row
        for row in rows
    ]


def _batches_by_entry(rows: Rows, tree: Path) -> Rows:
    """`_multinode_agentic_batches`, each search-space entry batched on its own (as the
    generator did): the entries' concurrency counts read from the tree's master configs."""
    from inferbench.config.master import AgenticMultiNodeSearchSpace
    from inferbench.config.project import load_project
    from inferbench.core.concurrency import ConcRule, expand_concurrency

    counts: dict[str, list[int]] = {}
    for key, config in load_project(tree).masters.items():
        for point in config.entry.search_spaces():
            space = point.space
            if isinstance(space, AgenticMultiNodeSearchSpace):
                concs = expand_concurrency(
                    conc_list=space.conc_list,
                    conc_start=space.conc_start,
                    conc_end=space.conc_end,
                    rule=ConcRule.STRICT,
                )
                counts.setdefault(key, []).append(len(concs))
    out: Rows = []
    left: dict[str, list[int]] = {k: list(v) for k, v in counts.items()}
    at = 0
    while at < len(rows):
        row = rows[at]
        if not _multinode_agentic(row) or not left.get(row.get("config-key", "")):
            out.append(row)
            at += 1
            continue
        size = left[row["config-key"]].pop(0)
        out += _multinode_agentic_batches(rows[at : at + size])
        at += size
    return out


def _no_agentic_evals(rows: Rows) -> Rows:
    """Before #1947 (SWE-bench evals) an agentic row had no run-eval, and --evals-only marked
    no agentic row."""
    return [
        {k: v for k, v in row.items() if k != "run-eval"} if _agentic(row) else row
        for row in rows
        if not (_agentic(row) and row.get("eval-only"))
    ]


def _worker_blocks_as_written(rows: Rows) -> Rows:
    """Before #2167 a multinode row's prefill/decode blocks were the master's as written:
    no pp, dcp-size or pcp-size filled in (left out here where 1, their default)."""

    def block(worker: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in worker.items() if not (k in _WORKER_DEFAULTS and v == 1)}

    return [
        {**row, "prefill": block(row["prefill"]), "decode": block(row["decode"])}
        if isinstance(row.get("prefill"), dict) and isinstance(row.get("decode"), dict)
        else row
        for row in rows
    ]


_WORKER_DEFAULTS = ("pp", "dcp-size", "pcp-size")


def _bare_offload_backend(rows: Rows) -> Rows:
    """Before #2096 `kv-offload-backend` was the backend's name, not {name, version}."""
    return [
        {**row, "kv-offload-backend": row["kv-offload-backend"]["name"]}
        if isinstance(row.get("kv-offload-backend"), dict)
        else row
        for row in rows
    ]


def _max_model_len_plus_200(rows: Rows) -> Rows:
    """Before #1100 max-model-len was isl + osl + 200 (then + 256)."""
    return [
        {**row, "max-model-len": row["isl"] + row["osl"] + 200}
        if "max-model-len" in row and "isl" in row
        else row
        for row in rows
    ]


def _no_eval_only_flag(rows: Rows) -> Rows:
    """Before #1020 an --evals-only row carried no `eval-only: true`."""
    return [{k: v for k, v in row.items() if k != "eval-only"} for row in rows]


@dataclass(frozen=True)
class FormatChange:
    """A change of InferenceX's row format within the range. inferbench writes the newest
    format; on a commit from before the change its rows are rewritten to the older one
    (`older`) before they are compared, and the report names the change."""

    upstream: str  # the InferenceX commit that made it
    what: str
    older: Callable[[Rows], Rows]
    modes: tuple[str, ...] = ("default", "no-evals", "evals-only")  # the modes it changed
    # for a change that needs the tree (the master entries) to undo: older(rows, tree)
    with_tree: Callable[[Rows, Path], Rows] | None = None


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
    # (newest first: each maps the format after it to the one before it)
    FormatChange(
        "a141bfcb0e48e626c8fd278fa3c622c2d399da52",
        "multinode agentic rows: one concurrency each (were batches of 4 per search-space"
        " entry), with a sized total-cpu-dram-gb (2026-07-20, #2170)",
        _multinode_agentic_batches,
        with_tree=_batches_by_entry,
    ),
    FormatChange(
        "2952491274bdef874e72ce2dbf6488c429e8227e",
        "agentic rows carry run-eval and --evals-only marks agentic rows (2026-07-16, #1947)",
        _no_agentic_evals,
    ),
    FormatChange(
        "f9c22f0e7d17519c0c711ffdeb934daedc7f1e70",
        "single-node agentic rows carry spec-decoding (2026-07-13, #2183)",
        _no_single_node_agentic_spec_decoding,
    ),
    FormatChange(
        "dbc515b38bd97cc2778143e699997980a0ba3db1",
        "kv-offload-backend is {name, version} (was the name; 2026-07-13, #2096)",
        _bare_offload_backend,
    ),
    FormatChange(
        "62b2c9bc76f571d7b154a8b4dddccd8f5bf61c38",
        "multinode prefill/decode blocks carry pp, dcp-size, pcp-size (2026-07-10, #2167)",
        _worker_blocks_as_written,
    ),
    FormatChange(
        "303669b0e16aa6a0c600b8a68b4f91b973a34127",
        "multinode agentic rows batch concurrencies (were one integer conc per row;"
        " 2026-07-02, AgentX v1.0, #1970)",
        _multinode_agentic_one_conc,
    ),
    FormatChange(
        "303669b0e16aa6a0c600b8a68b4f91b973a34127",
        "single-node agentic rows say kv-offloading, `_kv<x>` (were `offloading`, default"
        " none, `_offload<x>`; 2026-07-02, AgentX v1.0, #1970)",
        _single_node_agentic_offloading,
    ),
    FormatChange(
        "f34a83b2535fbf7a413fb9fa92fdf7c95f0e2b93",
        "max-model-len is isl + osl + 256 (was + 200; 2026-04-20, #1100)",
        _max_model_len_plus_200,
    ),
    FormatChange(
        "68bf34d2c5de220865c9df666e528bfa03341b7d",
        "--evals-only rows carry eval-only: true (2026-04-10, #1020)",
        _no_eval_only_flag,
    ),
)


_EVAL_SEQ = (8192, 1024)
MIN_EVAL_CONC = 16


def _single_node_marks(rows: Rows, min_conc: int) -> set[int]:
    """Per (model, runner, framework, precision, isl, osl, spec-decoding, dp-attn), the 8k1k
    single-node rows at the highest and the median concurrency (of those >= min_conc)."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, row in enumerate(rows):
        if "tp" not in row or (row.get("isl"), row.get("osl")) != _EVAL_SEQ:
            continue
        if row["conc"] < min_conc:
            continue
        key = tuple(row[k] for k in ("model", "runner", "framework", "precision", "isl", "osl"))
        groups.setdefault((*key, row["spec-decoding"], row["dp-attn"]), []).append(i)
    marks: set[int] = set()
    for members in groups.values():
        values = sorted({rows[i]["conc"] for i in members})
        targets = {values[-1], values[len(values) // 2]}
        marks.update(i for i in members if rows[i]["conc"] in targets)
    return marks


def _evals_before_1000(rows: Rows) -> Rows:
    """InferenceX's eval selection before #1000 (2026-04-19): single-node 8k1k rows only, at
    each group's highest and median concurrency, no lower bound."""
    marks = _single_node_marks(rows, 0)
    return [{**row, "run-eval": i in marks} for i, row in enumerate(rows)]


def _evals_before_1850(rows: Rows, skip: tuple[str, ...] = ()) -> Rows:
    """From #1000 to #1850 (2026-06-19): single-node as before with concurrencies below 16
    ignored; multinode, per (model, runner, framework, precision, spec-decoding, prefill
    dp-attn, decode dp-attn), the 8k1k row with the highest concurrency, `eval-conc` the
    median of its concurrencies of 16 and more."""
    marks = _single_node_marks(rows, MIN_EVAL_CONC)
    best: dict[tuple[Any, ...], tuple[int, int]] = {}
    for i, row in enumerate(rows):
        if "tp" in row or "prefill" not in row or (row.get("isl"), row.get("osl")) != _EVAL_SEQ:
            continue
        eligible = sorted(c for c in row["conc"] if c >= MIN_EVAL_CONC)
        if not eligible:
            continue
        key = tuple(row[k] for k in ("model", "runner", "framework", "precision"))
        key = (*key, row["spec-decoding"], row["prefill"]["dp-attn"], row["decode"]["dp-attn"])
        if key[:3] == skip:
            continue
        if key not in best or eligible[-1] > best[key][1]:
            best[key] = (i, eligible[-1])
    eval_conc = {}
    for i, _ in best.values():
        eligible = sorted(c for c in rows[i]["conc"] if c >= MIN_EVAL_CONC)
        eval_conc[i] = eligible[len(eligible) // 2]
    out = []
    for i, row in enumerate(rows):
        row = {**row, "run-eval": i in marks or i in eval_conc}
        if i in eval_conc:
            row["eval-conc"] = eval_conc[i]
        out.append(row)
    return out


@dataclass(frozen=True)
class EvalPolicy:
    """A change of which rows InferenceX marks for an accuracy eval. inferbench follows the
    newest policy; on a commit from before `upstream`, its default and --evals-only rows are
    the older policy (`older`) applied to its --no-evals rows, and the report says so."""

    upstream: str
    what: str
    older: Callable[[Rows], Rows]
    # the commit that began the older policy, when it held only from there on (a window);
    # "" when it held from before the range
    since: str = ""
    # a policy that changed only the --evals-only rows: applied to inferbench's own
    # --evals-only rows (default and --no-evals as emitted) instead of `older`
    evals_only: bool = False


def _no_agentic_eval_rows(rows: Rows) -> Rows:
    """#2451 (2026-08-01) to #2464 (2026-08-03): agentic evals disabled outright
    (`AGENTIC_EVALS_DISABLED`): --evals-only selects no agentic row."""
    return [row for row in rows if not _agentic(row)]


def _evals_before_1295(rows: Rows) -> Rows:
    """#1157 (2026-04-29) to #1295 (2026-05-07): #1000's policy with no multinode eval for
    DeepSeek-V4-Pro on gb300-cw with dynamo-sglang (its srt-slurm pin had no eval path)."""
    return _evals_before_1850(
        rows, skip=("deepseek-ai/DeepSeek-V4-Pro", "gb300-cw", "dynamo-sglang")
    )


EVAL_POLICIES = (  # oldest first
    EvalPolicy(
        "2e9cecf916820f2a2d1bba5ab4aef0f708466d5a",
        "multinode evals, concurrencies below 16 ignored (2026-04-19, #1000)",
        _evals_before_1000,
    ),
    EvalPolicy(
        "876b595218171ade27c4ec4a16edd4a67d7328cd",
        "DeepSeek-V4-Pro gb300-cw dynamo-sglang evaluated again (2026-05-07, #1295)",
        _evals_before_1295,
    ),
    EvalPolicy(
        "504f29c5639912f4a530b7f2dbac948998038e1c",
        "a multinode eval per parallelism, at its highest concurrency (2026-06-19, #1850)",
        _evals_before_1850,
    ),
    EvalPolicy(
        "ba0296a39974c335a6ba3cdf851a51eee6e5cacd",
        "agentic evals enabled again (2026-08-03, #2464; disabled from #2451, 2026-08-01)",
        _no_agentic_eval_rows,
        since="46282b382c309c034487f160937e6137bcaf94be",
        evals_only=True,
    ),
)


def older_evals(commit: Commit, commits: list[Commit]) -> EvalPolicy | None:
    """The eval policy in force at `commit`, when it is older than inferbench's."""
    at = {c.upstream: c.index for c in commits}
    later = [
        p
        for p in EVAL_POLICIES
        if p.upstream in at
        and commit.index < at[p.upstream]
        and (not p.since or (p.since in at and at[p.since] <= commit.index))
    ]
    return later[0] if later else None


def older_format(commit: Commit, commits: list[Commit]) -> list[FormatChange]:
    """The format changes that came after `commit` (all of `commits`: the whole range)."""
    at = {c.upstream: c.index for c in commits}
    return [f for f in FORMAT_CHANGES if f.upstream in at and commit.index < at[f.upstream]]


def as_older(
    rows: Rows, changes: list[FormatChange], mode: str = "default", tree: Path | None = None
) -> Rows:
    for change in changes:
        if mode not in change.modes:
            continue
        if change.with_tree is not None and tree is not None:
            rows = change.with_tree(rows, tree)
        else:
            rows = change.older(rows)
    return rows


@dataclass(frozen=True)
class Outcome:
    commit: Commit
    status: Status
    jobs: int = 0  # the oracle's job (row) count
    detail: str = ""  # what differs, why a tool refused, or what was not compared
    mode: str = "default"  # the eval mode (MODES) of a sweep comparison

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


# `inferbench sweep`'s eval modes and the generator's flags for them (the same spelling)
MODES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("default", ()),
    ("no-evals", ("--no-evals",)),
    ("evals-only", ("--evals-only",)),
)
# what the generator reads: its code, its master list and the master and runner files
GENERATOR_INPUTS = ("utils/matrix_logic", "utils/constants.py", "configs", ".github/configs")
# what `inferbench sweep` reads besides: the recipes the entries name, inferbench.toml
SWEEP_INPUTS = (*GENERATOR_INPUTS, "benchmarks/multi_node", "inferbench.toml")


def inputs_key(repo: Clone, commit: Commit, paths: tuple[str, ...]) -> str:
    """A digest of the git objects of `paths` at `commit`: two commits with the same key
    give the tools the same files."""
    listing = repo.git("ls-tree", commit.sha, "--", *paths)
    return hashlib.sha256(listing.encode()).hexdigest()[:24]


def compare_sweep(
    repo: Clone,
    commit: Commit,
    python: Path,
    changes: list[FormatChange] | None = None,
    cache: Path | None = None,
    policy: EvalPolicy | None = None,
) -> list[Outcome]:
    """The commit's generator and `inferbench sweep` on the commit's tree, in each eval mode
    (inferbench's rows in the format of that commit: `changes`, see `older_format`; its eval
    marks by that commit's `policy`, see `older_evals`). With `cache` (a folder), the
    generator's answers are kept there by what it reads."""
    repo.checkout(commit.sha)
    calls = [["full-sweep", "--config-files", "{master-configs}", *flags] for _, flags in MODES]
    key = inputs_key(repo, commit, GENERATOR_INPUTS)
    generator = run_generator(python, repo.path, calls, cache / f"{key}.json.gz" if cache else None)
    swept = {mode: _cli("sweep", "--root", str(repo.path), "--format", "json", *flags)
             for mode, flags in MODES}  # fmt: skip
    if policy is not None and swept["no-evals"][0] == 0:
        swept = _older_policy(swept, policy)
    return [
        _compare_mode(
            commit, mode, swept[mode], run, generator.fields, changes or [], policy, repo.path
        )
        for (mode, _), run in zip(MODES, generator.runs, strict=True)
    ]


def _older_policy(
    swept: dict[str, tuple[int, str, str]], policy: EvalPolicy
) -> dict[str, tuple[int, str, str]]:
    """The default and --evals-only rows under an older eval policy, from --no-evals (or
    inferbench's own --evals-only rows, for a policy that changed only those)."""
    if policy.evals_only:
        rc, out, err = swept["evals-only"]
        if rc != 0:
            return swept
        return {**swept, "evals-only": (0, json.dumps(policy.older(json.loads(out))), err)}
    rows = policy.older(json.loads(swept["no-evals"][1]))
    evals = [{**row, "eval-only": True} for row in rows if row.get("run-eval")]
    return {
        "default": (0, json.dumps(rows), ""),
        "no-evals": swept["no-evals"],
        "evals-only": (0, json.dumps(evals), ""),
    }


def _compare_mode(
    commit: Commit,
    mode: str,
    swept: tuple[int, str, str],
    run: GeneratorRun,
    fields: frozenset[str],
    changes: list[FormatChange],
    policy: EvalPolicy | None,
    tree: Path,
) -> Outcome:
    rc, out, err = swept
    if run.rc != 0 or run.jobs is None:
        status: Status = "both-refuse" if rc != 0 else "oracle-refuses"
        return Outcome(commit, status, detail=_last_line(run.error), mode=mode)
    if rc != 0:
        return Outcome(commit, "inferbench-refuses", len(run.jobs), err.strip()[-2000:], mode)
    rows = as_older(json.loads(out), changes, mode, tree)
    problem = differences(run.jobs, [inferencex_view(row, fields) for row in rows])
    notes = [_older_note(changes)] if changes else []
    if (
        policy is not None
        and mode != "no-evals"
        and (mode == "evals-only" or not policy.evals_only)
    ):
        notes.append(f"eval marks by the policy before {policy.what}")
    status = "different" if problem else "equal"
    return Outcome(commit, status, len(run.jobs), problem or "; ".join(notes), mode)


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
