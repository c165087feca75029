"""The changelog cases of the test history (see history.py), each a realistic edit."""

from __future__ import annotations

from .history import CHANGELOG, NVIDIA, Case, append, entry, insert_before_last, replace

SINGLE = "dsr1-fp8-h200-sglang"  # single-node fixed-seq-len (h200)
MULTI = "dsr1-fp4-gb200-dynamo-trt"  # multinode fixed-seq-len (gb200, disaggregated)
AGENTIC = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"  # single-node agentic
AGENTIC_MULTI = "minimaxm3-fp4-gb300-dynamo-vllm-agentic-mtp-disagg"  # multinode agentic
APPEND_KEY = "dsv4-fp4-b300-vllm-agentic-mtp"
OLD_LINK = "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2703\n"

CASES = (
    Case("one-entry", ((append(entry(SINGLE)),),)),
    Case(
        "several-entries-one-commit",
        (
            (
                append(
                    entry("dsr1-fp4-mi355x-*"),
                    entry(MULTI, evals_only=True),
                    entry(AGENTIC, scenario_type=["agentic-coding"]),
                ),
            ),
        ),
    ),
    Case("evals-only", ((append(entry(SINGLE, AGENTIC, evals_only=True)),),)),
    Case(
        "all-evals-wins-over-a-plain-entry",
        ((append(entry(MULTI, SINGLE), entry(MULTI, all_evals=True)),),),
    ),
    Case(
        "scenario-type-per-entry",
        (
            (
                append(
                    entry(AGENTIC_MULTI, scenario_type=["agentic-coding"]),
                    entry(AGENTIC_MULTI, MULTI, scenario_type=["fixed-seq-len"]),
                ),
            ),
        ),
    ),
    Case("agentic-eval-rows", ((append(entry(AGENTIC, AGENTIC_MULTI)),),)),
    Case(
        "append-only",
        (
            (
                replace(
                    NVIDIA,
                    "{ tp: 8, kv-offloading: none, spec-decoding: mtp, conc-list: [1, 4] }",
                    "{ tp: 8, kv-offloading: none, spec-decoding: mtp, conc-list: [1, 2, 4] }",
                ),
                append(entry(APPEND_KEY, scenario_type=["agentic-coding"], append_only=True)),
            ),
        ),
    ),
    Case(
        "old-entry-pr-link-fixed",
        ((replace(CHANGELOG, OLD_LINK, OLD_LINK.replace("2703", "2704")),),),
        rejected=True,
        note="the diff deletes a line",
    ),
    Case(
        "old-entry-gains-a-key",
        (
            (
                replace(
                    CHANGELOG,
                    "    - dsv4-fp4-b200-sglang-agentic-hicache-mtp\n",
                    "    - dsv4-fp4-b200-sglang-agentic-hicache-mtp\n    - dsr1-fp8-h200-sglang\n",
                ),
            ),
        ),
        rejected=True,
        note="the added line alone is no entry",
    ),
    Case("entry-between-old-ones", ((insert_before_last(entry(SINGLE, MULTI)),),)),
    Case(
        "two-commits",
        ((append(entry(SINGLE)),), (append(entry(AGENTIC, scenario_type=["agentic-coding"])),)),
    ),
    Case(
        "blank-line-dropped-and-entry-added",
        ((replace(CHANGELOG, OLD_LINK + "  \n", OLD_LINK), append(entry(MULTI))),),
    ),
    Case(
        "eval-min-prefill-ep",
        ((append(entry(MULTI, eval_min_prefill_ep=8)),),),
    ),
    Case("global-evals-only", ((append(entry(SINGLE, MULTI)),),), flags=("--evals-only",)),
    Case("global-all-evals", ((append(entry(SINGLE, AGENTIC)),),), flags=("--all-evals",)),
    Case("unknown-key", ((append(entry("no-such-key-h200-vllm")),),), rejected=True),
)

# Cases where `inferbench check --base` is also held against InferenceX's own validator
# (`utils/validate_perf_changelog.py`): accepted ones and every rejected one.
CHECKED = frozenset(
    {
        "one-entry",
        "several-entries-one-commit",
        "append-only",
        "entry-between-old-ones",
        "two-commits",
        "blank-line-dropped-and-entry-added",
        *(case.id for case in CASES if case.rejected),
    }
)
