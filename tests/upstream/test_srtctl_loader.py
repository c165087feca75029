"""`check --srtctl`: recipes judged by the real srtctl's own loader, imported in-process,
give the same schema findings as inferbench's copy of srtctl's schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, sys
sys.path.append(sys.argv[2])  # srtctl's venv last: inferbench's own packages win
from pathlib import Path
from inferbench.checks.engine import CheckOptions, check_tree
options = CheckOptions(srtctl=sys.argv[3] == "srtctl", select=("IB203",))
report = check_tree(Path(sys.argv[1]), options)
rows = sorted([str(f.file), f.line, f.message] for f in report.findings)
print(json.dumps([*rows, ["srtctl imported", "srtctl.core.schema" in sys.modules]]))
"""


def _schema_findings(tree: Path, site: str, mode: str) -> list[list[object]]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tree), site, mode],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: list[list[object]] = json.loads(done.stdout)
    return result


def test_srtctl_loader_agrees_with_the_builtin_schema(
    inferencex_tree: Path, srtctl_python: Path
) -> None:
    where = "import marshmallow, os; print(os.path.dirname(os.path.dirname(marshmallow.__file__)))"
    site = subprocess.run(
        [str(srtctl_python), "-c", where], capture_output=True, text=True, timeout=120, check=True
    ).stdout.strip()
    real = _schema_findings(inferencex_tree, site, "srtctl")
    builtin = _schema_findings(inferencex_tree, site, "builtin")
    assert real[-1] == ["srtctl imported", True] and builtin[-1] == ["srtctl imported", False]
    assert len(real) > 1 and real[:-1] == builtin[:-1]
