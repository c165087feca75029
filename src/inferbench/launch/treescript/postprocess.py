"""What InferenceX's workflow does with a point's outputs after the launcher returns.

benchmark-tmpl.yml, in the checkout (the launcher's `/workspace`), with the job's
environment:
- fixed-seq-len: `python3 utils/process_result.py` reads `<RESULT_FILENAME>.json` and writes
  `agg_<RESULT_FILENAME>.json` (the uploaded point);
- agentic: the script's own `process_agentic_result` wrote `<RESULT_FILENAME>.json`; the
  workflow then runs `python3 -m utils.agentic.validation.validate_agentic_result
  results/aiperf_artifacts`;
- evals (RUN_EVAL or EVAL_ONLY): `meta_env.json`, `results*.json`, `sample*.jsonl` are
  uploaded as `eval_<EXP_NAME>_<RESULT_FILENAME>`, which collect-evals.yml reads with
  `python3 utils/collect_eval_results.py eval_results/ all` into `agg_eval_all.json`.

Here each step runs the tree's own program in the staged workspace, its output appended to
`logs/process-conc<C>.log`, and what it wrote is kept in the job's `results/` as
`agg_conc<C>.json` and `agg_eval_conc<C>.json` (the eval artifacts under
`eval_results/conc<C>/`). A step that fails is the point's failure, as it fails the
workflow's job.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

STEP_TIMEOUT_S = 600.0
_EVAL_FILES = ("meta_env.json", "results*.json", "sample*.jsonl")


@dataclass(frozen=True)
class Processed:
    """What the workflow's steps made of a point: the files kept, or why it failed."""

    kept: tuple[Path, ...] = ()
    failure: str = ""


def _step(argv: list[str], workspace: Path, env: Mapping[str, str], log: Path) -> int:
    """Run one of the tree's programs; 0 without running it when the tree has none (a tree
    of one's own need not carry InferenceX's processing), which the log says."""
    program = argv[1] if argv[1] != "-m" else argv[2].replace(".", "/") + ".py"
    with log.open("ab") as out:
        if not (workspace / program).is_file():
            out.write(f"\ninferbench: the tree has no {program}: not run\n".encode())
            return 0
        out.write(f"\n$ {' '.join(argv)}\n".encode())
        out.flush()
        try:
            done = subprocess.run(
                argv,
                cwd=workspace,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=STEP_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return 124
    return done.returncode


def _keep(source: Path, target: Path) -> Path | None:
    if not source.is_file():
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


def process_point(
    workspace: Path, env: Mapping[str, str], results: Path, log: Path, conc: int
) -> Processed:
    """Run the workflow's steps for one point (see the module docstring)."""
    name = env.get("RESULT_FILENAME", "")
    agentic = env.get("SCENARIO_TYPE") == "agentic-coding"
    kept: list[Path] = []
    evals = env.get("RUN_EVAL") == "true" or env.get("EVAL_ONLY") == "true"
    if env.get("EVAL_ONLY") != "true":
        if agentic:
            agg = workspace / f"{name}.json"
            argv = ["python3", "-m", "utils.agentic.validation.validate_agentic_result"]
            argv += ["results/aiperf_artifacts", "--failed-request-threshold"]
            argv += [env.get("AIPERF_FAILED_REQUEST_THRESHOLD", "0.10")]
            what = "validate_agentic_result"
        else:
            agg = workspace / f"agg_{name}.json"
            argv = ["python3", "utils/process_result.py"]
            what = "process_result.py"
        if agentic and not agg.is_file():
            return Processed(failure=f"process_agentic_result wrote no {agg.name}")
        code = _step(argv, workspace, env, log)
        if code != 0:
            return Processed(failure=f"InferenceX's {what} exited with status {code}")
        found = _keep(agg, results / f"agg_conc{conc}.json")
        if found is None and (workspace / argv[1]).is_file():
            return Processed(failure=f"InferenceX's {what} wrote no {agg.name}")
        kept += [found] if found is not None else []
    if evals:
        folder = results.parent / "eval_results" / f"conc{conc}"
        artifact = folder / f"eval_{env.get('EXP_NAME', '')}_{name}"
        for pattern in _EVAL_FILES:
            for path in sorted(workspace.glob(pattern)):
                if (found := _keep(path, artifact / path.name)) is not None:
                    kept.append(found)
        argv = ["python3", "utils/collect_eval_results.py", str(folder), "all"]
        code = _step(argv, workspace, env, log)
        if code != 0:
            return Processed(kept=tuple(kept), failure=f"collect_eval_results.py exited {code}")
        found = _keep(workspace / "agg_eval_all.json", results / f"agg_eval_conc{conc}.json")
        if found is None and (workspace / argv[1]).is_file():
            return Processed(kept=tuple(kept), failure="collect_eval_results.py wrote nothing")
        kept += [found] if found is not None else []
    return Processed(kept=tuple(kept))
