"""IB310 golden-acceptance-length: synthetic acceptance must be the golden AL of its model,
thinking mode and draft length, in the engine's spelling; and the golden file reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.checks.engine import CheckOptions, check_tree
from inferbench.checks.finding import Finding, Severity
from inferbench.cli.main import main
from inferbench.config.golden_al import load_golden, read_golden_file
from inferbench.core.errors import ConfigError

from .treeutil import MASTER, RECIPE, edit

GQA = """\
# Source GitHub Actions run: https://github.com/example-org/benchmarks/actions/runs/1
minimax-m3:
  thinking_on:
    1: 1.79
    2: 2.39
    3: 2.78
  thinking_off:
    1: 1.83
    2: 2.46
    3: 2.97
"""
PLAIN = "minimax-m3:\n  thinking_on:\n    1: 1.78\n    2: 2.38\n    3: 2.83\n"
CONFIG_FILE = '"CONFIG_FILE=recipes/vllm/minimax-m3/b200-fp4/8k1k/2p1d-dep2-dep8-8k1k.yaml"'
SPEC = """'{"method":"eagle3","model":"x/MiniMax-M3-EAGLE3-GQA","num_speculative_tokens":3}'"""
SCRIPTS = "benchmarks/single_node/agentic"


def _golden(tree: Path) -> None:
    folder = tree / "golden_al_distribution"
    folder.mkdir()
    (folder / "minimaxm3_eagle3_gqa.yaml").write_text(GQA)
    (folder / "minimaxm3_eagle3.yaml").write_text(PLAIN)


def _master_pins(tree: Path, length: str, spec: str = SPEC) -> None:
    edit(
        tree,
        MASTER,
        CONFIG_FILE,
        f'"SYNTHETIC_ACCEPTANCE=true"\n                - "SYNTHETIC_ACCEPTANCE_LENGTH={length}"'
        f"\n                - {CONFIG_FILE}",
    )
    edit(
        tree,
        RECIPE,
        "      max-num-seqs: 1024\n",
        f"      max-num-seqs: 1024\n      speculative-config: {spec}\n",
    )


def _script(tree: Path, name: str, text: str) -> Path:
    path = tree / SCRIPTS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _ib310(tree: Path) -> list[Finding]:
    return list(check_tree(tree, CheckOptions(select=("IB310",))).findings)


def _line(finding: Finding) -> str:
    assert finding.file is not None and finding.line is not None
    return finding.file.read_text().splitlines()[finding.line - 1]


def test_a_master_entry_pinned_to_the_golden_al_passes(tree: Path) -> None:
    _golden(tree)
    _master_pins(tree, "2.78")
    assert _ib310(tree) == []


def test_a_master_entry_off_the_golden_al_is_an_error_with_the_fix(tree: Path) -> None:
    _golden(tree)
    _master_pins(tree, "2.83")  # the non-GQA curve's AL: this entry runs the GQA draft head
    (finding,) = _ib310(tree)
    assert finding.severity is Severity.ERROR and finding.key is not None
    assert finding.key.endswith(".prefill.additional-settings[1]")
    assert "SYNTHETIC_ACCEPTANCE_LENGTH=2.83" in _line(finding)
    assert "expected 2.78" in finding.message and "minimaxm3_eagle3_gqa.yaml:6" in finding.message
    assert "thinking_on with draft length 3" in finding.message
    assert finding.hint == '- "SYNTHETIC_ACCEPTANCE_LENGTH=2.78"'


def test_the_draft_length_is_the_recipes_and_the_thinking_mode_the_entrys(tree: Path) -> None:
    _golden(tree)
    _master_pins(tree, "2.39", SPEC.replace(":3}", ":2}"))
    assert _ib310(tree) == []
    edit(
        tree,
        MASTER,
        '"SYNTHETIC_ACCEPTANCE=true"',
        '"SYNTHETIC_ACCEPTANCE=true"\n                - "THINKING_MODE=thinking_off"',
    )
    (finding,) = _ib310(tree)
    assert "thinking_off with draft length 2: expected 2.46" in finding.message


def test_a_model_without_a_golden_file_is_a_warning(tree: Path) -> None:
    _master_pins(tree, "2.78")  # no golden_al_distribution/ at all
    (finding,) = _ib310(tree)
    assert finding.severity is Severity.WARNING
    assert "no golden AL file for model prefix 'minimaxm3'" in finding.message
    assert finding.hint and "speedbench-al.yml" in finding.hint


def test_a_recipe_knob_its_engine_does_not_read(tree: Path) -> None:
    _golden(tree)
    edit(
        tree,
        RECIPE,
        "  connector: nixl\n",
        '  connector: nixl\n  decode_environment:\n    SGLANG_SIMULATE_ACC_LEN: "2.78"\n',
    )
    edit(
        tree,
        RECIPE,
        "      max-num-seqs: 1024\n",
        f"      max-num-seqs: 1024\n      speculative-config: {SPEC}\n",
    )
    (finding,) = _ib310(tree)
    assert "vLLM does not read SGLANG_SIMULATE_ACC_LEN" in finding.message
    assert finding.key == "backend.decode_environment.SGLANG_SIMULATE_ACC_LEN"
    assert "SGLANG_SIMULATE_ACC_LEN" in _line(finding)
    assert finding.hint and "synthetic_acceptance_length (= 2.78)" in finding.hint


def test_a_recipe_speculative_config_is_judged_per_worker(tree: Path) -> None:
    _golden(tree)
    wrong = SPEC.replace(":3}", ':3,"synthetic_acceptance_length":3.0}')
    edit(
        tree,
        RECIPE,
        "      max-num-seqs: 1024\n",
        f"      max-num-seqs: 1024\n      speculative-config: {wrong}\n",
    )
    (finding,) = _ib310(tree)
    assert finding.key and finding.key.endswith(
        "decode.speculative-config.synthetic_acceptance_length"
    )
    assert "is 3.0 for recipe of minimaxm3-fp4-b200-dynamo-vllm" in finding.message
    assert finding.hint == '"synthetic_acceptance_length": 2.78'


TRT = """\
#!/usr/bin/env bash
NUM_SPEC_TOKENS=3
DRAFT=Inferact/MiniMax-M3-EAGLE3-GQA
cat > config.yml <<EOF
speculative_config:
  decoding_type: Eagle3
  max_draft_len: $NUM_SPEC_TOKENS
