"""Every input of `inferbench eval`, and what it resolves to.

`EvalArgs` holds the values as given (the one list of `eval`'s options: each field's
description is its `--help`, its `Flag` the spelling where that is not `--field-name`);
`resolve` turns them into the `EvalSpec` lm-eval runs and where its files go, refusing a bad
value with the option's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field

from inferbench.core.errors import InputError, Location
from inferbench.core.flags import Flag
from inferbench.core.fsio import is_stream
from inferbench.core.hints import validated
from inferbench.core.model import FrozenModel
from inferbench.evals.result import eval_file_name
from inferbench.evals.spec import EvalApi, EvalSpec, task_info


class EvalArgs(FrozenModel):
    """The inputs of one `inferbench eval` call, as given (None: not given)."""

    base_url: str = Field(description="Server root, e.g. http://127.0.0.1:8000")
    model: str = Field(description="Model name the server serves")
    task: str = Field("gsm8k", description="gsm8k | gpqa")
    dataset: Path | None = Field(
        None, description="local JSON lines file, or a folder of <split>.jsonl"
    )
    endpoint: str = Field("chat", description="chat (InferenceX) | completions")
    concurrency: int = Field(64, description="requests in flight")
    context_length: int = Field(16384, description="max_length (tokens)")
    num_fewshot: int | None = Field(None, description="task default if unset")
    limit: int | None = Field(None, description="first N questions only")
    result_file: Annotated[Path | None, Flag("--output", "-o", writes="file")] = Field(
        None, description="the eval's JSON"
    )
    result_dir: Annotated[Path | None, Flag("--output-dir", writes="folder")] = Field(
        None, description="folder: eval_<task>.json and lm-eval's logs"
    )
    timeout: float | None = Field(None, description="seconds for the whole eval")
    root: Path | None = Field(
        None,
        description="InferenceX tree: its utils/evals task files and lm-eval patch are used "
        "(default: inferbench's copies)",
    )


@dataclass(frozen=True)
class EvalInvocation:
    """What an `EvalArgs` resolves to: the eval, its folder (lm-eval's logs) and result file."""

    spec: EvalSpec
    folder: Path
    target: Path


def resolve(args: EvalArgs) -> EvalInvocation:
    """The eval to run and where it writes, or an InputError naming the option to fix."""
    info = task_info(args.task)
    if args.timeout is not None and not args.timeout > 0:  # NaN too
        raise InputError(
            f"--timeout must be above 0 seconds, not {args.timeout:g}",
            location=Location(key="--timeout"),
            hint="give the seconds the whole eval may take, e.g. --timeout 3600",
        )
    if args.endpoint not in ("chat", "completions"):
        raise InputError(
            f"unknown endpoint {args.endpoint!r}", location=Location(key="--endpoint"), hint="chat"
        )
    if args.result_file is not None and args.result_dir is not None:
        raise InputError(
            "give --output or --output-dir, not both", location=Location(key="--output")
        )
    spec = validated(
        EvalSpec,
        {
            "": "--task",
            "dataset": "--dataset",
            "concurrency": "--concurrency",
            "context_length": "--context-length",
            "num_fewshot": "--num-fewshot",
            "limit": "--limit",
            "tree": "--root",
        },
        tree=args.root.resolve() if args.root is not None else None,
        task=info.name,
        dataset=args.dataset,
        api=EvalApi(args.endpoint),
        concurrency=args.concurrency,
        context_length=args.context_length,
        num_fewshot=args.num_fewshot,
        limit=args.limit,
    )
    # lm-eval's logs go beside the result file; not into /dev beside /dev/stdout
    result_file = args.result_file
    beside = result_file is not None and not is_stream(result_file)
    folder = args.result_dir or (result_file.parent if result_file and beside else Path("."))
    return EvalInvocation(spec, folder, result_file or folder / eval_file_name(info.name))
