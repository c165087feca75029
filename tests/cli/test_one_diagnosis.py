"""One bad field of a master entry: `check`, `sweep`, `plan` and `run` name the same cause
at the same file and line, with the same fix (issue 40: `plan` said "no job matches", `run`
"is not in any master file (did you mean ...-agentic?)", `sweep` crashed on `tp: 0`), and
`plan`/`run` refuse an image `check` reports as IB702 (a newline split the printed plan)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from .clirun import run_cli
from .corpus import EXAMPLES, MASTER

KEY = "llama3.1-8b-bf16-h200-vllm"
IMAGE = "image: vllm/vllm-openai:v0.10.2"
SPACE = "{tp: 1, conc-start: 4, conc-end: 64}"
# (case, text of the entry, its replacement)
BAD_FIELDS = {
    "tp-zero": (SPACE, "{tp: 0, conc-start: 4, conc-end: 64}"),
    "osl-negative": ("osl: 1024", "osl: -1"),
    "conc-start-above-end": (SPACE, "{tp: 1, conc-start: 64, conc-end: 4}"),
    "model-empty": ("model: meta-llama/Llama-3.1-8B-Instruct", 'model: ""'),
    "image-newline": (IMAGE, 'image: "vllm/vllm-openai:v0.10.2\\necho pwned"'),
    "image-cr": (IMAGE, 'image: "vllm/vllm-openai:v0.10.2\\r"'),
    "image-rtl-override": (IMAGE, 'image: "vllm/vllm-openai:v0.10\\u202e.2"'),
    "image-zero-width": (IMAGE, 'image: "vllm\\u200b/vllm-openai:v0.10.2"'),
}
COMMANDS = {
    "plan": ("plan", KEY),
    "plan-slurm": ("plan", KEY, "--backend", "slurm"),
    "plan-glob": ("plan", "llama3.1-8b-*"),
    "run": ("run", "--config-keys", KEY, "--dry-run"),
    "run-all": ("run", "--dry-run"),
    "sweep": ("sweep", "--format", "json"),
}
FINDING = re.compile(r"^(configs/nvidia-master\.yaml:\d+):\d+: IB\d+ error [\w-]+: (.+) \[", re.M)


def _tree(tmp_path: Path, field: str) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree, ignore=shutil.ignore_patterns("broken"))
    master = tree / MASTER
    old, new = BAD_FIELDS[field]
    text = master.read_text()
    assert old in text
    master.write_text(text.replace(old, new, 1))
    return tree


@pytest.mark.parametrize("field", sorted(BAD_FIELDS))
def test_every_command_names_the_same_cause(
    field: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(_tree(tmp_path, field))
    monkeypatch.setenv("COLUMNS", "400")
    checked = run_cli(["check"], capsys)
    assert checked.code == 1, checked.text
    found = FINDING.search(checked.out)
    assert found, checked.text
    where, message = found.groups()
    for name, args in COMMANDS.items():
        ran = run_cli(list(args), capsys)
        text = ran.text
        assert "Traceback" not in text and "internal error" not in text, (name, text)
        # sweep passes an image on as InferenceX's generator does, and warns
        swept = name == "sweep" and field.startswith("image")
        assert ran.code == (0 if swept else 2), (name, ran.code, text)
        assert f"{where}:" in text, (name, where, text)
        assert message in text, (name, message, text)
        assert "fix:" in text, (name, text)
        assert "no job matches" not in text and "did you mean" not in text, (name, text)


def test_an_unrelated_bad_entry_does_not_block_a_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plan KEY` refuses only what it was asked to plan; `sweep` still names the bad entry."""
    monkeypatch.chdir(_tree(tmp_path, "tp-zero"))
    ran = run_cli(["plan", "gptoss-fp4-b200-trt"], capsys)
    assert ran.code == 0, ran.text
    ran = run_cli(["sweep", "--format", "json"], capsys)
    assert ran.code == 2 and "(entry not swept)" in ran.err, ran.text
