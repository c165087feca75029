# ruff: noqa: E501  (the launcher text keeps the real scripts' long lines)
"""Which srt-slurm a launcher clones for a job: the clone/checkout paths of its if/elif
chains, evaluated on the job's variables (`launcher_srt_ref`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.config.launcher import parse_launcher
from inferbench.config.launcher_srt_ref import (
    CloneUnknown,
    SrtClone,
    evaluate,
    job_variables,
    uses_dcgm_power,
)

LAUNCHER = """\
#!/usr/bin/bash
POWER_URL="https://github.com/someone/srt-slurm.git"
POWER_PIN="6fc1bed01a0b82dae0088a105c03ce0cfb353443"
git clone https://github.com/ai-dynamo/dynamo.git dynamo
if uses_shared_fs; then
    SRT_REPO_DIR="/shared/srt-slurm"
fi
if [[ "$IS_AGENTIC" == "1" && $MODEL_PREFIX == "kimik3" ]]; then
    git clone --branch v1.0.53 --single-branch https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR" || exit 1
elif [[ $FRAMEWORK == "dynamo-sglang" && $MODEL_PREFIX == "dsv4" ]]; then
    if [[ "$USES_DCGM_POWER" == "1" ]]; then
        git clone "$POWER_URL" "$SRT_REPO_DIR"
        cd "$SRT_REPO_DIR"
        git checkout "$POWER_PIN" || exit 1
    else
        git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
        cd "$SRT_REPO_DIR"
        if [[ $PRECISION == "fp8" ]]; then
            git checkout v1.0.25
        else
            git checkout sa-submission-q2-2026
        fi
    fi
