"""README's install block: `pip install .` gives a working `inferbench` console script.

A copy of the sources is installed (not editable) into a fresh virtual environment; its
dependencies come from this interpreter's site-packages through a `.pth` line, so the test
needs no network beyond the build backend pip fetches for an isolated build. The installed
command then runs from outside the checkout, which also proves the packaged data (catalogs,
the default calibration, the rule table) ships with it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _venv(where: Path) -> tuple[Path, Path]:
    """A venv without pip whose site-packages sees this interpreter's packages last."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # a plain path line: appended to sys.path, its own .pth files (the editable install of
    # this checkout) are not processed, so `import inferbench` finds the installed copy
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, where / "bin"


def test_readme_installs_with_pip() -> None:
    readme = (ROOT / "README.md").read_text()
    first = readme[readme.index("```bash") : readme.index("```", readme.index("```bash") + 3)]
    assert "pip install ." in first and "pipx install ." in first


@pytest.mark.slow
@pytest.mark.integration
def test_pip_install_gives_the_console_script(tmp_path: Path) -> None:
    source = tmp_path / "source"  # pip builds in the source folder: never in the checkout
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    python, bin_dir = _venv(tmp_path / "venv")
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    done = subprocess.run(
        [*pip, "install", "--quiet", "--no-deps", str(source)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    inferbench = bin_dir / "inferbench"
    assert inferbench.is_file(), "no console script: [project.scripts] lost `inferbench`?"

    def run(*args: str) -> str:
        proc = subprocess.run(
            [str(inferbench), *args], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    where = subprocess.run(
        [str(python), "-c", "import inferbench; print(inferbench.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(tmp_path / "venv") in where, where
    assert run("--version").startswith("inferbench ")
    assert "IB401" in run("check", "--list-rules")
    estimate = run(
        "sim", "estimate", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100",
        "--isl", "256", "--osl", "64", "--num-prompts", "20",
    )  # fmt: skip
    assert "Llama-3.1-8B on 1x h100" in estimate and "tok/s/GPU" in estimate
