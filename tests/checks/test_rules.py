"""Each rule fires on a crafted defect in a copy of the clean examples, and the clean tree
is silent under --strict."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from inferbench.checks.engine import CheckOptions, check_project, check_tree
from inferbench.checks.finding import Finding, Severity
from inferbench.checks.registry import Problem, Rule, all_rules
from inferbench.checks.render import render_github, render_text
from inferbench.checks.subjects import MasterSubject
from inferbench.cli.main import main
from inferbench.config.project import load_project

from .test_broken_examples import EXPECTED, NEEDS_BASE
from .treeutil import BROKEN, CHANGELOG, EXAMPLES, MASTER, RECIPE, copy_examples, edit

CLUSTER = "clusters/b200-dgxc.yaml"
RUNNERS = "configs/runners.yaml"
# a multinode agentic entry offloading KV to DRAM, on a runner label without hardware facts
AGENTIC_MULTINODE = """\
kimik3-fp4-gb300-dynamo-vllm:
  image: vllm/vllm-openai:v0.10.2
  model: moonshotai/Kimi-K3
  model-prefix: kimik3
  runner: cluster:gb300-nv
  precision: fp4
  framework: dynamo-vllm
  multinode: true
  scenarios:
    agentic-coding:
      - dram-utilization: 0.8
        search-space:
          - conc-list: [8]
            kv-offloading: dram
            kv-offload-backend: {name: vllm-native}
            prefill: {num-worker: 1, tp: 4, ep: 1, dp-attn: false}
            decode: {num-worker: 1, tp: 4, ep: 1, dp-attn: false}