EOF
if [ "${EVAL_ONLY}" = "true" ]; then
    unset TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS
else
    export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=VALUE
fi
"""


def test_trtllm_takes_the_golden_al_minus_one(tree: Path) -> None:
    _golden(tree)
    _script(tree, "minimaxm3_fp4_b200_trt_mtp.sh", TRT.replace("VALUE", "1.78"))
    assert _ib310(tree) == []
    path = _script(tree, "minimaxm3_fp4_b200_trt_mtp.sh", TRT.replace("VALUE", "2.78"))
    (finding,) = _ib310(tree)
    assert finding.file == path and finding.line == 12
    assert (
        "is 2.78 (AL 3.78)" in finding.message
        and "expected 1.78 (golden AL 2.78" in finding.message
    )
    assert finding.hint is not None
    assert finding.hint.startswith("export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78")
    assert "minus 1" in finding.hint


BRANCHES = """\
#!/usr/bin/env bash
# the non-GQA curve reads 2.83 (a comment: never read)
if [ "$CONC" -le 8 ]; then
    NUM_SPEC_TOKENS=3
    SYNTHETIC_ACCEPT_LEN=2.78
else
    SYNTHETIC_ACCEPT_LEN=FIRST
    NUM_SPEC_TOKENS=2
fi
SPEC_CONFIG=$(printf \\
    '{"model":"%s","num_speculative_tokens":%d,"synthetic_acceptance_length":%.2f}' \\
    "Inferact/MiniMax-M3-EAGLE3-GQA" "$NUM_SPEC_TOKENS" "$SYNTHETIC_ACCEPT_LEN")
vllm serve "$MODEL" --speculative-config "$SPEC_CONFIG" \\
    --default-chat-template-kwargs '{"thinking_mode":"MODE"}'
"""


def test_a_script_pairs_each_branch_target_with_its_draft_length(tree: Path) -> None:
    _golden(tree)
    _script(
        tree,
        "minimaxm3_fp4_b300_mtp.sh",
        BRANCHES.replace("FIRST", "2.39").replace("MODE", "enabled"),
    )
    assert _ib310(tree) == []
    path = _script(
        tree,
        "minimaxm3_fp4_b300_mtp.sh",
        BRANCHES.replace("FIRST", "2.78").replace("MODE", "enabled"),
    )
    (finding,) = _ib310(tree)
    assert finding.file == path and finding.line == 7
    assert finding.key == "synthetic_acceptance_length (SYNTHETIC_ACCEPT_LEN)"
    assert "draft length 2: expected 2.39" in finding.message
    assert finding.hint == "SYNTHETIC_ACCEPT_LEN=2.39"


def test_a_script_that_turns_thinking_off_is_held_to_the_thinking_off_curve(tree: Path) -> None:
    _golden(tree)
    _script(
        tree,
        "minimaxm3_fp4_b300_mtp.sh",
        BRANCHES.replace("FIRST", "2.46").replace("MODE", "disabled").replace("2.78", "2.97"),
    )
    assert _ib310(tree) == []


ATOM = """\
NUM_SPEC_TOKENS=3
SPEC_ARGS=(--method eagle3 --draft-model Inferact/MiniMax-M3-EAGLE3-GQA
    --num-speculative-tokens "$NUM_SPEC_TOKENS" --spec-decode-acceptance-rate RATE)
