"""What a local run of a benchmark script finds first on PATH: the job's environment.

In InferenceX the script runs in the engine's image: `python3` there has the image's
packages, and the script `pip install`s what it lacks (lm-eval, datasets) into that image.
Locally there is no image to install into, so the run's `bin/` folder gives the script:

- `python3`/`python`: the interpreter of the job (inferbench's own, which has lm-eval with the
  `evals` or `dev` extra), so `python3 -m lm_eval` runs where the script expects it;
- `pip`, `pip3`, `python3 -m pip`: a stand-in that says in the script's log what it did not
  install and why (nothing is written outside the run directory, and the caller's
  environments stay as they are), then succeeds as an install of a present package would;
- `nvidia-smi`, `rocm-smi`, `amd-smi`, only where this machine has none: a stand-in that says
  in the log that the machine has no such GPU, prints nothing and succeeds (the scripts call
  `nvidia-smi` bare to log the GPUs; the GPU monitor then finds no samples);
- `uv`: agentic scripts build aiperf's venv with it (`uv venv DIR`, `uv pip install -e
  utils/aiperf ...`). `uv venv DIR` leaves DIR/bin with `python` (the job's interpreter, for
  InferenceX's post-processing), `aiperf` (aiperfshim.py: `inferbench replay` standing in for
  aiperf, as `inferbench bench` stands in for sa-bench) and `hf` (a stand-in: the trace corpus
  is not downloaded); `uv pip install` says what it did not install.

Each stand-in's note starts with `inferbench:` so a log reader tells them from the script.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path

from inferbench.core.fsio import make_executable

GPU_TOOLS = ("nvidia-smi", "rocm-smi", "amd-smi")
PIP_NOTE = (
    "inferbench: not installing ({what}): a local run uses the job's environment as it is "
    "and writes nothing outside its run directory"
)


def _python(python: str) -> str:
    note = PIP_NOTE.format(what="python3 $*")
    return (
        "#!/usr/bin/env bash\n"
        'if [[ "$1" == -m && ( "$2" == pip || "$2" == pip3 ) ]]; then\n'
        f'    echo "{note}" >&2\n'
        "    exit 0\n"
        "fi\n"
        f'exec {shlex.quote(python)} "$@"\n'
    )


def _gpu_tool(name: str) -> str:
    return (
        "#!/usr/bin/env bash\n"
        f'echo "inferbench: stand-in {name} ($*): this machine has no {name}, so no GPU of '
        'its kind to report; nothing printed" >&2\n'
        "exit 0\n"
    )


def _uv(python: str) -> str:
    job_python = shlex.quote(python)
    note = PIP_NOTE.format(what="uv $*")
    return f"""#!/usr/bin/env bash
if [[ "$1" == venv ]]; then
    for a in "$@"; do dir="$a"; done
    mkdir -p "$dir/bin"
    printf '#!/usr/bin/env bash\\nexec %s "$@"\\n' {job_python} > "$dir/bin/python"
    printf '#!/usr/bin/env bash\\nexec %s -m inferbench.launch.treescript.aiperfshim "$@"\\n' \\
        {job_python} > "$dir/bin/aiperf"
    printf '#!/usr/bin/env bash\\necho "inferbench: stand-in hf ($*): nothing downloaded" >&2\\n' \\
        > "$dir/bin/hf"
    chmod +x "$dir/bin/python" "$dir/bin/aiperf" "$dir/bin/hf"
    echo "inferbench: stand-in uv venv: $dir/bin holds the job's python, inferbench's aiperf \\
stand-in and an hf that downloads nothing" >&2
    exit 0
fi
echo "{note}" >&2
exit 0
"""


def write_job_tools(folder: Path, python: str, path: Mapping[str, str] | str) -> Path:
    """Write the stand-ins into `folder` (to go first on PATH); `path` is the PATH the
    script would otherwise see (GPU tools found there are left to it)."""
    search = path if isinstance(path, str) else path.get("PATH", "")
    folder.mkdir(parents=True, exist_ok=True)
    scripts = {"python3": _python(python), "python": _python(python), "uv": _uv(python)}
    pip_note = PIP_NOTE.format(what='$(basename "$0") $*')
    for name in ("pip", "pip3"):
        scripts[name] = f'#!/usr/bin/env bash\necho "{pip_note}" >&2\nexit 0\n'
    for tool in GPU_TOOLS:
        if shutil.which(tool, path=search) is None:
            scripts[tool] = _gpu_tool(tool)
    for name, text in scripts.items():
        (folder / name).write_text(text, encoding="utf-8")
        make_executable(folder / name)
    return folder