elif [[ $FRAMEWORK == "dynamo-vllm" && ( $PRECISION == "fp4" || $PRECISION == "fp8" ) && "$CONFIG_FILE" == recipes/vllm/*/mtp/*.yaml ]]; then
    git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
    git checkout c1b6b5c97f323baefad577d70c4e8392b6f537d9
elif [[ $FRAMEWORK == "dynamo-vllm" && "${SPEC_DECODING:-}" == "mtp" ]]; then
    git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
    git checkout v1.0.38
elif [[ $FRAMEWORK == "dynamo-trt" && $ROUTER == "x" ]]; then
    git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
    git checkout v1.0.29
elif [[ $FRAMEWORK == "dynamo-trt" ]]; then
    git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
else
    git clone --branch cam/sa --single-branch https://github.com/cquil11/srt-slurm-nv.git "$SRT_REPO_DIR"
fi
"""


def _job(**given: str) -> dict[str, str]:
    base = {
        "framework": "dynamo-sglang",
        "model_prefix": "dsr1",
        "precision": "fp4",
        "model": "m",
        "scenario": "fixed-seq-len",
        "spec_decoding": "none",
        "config_file": "recipes/x.yaml",
        "recipe_text": None,
    }
    return job_variables(**{**base, **given})  # type: ignore[arg-type]


def _resolve(**given: str) -> str:
    table = parse_launcher(LAUNCHER, Path("runners/launch_x.sh")).srt_clones
    assert table is not None
    found = table.resolve(_job(**given))
    return found.label if isinstance(found, SrtClone) else f"? {found.reason}"


def test_each_job_gets_the_ref_of_its_branch() -> None:
    assert _resolve(scenario="agentic-coding", model_prefix="kimik3") == "NVIDIA/srt-slurm@v1.0.53"
    assert _resolve(model_prefix="dsv4", precision="fp8") == "NVIDIA/srt-slurm@v1.0.25"
    assert _resolve(model_prefix="dsv4") == "NVIDIA/srt-slurm@sa-submission-q2-2026"
    assert _resolve() == "cquil11/srt-slurm-nv@cam/sa"  # the else branch: a fork


def test_the_recipes_telemetry_block_selects_the_power_fork() -> None:
    recipe = "name: x\ntelemetry:\n  enabled: true\n  provider: dcgm-power\n"
    assert _resolve(model_prefix="dsv4", recipe_text=recipe) == (
        "someone/srt-slurm@6fc1bed01a0b82dae0088a105c03ce0cfb353443"
    )
    off = recipe.replace("enabled: true", "enabled: false")
    assert _resolve(model_prefix="dsv4", recipe_text=off).endswith("@sa-submission-q2-2026")


def test_config_file_globs_and_defaulted_variables() -> None:
    mtp = "recipes/vllm/minimax-m3/mtp/a.yaml"
    assert _resolve(framework="dynamo-vllm", config_file=mtp).endswith(
        "@c1b6b5c97f32" + "3baefad577d70c4e8392b6f537d9"
    )
    assert _resolve(framework="dynamo-vllm", spec_decoding="mtp") == "NVIDIA/srt-slurm@v1.0.38"
    assert _resolve(framework="dynamo-vllm") == "cquil11/srt-slurm-nv@cam/sa"


def test_an_unknown_test_leaves_every_outcome_open() -> None:
    # `$ROUTER` is not a job variable: the v1.0.29 branch and the default-branch one remain
    found = _resolve(framework="dynamo-trt")
    assert "NVIDIA/srt-slurm@HEAD" in found and "NVIDIA/srt-slurm@v1.0.29" in found


def test_a_launcher_cloning_no_srt_slurm_names_no_ref() -> None:
    text = "# reads srt-slurm recipes\ngit clone https://github.com/ai-dynamo/dynamo.git\n"
    table = parse_launcher(text, Path("l.sh")).srt_clones
    assert table is not None and table.paths == ()
    found = table.resolve(_job())
    assert isinstance(found, CloneUnknown) and "clones no srt-slurm" in found.reason


@pytest.mark.parametrize(
    ("condition", "value"),
    [
        ('[[ $A == "x" && $B == "y" ]]', True),
        ('[[ $A == "x" && $C == "y" ]]', None),
        ('[[ $A == "z" && $C == "y" ]]', False),
        ('[[ $A == "x" || $C == "y" ]]', True),
        ('[[ $A == "z" || $C == "y" ]]', None),
        ('[[ $A == "z" || $B == "q" ]]', False),
        ('[[ $A != "x" ]]', False),
        ('[[ ! $A == "x" ]]', False),
        ('[[ "$A" == x* ]]', True),
        ('[[ "$A" == "x*" ]]', False),  # quoted: literal
        ('[[ -z "$A" ]]', False),
        ('[[ -n "${C:-}" ]]', None),  # not a job variable: unknown, default or not
        ('[[ "${E:-d}" == "d" ]]', True),  # the job sets it empty: the default
        ("[ -d /x ]", None),
        ("uses_shared_fs", None),
        ('[[ $A == "x" ]] && [[ $B == "q" ]]', False),
        ('[[ ( $A == "q" || $B == "y" ) && $A == "x" ]]', True),
        ("[[ $A =~ ^x ]]", None),
    ],
)
def test_conditions_are_three_valued(condition: str, value: bool | None) -> None:
    assert evaluate(condition, {"A": "x", "B": "y", "E": ""}) is value


def test_power_lane_reads_the_block_as_the_launchers_awk_does() -> None:
    on = "telemetry:\n  provider: dcgm-power\n  enabled: true\nother: 1\n"
    assert uses_dcgm_power(on)
    assert not uses_dcgm_power(on.replace("telemetry:", "telemetryx:\nfoo:"))
    assert not uses_dcgm_power("other:\n  provider: dcgm-power\n  enabled: true\n")
    assert not uses_dcgm_power("telemetry:\n  provider: dcgm-power\n")


def test_too_many_paths_are_not_read() -> None:
    """Sequential chains multiply the paths: past MAX_PATHS none is taken."""
    block = 'if [[ $A == "{i}" ]]; then\n    git checkout v{i}\nfi\n'
    text = "git clone https://github.com/NVIDIA/srt-slurm.git srt\n" + "".join(
        block.format(i=i) for i in range(14)
    )
    table = parse_launcher(text, Path("l.sh")).srt_clones
    assert table is not None and table.too_many
    found = table.resolve(_job())
    assert isinstance(found, CloneUnknown) and "paths" in found.reason
