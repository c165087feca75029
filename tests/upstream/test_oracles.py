"""The conformance suite's own footing: the trees are there and the oracles run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


def test_inferencex_validator_loads_the_real_masters(
    inferencex_tree: Path, inferencex_python: Path
) -> None:
    """The oracle venv imports InferenceX's validation module and loads its own configs."""
    code = (
        "import json, sys; sys.path.insert(0, 'utils/matrix_logic');"
        "from validation import load_config_files, load_runner_file;"
        "c = load_config_files(['configs/nvidia-master.yaml', 'configs/amd-master.yaml']);"
        "r = load_runner_file('configs/runners.yaml');"
        "print(json.dumps([len(c), len(r)]))"
    )
    done = subprocess.run(
        [str(inferencex_python), "-c", code],
        cwd=inferencex_tree,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    n_configs, n_runner_keys = json.loads(done.stdout)
    assert n_configs > 100 and n_runner_keys > 0