"""


def test_atom_rate_is_al_minus_one_over_the_draft_length(tree: Path) -> None:
    _golden(tree)
    _script(tree, "minimaxm3_fp4_mi355x_atom_mtp.sh", ATOM.replace("RATE", "0.593"))  # 1.78/3
    assert _ib310(tree) == []
    _script(tree, "minimaxm3_fp4_mi355x_atom_mtp.sh", ATOM.replace("RATE", "0.61"))
    (finding,) = _ib310(tree)
    assert "(AL 2.83 at draft length 3)" in finding.message and "expected 0.5933" in finding.message
    assert finding.hint and finding.hint.startswith("--spec-decode-acceptance-rate 0.5933")


def test_a_draft_length_beyond_the_curve_is_a_warning(tree: Path) -> None:
    _golden(tree)
    _script(tree, "minimaxm3_fp4_b300_mtp.sh", ATOM.replace("=3", "=5").replace("RATE", "0.5"))
    (finding,) = _ib310(tree)
    assert finding.severity is Severity.WARNING
    assert "has no thinking_on AL for draft length 5" in finding.message


def test_a_value_from_the_environment_is_not_judged(tree: Path) -> None:
    _golden(tree)
    _script(tree, "minimaxm3_fp4_b300_mtp.sh", ATOM.replace("RATE", '"$RATE_FROM_CI"'))
    assert _ib310(tree) == []


# --- the golden file reader ---------------------------------------------------------------


def test_the_reader_types_every_curve(tmp_path: Path) -> None:
    (tmp_path / "minimaxm3_eagle3_gqa.yaml").write_text(GQA)
    (tmp_path / "kimik3_dspark_probabilistic_sample_method_block.yaml").write_text(
        "kimi-k3:\n  thinking_on:\n    2: 2.51\n"
    )
    golden = load_golden(tmp_path.glob("*.yaml"))
    gqa, kimi = sorted(golden.curves, key=lambda c: c.prefix, reverse=True)
    assert (gqa.prefix, gqa.method, gqa.qualifier, gqa.model) == (
        "minimaxm3",
        "eagle3",
        "gqa",
        "minimax-m3",
    )
    assert gqa.al("thinking_off", 3) == 2.97 and gqa.al("thinking_on", 4) is None
    assert gqa.where("thinking_on", 3) == f"{tmp_path.name}/minimaxm3_eagle3_gqa.yaml:6"
    assert (kimi.prefix, kimi.method, kimi.qualifier) == ("kimik3", "dspark", "probabilistic")
    assert golden.select("kimik3", '{"draft_sample_method": "probabilistic"}') == (kimi,)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("- 1.79\n", 1, "maps a model to its curves"),
        ("m:\n  thinking_maybe:\n    1: 1.5\n", 2, "unknown thinking mode 'thinking_maybe'"),
        ("m:\n  thinking_on:\n    one: 1.5\n", 3, "draft length 'one' is not a whole number"),
        ("m:\n  thinking_on:\n    1: fast\n", 3, "AL 'fast' is not a number"),
        ("m:\n  thinking_on:\n    1: 1.5\n    2: 3.4\n", 4, "3.4 is not an acceptance length"),
        ("m:\n  thinking_on: 2.49\n", 2, "thinking_on must map each draft length"),
        ("m: [\n", None, ""),
    ],
)
def test_a_malformed_golden_file_names_file_and_line(
    tmp_path: Path, text: str, line: int | None, words: str
) -> None:
    path = tmp_path / "x_mtp.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        read_golden_file(path)
    assert caught.value.location.file == path
    if line is not None:
        assert caught.value.location.line == line and words in caught.value.message
        assert caught.value.hint


def test_check_exits_2_on_a_malformed_golden_file(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _golden(tree)
    (tree / "golden_al_distribution" / "minimaxm3_eagle3.yaml").write_text(
        "m:\n  thinking_on:\n    1: 9.5\n"
    )
    _master_pins(tree, "2.78")
    with pytest.raises(SystemExit) as exited:
        main(["check", str(tree), "--select", "IB310"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "minimaxm3_eagle3.yaml:3" in err and "9.5 is not an acceptance length" in err