llama3.1-8b-bf16-h200-vllm:
"""
# rule -> edits (file, old, new) that break exactly that rule
CASES: dict[str, list[tuple[str, str, str]]] = {
    "IB001": [(MASTER, "recipes/vllm/minimax-m3", "recipes/sglang/deepseek")],
    "IB002": [(MASTER, "2p1d-dep2-dep8-8k1k.yaml", "2p1d-dep2-dep8-9k1k.yaml")],
    "IB100": [(MASTER, "model-prefix: llama3.1-70b\n", "model-prefix: llama3.1-70b\n  tpp: 4\n")],
    "IB102": [(MASTER, "- {tp: 8, conc-list: [16, 64, 128]}", "- {tp: 16, conc-list: [16]}")],
    "IB150": [(MASTER, "- {tp: 4, conc-list: [4, 16, 64]}", "- {tp: 0, conc-list: [4, 16, 64]}")],
    "IB151": [(MASTER, '- "CONFIG_FILE=recipes/vllm',
               '- "NO_VALUE"\n                - "CONFIG_FILE=recipes/vllm')],
    "IB152": [(MASTER, "  kv-p2p-transfer: nixl\n", "")],
    "IB153": [(MASTER, "model: openai/gpt-oss-120b", "model: gpt oss 120b")],
    "IB154": [(RUNNERS, "labels:\n", "labels:\n  cluster:gb300-nv: [gb300-nv_0]\n"),
              (MASTER, "llama3.1-8b-bf16-h200-vllm:\n", AGENTIC_MULTINODE)],
    "IB155": [(MASTER, "runner: cluster:h200-nv", "runner: h200")],
    "IB156": [(MASTER, "{tp: 1, kv-offloading: none, conc-list: [4, 8]}",
               "{tp: 1, offloading: cpu, conc-list: [4, 8]}"),
              (MASTER, "- dram-utilization: 0.80\n",
               "- dram-utilization: 0.80\n        duration: 300\n")],
    "IB205": [(RECIPE, "decode_nodes: 1", "decode_nodes: 2")],
    "IB206": [(RECIPE, "data-parallel-size: 8", "data-parallel-size: 4")],
    "IB210": [(RECIPE, "  gpus_per_node: 8\n", "  gpus_per_node: 4\n  gpus_per_node: 8\n")],
    "IB211": [(RECIPE, "prefill_workers: 2", "prefill_workers: -2")],
    "IB212": [(MASTER, "2p1d-dep2-dep8-8k1k.yaml", "2p1d-dep2-dep8-9k1k.yaml")],
    "IB209": [(RECIPE, "max-cudagraph-capture-size: 4096", "max-cudagraph-capture-size: 64")],
    "IB302": [(RECIPE, "precision: fp4", "precision: fp8")],
    "IB303": [(MASTER, "num-worker: 2", "num-worker: 3")],
    "IB304": [(RECIPE, "gpus_per_prefill: 2", "gpus_per_prefill: 4"),
              (RECIPE, "data-parallel-size: 2", "data-parallel-size: 4")],
    "IB305": [(MASTER, "tp: 8\n              ep: 8", "tp: 8\n              ep: 1")],
    "IB308": [(RECIPE, "osl: 1024", "osl: 2048")],
    "IB309": [(RECIPE, "max-num-seqs: 1024", "max-num-seqss: 1024")],
    # no golden AL file for the model (examples/ has no golden_al_distribution/): a warning
    "IB310": [(MASTER, '"CONFIG_FILE=recipes/vllm/minimax-m3',
               '"SYNTHETIC_ACCEPTANCE_LENGTH=2.78"\n                - "SYNTHETIC_ACCEPTANCE=true"'
               '\n                - "CONFIG_FILE=recipes/vllm/minimax-m3')],
    "IB402": [(CLUSTER, "runners: [b200, b200-multinode]", "runners: [b200]")],
    "IB403": [(RECIPE, "gpus_per_node: 8", "gpus_per_node: 16")],
    "IB404": [(RECIPE, "gpu_type: b200", "gpu_type: h200")],
    "IB405": [(CLUSTER, "model: nvidia/MiniMax-M3-NVFP4", "model: nvidia/MiniMax-M2-NVFP4")],
    "IB411": [(CLUSTER, "runners: [b200, b200-multinode]", "runners: [b200, b200-multinode, x9]")],
    "IB412": [(CLUSTER, "gpus-per-node: 8", "gpus-per-node: 4")],
    "IB501": [(CHANGELOG, '["dsr1-fp8-h200-*"]', '["dsr1-fp8-h100-*"]')],
    "IB505": [(CHANGELOG, "pr-link: https://github.com/example-org/benchmarks/pull/102",
               "pr-link: see PR 102")],
    "IB601": [(MASTER, "gptoss-fp4-b200-trt:", "gptoss-b200-trt:"),
              (CHANGELOG, "[gptoss-fp4-b200-trt]", "[gptoss-b200-trt]")],
    "IB702": [(MASTER, "image: vllm/vllm-openai:v0.10.2", "image: vllm/vllm-openai:v0.10.2 x")],
}  # fmt: skip


def test_clean_examples_are_silent_even_strict() -> None:
    report = check_tree(EXAMPLES)
    assert report.findings == () and report.exit_code(strict=True) == 0


def test_every_rule_has_a_defect_that_fires_it() -> None:
    fired = (
        set(CASES) | {r for r, _, _ in EXPECTED.values()} | {r for r, _, _ in NEEDS_BASE.values()}
    )
    assert {r.id for r in all_rules()} <= fired


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_fires_on_its_defect(tree: Path, rule: str) -> None:
    for rel, old, new in CASES[rule]:
        edit(tree, rel, old, new)
    report = check_tree(tree)
    rules = {f.rule for f in report.findings}
    assert rule in rules, report.findings
    hit = next(f for f in report.findings if f.rule == rule)
    assert hit.message and (hit.file is not None or hit.severity is Severity.INFO)
    _assert_every_finding_has_a_fix(report.findings)


def _assert_every_finding_has_a_fix(findings: Sequence[Finding]) -> None:
    """A reviewer reads what to do under each finding: a non-empty `fix:` line in the text
    report, the hint in JSON and in the GitHub annotation."""
    for finding in findings:
        assert finding.hint and finding.hint.strip(), finding
        text = render_text([finding])
        assert f"\n    fix: {finding.hint}\n" in text, text
        assert "%0Afix: " in render_github([finding])


def test_every_rule_fixes_what_it_finds(tree: Path) -> None:
    """The `fix:` test: each registered rule fired on its own defect (CASES here, the broken
    example trees, the trees that need a base) prints a fix; a rule cannot be registered
    without one."""
    fired: set[str] = set()
    for rule, edits in CASES.items():
        case = copy_examples(tree.parent / f"fix-{rule}")
        for rel, old, new in edits:
            edit(case, rel, old, new)
        findings = check_tree(case).findings
        fired |= {f.rule for f in findings}
        _assert_every_finding_has_a_fix(findings)
    for name in EXPECTED:
        findings = check_tree(BROKEN / name).findings
        fired |= {f.rule for f in findings}
        _assert_every_finding_has_a_fix(findings)
    # the changelog rules that need a base are fired on their trees in test_broken_examples
    assert {r.id for r in all_rules()} - {r for r, _, _ in NEEDS_BASE.values()} <= fired
    assert all(r.hint.strip() for r in all_rules())
    with pytest.raises(ValueError, match="no fix hint"):
        Rule("IB998", "no-fix", Severity.ERROR, "t", MasterSubject, lambda s: iter(()), " ")


def test_srt_slurm_checkout_resolves_upstream_references(tree: Path, tmp_path: Path) -> None:
    edit(tree, MASTER, "recipes/vllm/minimax-m3", "recipes/sglang/deepseek")
    src = tree / RECIPE
    text = src.read_text()
    src.unlink()  # left behind, no entry would name it (IB212 recipe-retired)
    upstream = tmp_path / "srt-slurm"
    (upstream / "recipes").mkdir(parents=True)
    report = check_tree(tree, CheckOptions(srt_slurm=upstream))
    # in neither tree: the checkout may be another ref than the launcher clones, so the
    # reference is named as not checkable rather than called dangling
    assert [f.rule for f in report.findings] == ["IB002", "IB002", "IB001"]
    assert "nor in the srt-slurm checkout given" in report.findings[2].message
    dest = upstream / "recipes/sglang/deepseek/b200-fp4/8k1k" / src.name
    dest.parent.mkdir(parents=True)
    dest.write_text(text)
    findings = check_tree(tree, CheckOptions(srt_slurm=upstream)).findings
    # resolved and clean; a checkout's ref is not known, so IB002 says what judged it
    assert [(f.rule, f.severity) for f in findings] == [("IB002", Severity.INFO)]
    assert "judged with the checkout srt-slurm given, whose ref is unknown" in findings[0].message


def test_a_missing_file_in_a_folder_the_tree_owns_is_dangling(tree: Path, tmp_path: Path) -> None:
    edit(tree, MASTER, "2p1d-dep2-dep8-8k1k.yaml", "2p1d-dep2-dep8-9k1k.yaml")
    (tmp_path / "srt-slurm" / "recipes").mkdir(parents=True)
    report = check_tree(tree, CheckOptions(srt_slurm=tmp_path / "srt-slurm"))
    assert [f.rule for f in report.findings if f.severity is Severity.ERROR] == ["IB201"]


def test_repo_relative_config_file_names_the_trees_file(tree: Path) -> None:
    """InferenceX launchers copy benchmarks/multi_node/srt-slurm-recipes/... into the clone at
    the same path, so a CONFIG_FILE written from the repo root is the tree's file."""
    edit(
        tree, MASTER, "CONFIG_FILE=recipes/", "CONFIG_FILE=benchmarks/multi_node/srt-slurm-recipes/"
    )
    assert check_tree(tree).findings == ()


