"""Run InferenceX's sweep generator several times in one process (oracle side).

Executed by the InferenceX oracle interpreter, never imported by pytest:

    python generator_driver.py TREE < calls.json > results.json

`calls.json` is a JSON list of argument lists for `generate_sweep_configs.py` (`full-sweep
--config-files ... --no-evals`, ...). Each call runs the generator's own `main()` with its own
argument parsing; only the loading and validation of the master and runner files, which
costs most of a run and never changes between calls, is done once and handed to every
call as a fresh deep copy. An argument `{master-configs}` stands for the tree's own list of
master configs (`utils/constants.py` MASTER_CONFIGS), so a caller can run another commit's tree
as that commit's workflows do. The answer: `{"fields": [every matrix field name the generator
knows], "master-configs": [InferenceX's own list], "results": [{"rc", "jobs", "error"}, ...]}`.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import json
import os
import sys
from pathlib import Path
from typing import Any


def _memoized(load: Any) -> Any:
    cache: dict[str, Any] = {}

    @functools.wraps(load)
    def wrapper(files: Any, *args: Any, **kwargs: Any) -> Any:
        key = json.dumps([files, args, sorted(kwargs.items())])
        if key not in cache:
            cache[key] = load(files, *args, **kwargs)
        return copy.deepcopy(cache[key])

    return wrapper


def _run(generator: Any, argv: list[str]) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    sys.argv = ["generate_sweep_configs.py", *argv]
    rc = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            generator.main()
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except Exception as exc:  # the generator's own errors (ValueError, ...)
            rc = 1
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    text = out.getvalue().strip()
    jobs = json.loads(text) if rc == 0 and text else None
    return {"rc": rc, "jobs": jobs, "error": err.getvalue()}


def main() -> None:
    tree = Path(sys.argv[1]).resolve()
    os.chdir(tree)  # the generator's defaults (configs/runners.yaml) are tree-relative
    sys.path[:0] = [str(tree / "utils" / "matrix_logic"), str(tree / "utils")]
    import generate_sweep_configs as generator
    from constants import MASTER_CONFIGS
    from validation import Fields

    generator.load_config_files = _memoized(generator.load_config_files)
    generator.load_runner_file = _memoized(generator.load_runner_file)
    calls = json.load(sys.stdin)
    masters = list(MASTER_CONFIGS)

    def expand(argv: list[str]) -> list[str]:
        return [name for arg in argv for name in (masters if arg == "{master-configs}" else [arg])]

    answer = {
        "fields": [field.value for field in Fields],
        "master-configs": masters,
        "results": [_run(generator, expand(argv)) for argv in calls],
    }
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
