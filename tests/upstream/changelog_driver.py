"""Run InferenceX's changelog processing for several revision ranges (oracle side).

Executed by the InferenceX oracle interpreter, never imported by pytest:

    python changelog_driver.py REPO < cases.json > results.json

`cases.json` is a JSON list of `{"base", "head", "args"}`. For each case the driver checks out
`head` in REPO (a throwaway git repository holding an InferenceX tree) and runs
`utils/process_changelog.py --base-ref BASE --head-ref HEAD --changelog-file
perf-changelog.yaml ARGS` through its own `main()`, as `run-sweep.yml` does. The processing
starts the sweep generator as a subprocess for every entry; those calls run the generator's own
`main()` in this process instead, with the loading and validation of unchanged master and runner
files done once (keyed by their content). A generator script that differs from the head's
(another revision's copy) runs as a real subprocess. The answer is one `{"rc", "matrix",
"error", "other"}` object per case: `matrix` is the processing's JSON output. A case may carry
`rows`, another tool's flat list of jobs for the same range (benchmark rows, then rows flagged
`eval-only`); `other` is then those rows put into the processing's buckets, checked by its own
output model (`ChangelogMatrixEntry`) and kept as they are, keys included, for a like-for-like
comparison with the processing's dumped output. A case may also carry `buckets`, another
tool's output already split into the processing's buckets; `buckets_out` is then that split,
checked by the output model, with the processing's metadata, to compare bucket for bucket.
A case with `"validate": true` also runs `utils/validate_perf_changelog.py` (what
`run-sweep.yml` runs on a pull request) through its own `main()`; its call of the processing
runs in this process too. `validated` is then its exit status (0: accepted) and `validation`
its message. A case with `"restrict": true` (another commit's processing, of an older format)
has its `rows` and `buckets` restricted first to what that processing knows: the keys its
`validation.Fields` names and the buckets of its output model; `dropped` lists what went.
An output the model refuses is answered with `"invalid"` (its message), not a crash.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

_REAL_RUN = subprocess.run


def _content_key(paths: Any) -> str:
    names = paths if isinstance(paths, list) else [paths]
    digest = hashlib.sha256()
    for name in names:
        digest.update(os.path.abspath(name).encode() + b"\0")
        with contextlib.suppress(OSError):
            digest.update(Path(name).read_bytes())
    return digest.hexdigest()


def _memoized(load: Any) -> Any:
    cache: dict[str, Any] = {}

    def wrapper(paths: Any, *args: Any, **kwargs: Any) -> Any:
        key = _content_key(paths) + json.dumps([args, sorted(kwargs.items())])
        if key not in cache:
            cache[key] = load(paths, *args, **kwargs)
        return copy.deepcopy(cache[key])

    return wrapper


class _InProcessGenerator:
    """Stands in for `subprocess.run([python3, generate_sweep_configs.py, ...])`."""

    def __init__(self, script: Path) -> None:
        self.script = script.resolve()
        self.source = self.script.read_bytes()
        sys.path.insert(0, str(self.script.parent))
        spec = importlib.util.spec_from_file_location("generate_sweep_configs", self.script)
        assert spec is not None and spec.loader is not None
        self.module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.module)
        self.module.load_config_files = _memoized(self.module.load_config_files)
        self.module.load_runner_file = _memoized(self.module.load_runner_file)

    def handles(self, cmd: Any) -> bool:
        if not isinstance(cmd, list | tuple) or len(cmd) < 2:
            return False
        script = Path(str(cmd[1]))
        if script.name != self.script.name or not script.is_file():
            return False
        return script.resolve() == self.script or script.read_bytes() == self.source

    def run(self, cmd: list[str], check: bool) -> subprocess.CompletedProcess[str]:
        out, err = io.StringIO(), io.StringIO()
        saved = sys.argv
        sys.argv = [str(cmd[1]), *map(str, cmd[2:])]
        rc = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                self.module.main()
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else 1
            except Exception as exc:  # a real run would exit 1 with the traceback
                rc = 1
                print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
            finally:
                sys.argv = saved
        done = subprocess.CompletedProcess(cmd, rc, out.getvalue(), err.getvalue())
        if check and rc != 0:
            raise subprocess.CalledProcessError(rc, cmd, done.stdout, done.stderr)
        return done


def _as_processing_output(
    process_changelog: Any, rows: list[dict[str, Any]], meta: Any, restrict: bool = False
) -> Any:
    """`rows` bucketed as `process_changelog.main()` buckets its results and checked by its
    output model (no key it forbids), as they are: the model fills in the defaults it has
    (`eval-all-concs: false`, `additional-settings: []`, ...), and a row must carry every key
    the processing writes itself."""
    from collections import defaultdict

    single: dict[str, list[Any]] = defaultdict(list)
    multi: dict[str, list[Any]] = defaultdict(list)
    evals = [row for row in rows if row.get("eval-only")]
    for row in (row for row in rows if not row.get("eval-only")):
        if row.get("scenario-type") == "agentic-coding":
            (multi if row.get("prefill") is not None else single)["agentic"].append(row)
        else:
            name = process_changelog.seq_len_to_str(row["isl"], row["osl"])
            (multi if row.get("prefill") is not None else single)[name].append(row)
    one = [e for e in evals if e.get("prefill") is None]
    many = [e for e in evals if e.get("prefill") is not None]
    agentic = "agentic-coding"
    output = {
        "single_node": single,
        "multi_node": multi,
        "evals": [e for e in one if e.get("scenario-type") != agentic],
        "agentic_evals": [e for e in one if e.get("scenario-type") == agentic],
        "multinode_evals": [e for e in many if e.get("scenario-type") != agentic],
        "multinode_agentic_evals": [e for e in many if e.get("scenario-type") == agentic],
        "changelog_metadata": meta,
    }
    if restrict:  # an older processing: only its own buckets (a newer one, when empty, goes)
        names = process_changelog.ChangelogMatrixEntry.model_fields
        output = {k: v for k, v in output.items() if k in names or v}
    process_changelog.ChangelogMatrixEntry.model_validate(output)
    return json.loads(json.dumps(output))


def _restrict(process_changelog: Any, rows: Any, buckets: Any) -> tuple[Any, Any, list[str]]:
    """`rows` and `buckets` with only the keys and buckets this processing knows."""
    validation = importlib.import_module("matrix_logic.validation")  # the processing's own

    known = {field.value for field in validation.Fields}
    names = set(process_changelog.ChangelogMatrixEntry.model_fields)
    dropped: set[str] = set()

    def row(item: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for key, value in item.items():
            if key not in known:
                dropped.add(key)
                continue
            out[key] = (
                row(value) if key in ("prefill", "decode") and isinstance(value, dict) else value
            )
        return out

    if rows is not None:
        rows = [row(item) for item in rows]
    if buckets is not None:
        kept = {}
        for name, value in buckets.items():
            if name not in names:
                if value:
                    dropped.add(f"bucket {name}")
                continue
            if isinstance(value, dict):
                kept[name] = {k: [row(item) for item in v] for k, v in value.items()}
            else:
                kept[name] = [row(item) for item in value]
        buckets = kept
    return rows, buckets, sorted(dropped)


def _git(repo: Path, *args: str) -> None:
    _REAL_RUN(["git", *args], cwd=repo, check=True, capture_output=True)


def main() -> None:
    repo = Path(sys.argv[1]).resolve()
    os.chdir(repo)  # the processing reads configs/ and utils/ relative to the checkout
    sys.path[:0] = [str(repo / "utils")]
    import process_changelog

    process_changelog.load_config_files = _memoized(process_changelog.load_config_files)
    generator = _InProcessGenerator(repo / "utils" / "matrix_logic" / "generate_sweep_configs.py")

    def run(cmd: Any, *args: Any, **kwargs: Any) -> Any:
        if generator.handles(cmd):
            return generator.run(list(cmd), bool(kwargs.get("check", False)))
        if isinstance(cmd, list) and len(cmd) > 1 and str(cmd[1]).endswith("process_changelog.py"):
            rc, out, err = _main(process_changelog, ["process_changelog.py", *map(str, cmd[2:])])
            return subprocess.CompletedProcess(cmd, rc, out, err)
        if isinstance(cmd, list) and cmd and cmd[0] == "python3":
            cmd = [sys.executable, *cmd[1:]]  # the oracle venv, as run-sweep.yml's uv run
        return _REAL_RUN(cmd, *args, **kwargs)

    process_changelog.subprocess.run = run  # type: ignore[attr-defined]
    import validate_perf_changelog

    results = []
    for case in json.load(sys.stdin):
        _git(repo, "checkout", "-q", "--detach", case["head"])
        refs = ["--base-ref", case["base"], "--head-ref", case["head"]]
        argv = ["process_changelog.py", *refs, "--changelog-file", "perf-changelog.yaml"]
        rc, out, err = _main(process_changelog, [*argv, *case["args"]])
        matrix = json.loads(out.strip().splitlines()[-1]) if rc == 0 and out.strip() else None
        result: dict[str, Any] = {"rc": rc, "matrix": matrix, "error": err, "other": None}
        rows, buckets = case.get("rows"), case.get("buckets")
        if case.get("restrict") and matrix is not None:
            rows, buckets, result["dropped"] = _restrict(process_changelog, rows, buckets)
        try:
            if matrix is not None and rows is not None:
                meta = matrix["changelog_metadata"]
                result["other"] = _as_processing_output(
                    process_changelog, rows, meta, bool(case.get("restrict"))
                )
            if matrix is not None and buckets is not None:
                output = {**buckets, "changelog_metadata": matrix["changelog_metadata"]}
                process_changelog.ChangelogMatrixEntry.model_validate(output)  # no unknown key
                result["buckets_out"] = output
        except ValueError as exc:  # pydantic's ValidationError
            if not case.get("restrict"):
                raise
            result["invalid"] = str(exc)[:3000]
        if case.get("validate"):
            argv = ["validate_perf_changelog.py", *refs, "--changelog-file", "perf-changelog.yaml"]
            code, out, err = _main(validate_perf_changelog, [*argv, *case["args"]])
            result.update(validated=code, validation=(out + err).strip())
        results.append(result)
    json.dump(results, sys.stdout)


def _main(module: Any, argv: list[str]) -> tuple[int, str, str]:
    """Run `module.main()` as its script would run with `argv`: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    saved, sys.argv = sys.argv, argv
    rc = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            returned = module.main()
            rc = returned if isinstance(returned, int) else 0
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except Exception as exc:  # a real run would exit 1 with the traceback
            rc = 1
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        finally:
            sys.argv = saved
    return rc, out.getvalue(), err.getvalue()


if __name__ == "__main__":
    main()