def test_a_bad_entry_leaves_the_others_checked(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One invalid entry is a finding on it; the rest of the tree is still checked and swept."""
    edit(tree, MASTER, "  model-prefix: llama3.1-70b\n", "  model-prefix: llama3.1-70b\n  tpp: 4\n")
    edit(tree, MASTER, "runner: h200\n  precision: bf16", "runner: nope\n  precision: bf16")
    report = check_tree(tree)
    bad = [f for f in report.findings if f.rule == "IB100"]
    assert len(bad) == 1 and "tpp" in bad[0].message and bad[0].line is not None
    assert any(f.rule == "IB101" and "nope" in f.message for f in report.findings)
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(["sweep", str(tree), "--format", "json"])
        raise SystemExit(0)
    out = capsys.readouterr()
    assert done.value.code == 2  # bad input, but the other entries' jobs are all there
    keys = {job["config-key"] for job in json.loads(out.out)}
    assert "llama3.1-70b-fp8-h200-sglang" not in keys and "gptoss-fp4-b200-trt" in keys
    assert "error: " in out.err and "tpp" in out.err and "(entry not swept)" in out.err


def test_a_crashing_rule_is_isolated(tree: Path) -> None:
    def explode(subject: MasterSubject) -> Iterator[Problem]:
        if subject.config.key.startswith("gptoss"):
            raise ZeroDivisionError("odd input")
        return iter(())

    crash = Rule("IB999", "explodes", Severity.WARNING, "t", MasterSubject, explode, "fix it")
    runner = next(r for r in all_rules() if r.id == "IB101")
    edit(tree, MASTER, "runner: h200\n  precision: bf16", "runner: nope\n  precision: bf16")
    report = check_project(load_project(tree), [crash, runner], CheckOptions())
    assert sorted(f.rule for f in report.findings) == ["IB000", "IB101"]
    internal = next(f for f in report.findings if f.rule == "IB000")
    assert "IB999 explodes crashed: ZeroDivisionError" in internal.message
    assert internal.file == tree / MASTER and internal.line is not None


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        main(["check", *args])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().out


def test_cli_exit_codes_and_formats(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli([str(tree), "--strict"], capsys) == (0, "No findings.\n")
    assert run_cli(["--root", str(tree)], capsys)[0] == 0
    edit(tree, RECIPE, "max-num-seqs: 1024", "max-num-seqs: 128")  # a warning
    assert run_cli([str(tree)], capsys)[0] == 0
    assert run_cli([str(tree), "--strict"], capsys)[0] == 1
    edit(tree, RECIPE, "precision: fp4", "precision: fp8")  # an error
    code, out = run_cli([str(tree), "--format", "json"], capsys)
    data = json.loads(out)
    assert code == 1 and {d["rule"] for d in data} == {"IB208", "IB302"}
    assert all(set(d) >= {"rule", "severity", "file", "line", "column", "key", "message", "hint"}
               for d in data)  # fmt: skip
    code, out = run_cli([str(tree), "--format", "github"], capsys)
    assert code == 1 and out.startswith("::")
    assert any(
        line.startswith("::error file=") and "title=IB302" in line for line in out.splitlines()
    )
    code, out = run_cli([str(tree), "--statistics"], capsys)  # same exit code, per-rule counts
    assert code == 1 and out.splitlines()[:2] == [
        "1  IB302  error    precision-mismatch",
        "1  IB208  warning  decode-capacity-exceeded",
    ]
    code, out = run_cli([str(tree), "--statistics", "--format", "json"], capsys)
    assert code == 1 and [d["count"] for d in json.loads(out)] == [1, 1]
    assert run_cli([str(tree), "--statistics", "--format", "github"], capsys)[0] == 2
    code, out = run_cli([str(tree), "--select", "IB208", "--format", "json"], capsys)
    assert code == 0 and [d["rule"] for d in json.loads(out)] == ["IB208"]
    code, out = run_cli([str(tree), "--ignore", "precision-mismatch,IB2"], capsys)
    assert (code, out) == (0, "No findings.\n")
    assert run_cli([str(tree / "nope")], capsys)[0] == 2
    assert run_cli([str(tree), "--select", "IB9999"], capsys)[0] == 2
    assert run_cli([str(tree), "--base", "HEAD"], capsys)[0] == 2  # not a git repository


def test_catalog_image_aliases_and_extra_model_aliases_are_no_findings(tmp_path: Path) -> None:
    """A catalog as `clusters import` writes it from a launcher: a container name the cluster's
    srtslurm.yaml maps to the job's image (`image-aliases`) is the master image (no IB301), and
    a model entry's further `aliases` (the launchers' `"${MODEL_PREFIX}"` line) are model_paths
    aliases (no IB401); unknown names still are findings."""
    tree = copy_examples(tmp_path / "tree")
    edit(tree, CLUSTER, "containers:\n", "image-aliases: [dynamo-vllm]\ncontainers:\n")
    edit(tree, CLUSTER, "    alias: minimax-m3-nvfp4\n",
         "    alias: minimax-m3-nvfp4\n    aliases: [minimaxm3]\n")  # fmt: skip
    edit(tree, RECIPE, "path: minimax-m3-nvfp4", "path: minimaxm3")
    edit(tree, RECIPE, "container: vllm/vllm-openai:vllm-minimax-m3-perf-x86_64-13.0.1-8b00f41",
         "container: dynamo-vllm")  # fmt: skip
    rules = {f.rule for f in check_tree(tree).findings}
    assert not rules & {"IB301", "IB401", "IB701"}, rules
    edit(tree, RECIPE, "container: dynamo-vllm", "container: dynamo-sglang")
    edit(tree, RECIPE, "path: minimaxm3", "path: minimax")
    rules = {f.rule for f in check_tree(tree).findings}
    assert {"IB301", "IB401"} <= rules, rules
