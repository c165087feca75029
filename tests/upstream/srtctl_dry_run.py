"""Run the real `srtctl dry-run` on many rendered jobs in one process (and, with
`resolve FILE[:SELECTOR]...`, print the recipes srtctl resolves from source files).

Run with the srtctl venv's interpreter: `python srtctl_dry_run.py JOB_DIR...`, each JOB_DIR
holding `recipe.yaml` and `srtslurm.yaml`. For each, it calls srtctl's own console entry
point (`srtctl.cli.submit:main`, what the `srtctl` script runs) with
`dry-run -f JOB_DIR/recipe.yaml`, SRTSLURM_CONFIG pointing at the job's srtslurm.yaml and the
job directory as working directory, and prints one line per job, `MARK` then JSON: its
directory, exit status and the tail of what srtctl printed (srtctl's console may write to
the real stdout too; the mark tells the lines apart). One process pays srtctl's import
once instead of once per job (about a second each).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys

MARK = "@@srtctl-dry-run "


def dry_run(job_dir: str) -> dict[str, object]:
    from srtctl.cli import submit

    os.environ["SRTSLURM_CONFIG"] = os.path.join(job_dir, "srtslurm.yaml")
    os.chdir(job_dir)
    out = io.StringIO()
    sys.argv = ["srtctl", "dry-run", "-f", os.path.join(job_dir, "recipe.yaml")]
    code: object = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            submit.main()
        except SystemExit as exc:
            code = exc.code
        except Exception as exc:  # a crash is a failed dry-run, reported
            code = f"{type(exc).__name__}: {exc}"
    import srtctl  # which srtctl judged it: PYTHONPATH=<ref>/src runs that ref's own

    return {
        "job": job_dir,
        "rc": code if code is not None else 0,
        "tail": out.getvalue()[-3000:],
        "srtctl": os.path.dirname(srtctl.__file__ or ""),
    }


def resolve(reference: str) -> dict[str, object]:
    """The recipe srtctl submits for `FILE[:SELECTOR]`: its own loader and override merge."""
    import yaml
    from srtctl.cli.submit import is_override_config, parse_config_arg
    from srtctl.core.config import generate_override_configs

    path, selector = parse_config_arg(reference)
    with open(path) as f:
        raw = yaml.safe_load(f)
    if not is_override_config(path):
        return {"reference": reference, "recipes": [raw]}
    variants = generate_override_configs(raw, selector=selector)
    return {"reference": reference, "recipes": [config for _, config in variants]}


def main() -> None:
    if sys.argv[1:2] == ["resolve"]:
        for reference in sys.argv[2:]:
            print(MARK + json.dumps(resolve(reference)), flush=True)
        return
    for job_dir in sys.argv[1:]:
        print(MARK + json.dumps(dry_run(os.path.abspath(job_dir))), flush=True)


if __name__ == "__main__":
    main()
