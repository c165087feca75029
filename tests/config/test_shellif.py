"""Where a launcher branch opens: the one reading both launcher readers share."""

from __future__ import annotations

from pathlib import Path

from inferbench.config.launcher import parse_launcher
from inferbench.config.launcher_srt_ref import SrtClone
from inferbench.config.shellif import opens


def test_a_branch_opens_on_its_then_or_on_a_condition_continued_below() -> None:
    assert opens('if [[ $A == "x" ]]; then  # note') == ("if", '[[ $A == "x" ]]')
    assert opens('elif [[ "$A" == "a#b" ]]; then') == ("elif", '[[ "$A" == "a#b" ]]')
    assert opens("if [[ $A != x ]] &&") == ("if", "[[ $A != x ]] &&")
    assert opens("if [[ -f x ]]; then return 0; fi") is None  # a one-line if opens no block
    assert opens("echo if") is None


LAUNCHER = """\
if [[ $MODEL_PREFIX == "dsr1" && $PRECISION == "fp8" ]]; then
    if [[ -d /cache ]]; then echo cached; fi
    export MODEL_PATH="/models/dsr1"
    if [[ $FRAMEWORK != "dynamo-vllm" ]] &&
       [[ $FRAMEWORK != "dynamo-sglang" ]]; then
        exit 1
    fi
    git clone --branch v1 https://github.com/NVIDIA/srt-slurm.git srt
else
    git clone --branch v2 https://github.com/NVIDIA/srt-slurm.git srt
fi
"""


def test_both_readers_see_the_same_branches() -> None:
    """A one-line `if` and a condition on two lines inside a branch: the routing table
    still reads the branch's export, the clone table pairs each clone with its branch."""
    launcher = parse_launcher(LAUNCHER, Path("runners/launch_x.sh"))
    assert [(r.model_prefix, r.model_path) for r in launcher.rows] == [("dsr1", "/models/dsr1")]
    table = launcher.srt_clones
    assert table is not None
    dsr1 = table.resolve({"MODEL_PREFIX": "dsr1", "PRECISION": "fp8"})
    other = table.resolve({"MODEL_PREFIX": "gptoss"})
    assert isinstance(dsr1, SrtClone) and dsr1.ref == "v1"
    assert isinstance(other, SrtClone) and other.ref == "v2"
