"""Values InferenceX's generator accepts but that are wrong: `sweep` reads them as the
generator does (its jobs stay field-equal; `tp: 0`, which makes no job, it names and leaves
out), and `check` names them here, each with its fix, in the words of
`inferbench.config.entry_problems`, which `plan` and `run` refuse with.

(A CONFIG_FILE that is absolute or leaves the recipe tree is the same kind of value; it is
IB202 config-file-outside-tree.)
"""

from __future__ import annotations

from collections.abc import Iterator

from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.checks.subjects import MasterSubject
from inferbench.config import entry_problems
from inferbench.config.master import (
    AgenticMultiNodeSearchSpace,
    AgenticSingleNodeSearchSpace,
    MultiNodeSearchSpace,
)
from inferbench.core.hfid import model_form


@rule(
    "IB150",
    "tp-zero",
    Severity.ERROR,
    MasterSubject,
    "every worker has a tensor-parallel width of 1 or more (`tp: 0` starts no engine)",
    hint=entry_problems.TP_ZERO_HINT,
)
def tp_zero(subject: MasterSubject) -> Iterator[Problem]:
    for problem in entry_problems.tp_zero(subject.config):
        yield Problem(problem.message, problem.location, hint=problem.hint)


@rule(
    "IB151",
    "setting-not-key-value",
    Severity.ERROR,
    MasterSubject,
    "every additional setting is a `KEY=VALUE` string (the launcher exports it as written)",
    hint='write each setting as - "NAME=value"',
)
def setting_not_key_value(subject: MasterSubject) -> Iterator[Problem]:
    for problem in entry_problems.settings_not_key_value(subject.config):
        yield Problem(problem.message, problem.location, hint=problem.hint)


@rule(
    "IB152",
    "disagg-without-kv-transfer",
    Severity.ERROR,
    MasterSubject,
    "a disaggregated entry names its KV transfer engine (`kv-p2p-transfer`), at the top or "
    "on every search-space entry (InferenceX's generator requires it since 2026-07-13)",
    hint="add kv-p2p-transfer (e.g. nixl) to the entry",
)
def disagg_without_kv_transfer(subject: MasterSubject) -> Iterator[Problem]:
    config = subject.config
    entry = config.entry
    if not entry.disagg or entry.kv_p2p_transfer:
        return
    for point in entry.search_spaces():
        space = point.space
        if isinstance(space, MultiNodeSearchSpace) and not space.kv_p2p_transfer:
            yield Problem(
                "disagg: true but no kv-p2p-transfer for this entry (InferenceX's generator"
                " refuses it since upstream #2096)",
                config.locate(point.path),
                hint="add kv-p2p-transfer: nixl (the engine that moves KV from prefill to"
                " decode) at the top of the entry",
            )


@rule(
    "IB153",
    "model-not-a-reference",
    Severity.WARNING,
    MasterSubject,
    "the model is a Hugging Face id, `hf:<id>` or a local path (/..., ./..., ~/...)",
    hint="write org/name, hf:org/name, or a local path",
)
def model_not_a_reference(subject: MasterSubject) -> Iterator[Problem]:
    model = subject.config.entry.model
    if model_form(model) == "other":
        yield Problem(
            f"model {model!r} is neither a Hugging Face id, hf:<id>, nor a local path",
            subject.config.locate(("model",)),
            hint="write org/name (e.g. deepseek-ai/DeepSeek-R1-0528), hf:org/name, or an"
            " absolute path to the model folder",
        )


@rule(
    "IB154",
    "dram-offload-unsized",
    Severity.ERROR,
    MasterSubject,
    "a multinode agentic entry that offloads KV to DRAM runs on a runner whose hardware "
    "facts size the offload (`available-cpu-dram-mib`); without them its jobs say 0 GB",
    hint="add the runner's available-cpu-dram-mib under hardware: in runners.yaml",
)
def dram_offload_unsized(subject: MasterSubject) -> Iterator[Problem]:
    config = subject.config
    runners = subject.project.runners
    if runners is None:
        return
    spec = runners.registry.hardware_for(config.entry.runner)
    if spec is not None and spec.available_cpu_dram_mib is not None:
        return
    for point in config.entry.search_spaces():
        space = point.space
        if isinstance(space, AgenticMultiNodeSearchSpace) and space.kv_offloading == "dram":
            yield Problem(
                f"kv-offloading: dram, but runner {config.entry.runner!r} has no"
                " available-cpu-dram-mib: the jobs get a 0 GB offload budget",
                config.locate((*point.path, "kv-offloading")),
                hint=f"add `{config.entry.runner}: {{gpus-per-node: N, available-cpu-dram-mib:"
                " M}` under hardware: in runners.yaml",
            )


@rule(
    "IB155",
    "agentic-runner-not-cluster",
    Severity.ERROR,
    MasterSubject,
    "an agentic-coding entry runs on a `cluster:<name>` runner label (InferenceX's generator "
    "requires it since AgentX v1.0, 2026-07-02)",
    hint="use runner: cluster:<name>",
)
def agentic_runner_not_cluster(subject: MasterSubject) -> Iterator[Problem]:
    config = subject.config
    entry = config.entry
    if entry.scenarios.agentic_coding and not entry.runner.startswith("cluster:"):
        yield Problem(
            f"agentic-coding entry on runner {entry.runner!r}, not a cluster: label"
            " (InferenceX's generator refuses it since upstream #1970)",
            config.locate(("runner",)),
            hint="use runner: cluster:<name>, a label under labels: in runners.yaml",
        )


@rule(
    "IB156",
    "older-agentic-format",
    Severity.WARNING,
    MasterSubject,
    "an agentic-coding entry is in the current format: no `offloading:` on a search-space "
    "entry and no scenario `duration:` (InferenceX's format before AgentX v1.0, 2026-07-02)",
    hint="write kv-offloading: none|dram (+ kv-offload-backend) and drop duration",
)
def older_agentic_format(subject: MasterSubject) -> Iterator[Problem]:
    config = subject.config
    for i, scenario in enumerate(config.entry.scenarios.agentic_coding):
        if scenario.duration is not None:
            yield Problem(
                f"scenario duration: {scenario.duration} is InferenceX's format before AgentX"
                " v1.0; its generator has written its own default (3600 s) since",
                config.locate(("scenarios", "agentic-coding", i, "duration")),
                hint="drop duration: (the run length is the harness's since upstream #1970)",
            )
    for point in config.entry.search_spaces():
        space = point.space
        if isinstance(space, AgenticSingleNodeSearchSpace) and space.offloading is not None:
            yield Problem(
                f"offloading: {space.offloading} is InferenceX's spelling before AgentX v1.0",
                config.locate((*point.path, "offloading")),
                hint="write kv-offloading: none, or kv-offloading: dram with"
                " kv-offload-backend: {name: ...} (cpu offload in vLLM: native)",
            )
