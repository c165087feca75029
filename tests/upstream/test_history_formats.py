"""The row-format mapping of history_range.py on InferenceX's agentic format before AgentX
v1.0 (upstream #1970, 2026-07-02), without the bundle: a tree of two entries abridged from
`.github/configs/nvidia-master.yaml` at upstream eb3dfa6b5 (2026-05-30; the conc-lists cut
short), swept by inferbench, mapped to that commit's format, must give the rows that commit's
own generator wrote for them (EXPECTED: its output, the same concurrencies kept).
test_history.py compares whole commits of that era against the generator itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import history_range as history
from .generator import inferencex_view

MASTER = """\
dsr1-fp4-b200-dynamo-trt:
  image: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1
  model: deepseek-r1-fp4
  model-prefix: dsr1
  runner: b200-multinode
  precision: fp4
  framework: dynamo-trt
  multinode: true
  disagg: true
  scenarios:
    agentic-coding:
    - duration: 300
      search-space:
      - spec-decoding: "none"
        conc-list: [ 1, 2, 4, 8, 16, 32 ]
        prefill:
          num-worker: 1
          tp: 4
          ep: 4
          dp-attn: true
          additional-settings:
          - "CONFIG_FILE=recipes/trtllm/b200-fp4/agentic/ctx1_gen1_tep8_128k_agentic.yaml"
        decode:
          num-worker: 1
          tp: 8
          ep: 8
          dp-attn: false

gptoss-fp4-b200-vllm-agentic:
  image: vllm/vllm-openai:v0.19.1
  model: openai/gpt-oss-120b
  model-prefix: gptoss
  runner: b200
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - duration: 1800
      search-space:
      - { tp: 4, offloading: none, conc-list: [1, 2] }
      - { tp: 8, offloading: cpu,  conc-list: [64] }
"""
RUNNERS = "b200:\n- 'b200-dgxc_00'\nb200-multinode:\n- 'b200-dgxc-slurm_00'\n"
# the generator's Fields at eb3dfa6b5 (what a row of that commit can hold)
FIELDS = frozenset(
    [
        "additional-settings",
        "agentic-coding",
        "batch-size",
        "conc",
        "conc-end",
        "conc-list",
        "conc-start",
        "decode",
        "disagg",
        "dp-attn",
        "duration",
        "ep",
        "eval-conc",
        "eval-only",
        "exp-name",
        "fixed-seq-len",
        "framework",
        "image",
        "isl",
        "max-model-len",
        "max-num-tokens",
        "model",
        "model-prefix",
        "multinode",
        "num-worker",
        "offloading",
        "osl",
        "precision",
        "prefill",
        "run-eval",
        "runner",
        "scenario-type",
        "scenarios",
        "search-space",
        "spec-decoding",
        "tp",
    ]
)
_MN = {
    "image": "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1",
    "model": "deepseek-r1-fp4",
    "model-prefix": "dsr1",
    "precision": "fp4",
    "framework": "dynamo-trt",
    "runner": "b200-multinode",
    "spec-decoding": "none",
    "prefill": {
        "num-worker": 1,
        "tp": 4,
        "ep": 4,
        "dp-attn": True,
        "additional-settings": [
            "CONFIG_FILE=recipes/trtllm/b200-fp4/agentic/ctx1_gen1_tep8_128k_agentic.yaml"
        ],
    },
    "decode": {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": False},
    "duration": 300,
    "disagg": True,
    "scenario-type": "agentic-coding",
}
_SN = {
    "image": "vllm/vllm-openai:v0.19.1",
    "model": "openai/gpt-oss-120b",
    "model-prefix": "gptoss",
    "precision": "fp4",
    "framework": "vllm",
    "runner": "b200",
    "ep": 1,
    "dp-attn": False,
    "duration": 1800,
    "scenario-type": "agentic-coding",
}
EXPECTED: list[dict[str, Any]] = [
    *({**_MN, "conc": c, "exp-name": f"dsr1_p1x4_d1x8_conc{c}"} for c in (1, 2, 4, 8, 16, 32)),
    *(
        {**_SN, "tp": tp, "conc": c, "offloading": off,
         "exp-name": f"gptoss_tp{tp}_conc{c}_offload{off}"}
        for tp, c, off in ((4, 1, "none"), (4, 2, "none"), (8, 64, "cpu"))
    ),
]  # fmt: skip
# every format change InferenceX made after 2026-05-30: all but #1100 and #1020 (April)
APRIL = ("f34a83b2535fbf7a413fb9fa92fdf7c95f0e2b93", "68bf34d2c5de220865c9df666e528bfa03341b7d")
AFTER = [c for c in history.FORMAT_CHANGES if c.upstream not in APRIL]


def _tree(root: Path, master: str = MASTER) -> Path:
    configs = root / ".github" / "configs"
    configs.mkdir(parents=True)
    (configs / "nvidia-master.yaml").write_text(master)
    (configs / "runners.yaml").write_text(RUNNERS)
    return root


def _swept(tree: Path, *flags: str) -> list[dict[str, Any]]:
    rc, out, err = history._cli("sweep", "--root", str(tree), "--format", "json", *flags)
    assert rc == 0, err
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def test_the_changes_after_may_are_picked() -> None:
    assert len(AFTER) == len(history.FORMAT_CHANGES) - len(APRIL)
    assert sum("AgentX v1.0" in c.what for c in AFTER) == 2


def test_older_agentic_rows_map_to_what_that_generator_wrote(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    rows = history.as_older(_swept(tree, "--no-evals"), AFTER, "no-evals", tree)
    assert [inferencex_view(row, FIELDS) for row in rows] == EXPECTED


def test_without_the_1970_mapping_the_rows_differ(tmp_path: Path) -> None:
    """The mapping is needed: inferbench's own rows batch the multinode concurrencies."""
    tree = _tree(tmp_path)
    newer = [c for c in AFTER if "AgentX" not in c.what]
    rows = history.as_older(_swept(tree, "--no-evals"), newer, "no-evals", tree)
    assert [inferencex_view(row, FIELDS) for row in rows] != EXPECTED


def test_an_entry_without_offloading_was_offload_none(tmp_path: Path) -> None:
    """That generator read a missing `offloading` as none: `_kvnone` rows map to it."""
    tree = _tree(tmp_path, MASTER.replace("offloading: none, ", ""))
    rows = history.as_older(_swept(tree, "--no-evals"), AFTER, "no-evals", tree)
    assert [inferencex_view(row, FIELDS) for row in rows] == EXPECTED


def _commits(*upstreams: str) -> list[history.Commit]:
    return [history.Commit(f"{i:040x}", u, "", False, "", i) for i, u in enumerate(upstreams)]


def test_an_eval_policy_of_a_window_holds_only_inside_it() -> None:
    """#2451 disabled agentic evals until #2464: a commit before #2451 is judged by the
    policy after it (none here), one inside by the window's, one after by none."""
    window = next(p for p in history.EVAL_POLICIES if p.since)
    commits = _commits("before", window.since, "inside", window.upstream, "after")
    assert history.older_evals(commits[0], commits) is None
    assert history.older_evals(commits[1], commits) is window
    assert history.older_evals(commits[2], commits) is window
    assert history.older_evals(commits[4], commits) is None


def test_the_window_drops_only_agentic_eval_rows() -> None:
    window = next(p for p in history.EVAL_POLICIES if p.since)
    rows = [{**_SN, "eval-only": True}, {"exp-name": "dsr1_8k1k", "eval-only": True}]
    assert window.evals_only and window.older(rows) == rows[1:]
