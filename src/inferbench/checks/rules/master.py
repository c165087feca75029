"""Master entries on their own: each is valid, runner labels exist and a single-node worker
fits its node."""

from __future__ import annotations

from collections.abc import Iterator

from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.checks.subjects import MasterEntryError, MasterSubject
from inferbench.config.master import SingleNodeSearchSpace


@rule(
    "IB100",
    "master-entry-invalid",
    Severity.ERROR,
    MasterEntryError,
    "the master entry is valid (the others are still checked without it)",
    hint="fix the key or value the message names (InferenceX's master-config schema)",
)
def master_entry_invalid(subject: MasterEntryError) -> Iterator[Problem]:
    error = subject.error
    yield Problem(error.message, error.location, error.hint)


@rule(
    "IB101",
    "runner-label-unknown",
    Severity.ERROR,
    MasterSubject,
    "the master entry's runner label exists in runners.yaml",
    hint="use a label runners.yaml defines (a machine group or `cluster:<name>`), or add "
    "the label there",
)
def runner_label_unknown(subject: MasterSubject) -> Iterator[Problem]:
    runners = subject.project.runners
    label = subject.config.entry.runner
    if runners is None or runners.registry.has_label(label):
        return
    known = sorted(runners.registry.labels)
    close = [k for k in known if k.split("-")[0] == label.split("-")[0]] or known
    yield Problem(
        f"runner {label!r} is not a label in {runners.file.name}",
        subject.config.locate(("runner",)),
        hint="use one of: " + ", ".join(close[:8]),
    )


@rule(
    "IB102",
    "worker-exceeds-node",
    Severity.ERROR,
    MasterSubject,
    "a single-node worker (tp x pp x pcp GPUs) fits one node of its runner's hardware",
    hint="lower tp x pp x pcp to the GPUs of one node of the runner, or pick a runner with "
    "larger nodes",
)
def worker_exceeds_node(subject: MasterSubject) -> Iterator[Problem]:
    runners = subject.project.runners
    entry = subject.config.entry
    spec = runners.registry.hardware_for(entry.runner) if runners is not None else None
    if spec is None:
        return
    for point in entry.search_spaces():
        space = point.space
        if isinstance(space, SingleNodeSearchSpace) and space.layout.gpus > spec.gpus_per_node:
            yield Problem(
                f"{space.layout.describe()} needs {space.layout.gpus} GPUs but a "
                f"{entry.runner} node has {spec.gpus_per_node}",
                subject.config.locate((*point.path, "tp")),
                hint="lower tp (or pp), or make the entry multinode",
            )
