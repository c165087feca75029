"""What one accuracy eval is: the task, its data, and InferenceX's settings for it.

The settings follow InferenceX's `run_lm_eval` (benchmarks/benchmark_lib.sh): greedy
(temperature 0, top-p 1), `num_concurrent` = the eval concurrency (its
`EVAL_CONCURRENT_REQUESTS`, else the job's concurrency, else 64), a context length of
isl + osl + 256 capped at the model's own maximum (16,384 when neither is known), and
at most `context - 4096` output tokens (half the context below 4,096; never above 16,384).
"""

from __future__ import annotations

from enum import StrEnum
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from inferbench.core.errors import InputError, Location
from inferbench.core.lengths import max_model_len
from inferbench.core.model import FrozenModel

DEFAULT_CONTEXT = 16_384  # InferenceX's EVAL_MAX_MODEL_LEN fallback
DEFAULT_CONCURRENCY = 64  # InferenceX's fallback when neither EVAL_CONCURRENT_REQUESTS nor CONC
MAX_OUTPUT_TOKENS = 16_384


class EvalApi(StrEnum):
    COMPLETIONS = "completions"  # lm-eval's local-completions
    CHAT = "chat"  # local-chat-completions with --apply_chat_template (InferenceX's choice)


class TaskInfo(BaseModel):
    """A task inferbench knows: its file, lm-eval's name for it, and what to report."""

    model_config = ConfigDict(frozen=True)

    name: str  # inferbench's name (what --task takes)
    lm_eval_task: str  # the `task:` of the YAML, the key of lm-eval's results
    file: str  # the task YAML in inferbench/evals/tasks
    hf_dataset: str  # dataset_path in the Hugging Face cache
    hf_name: str | None  # dataset_name (config)
    splits: tuple[str, ...]  # the splits a local file stands for
    primary: tuple[str, str]  # (metric, filter) reported first and compared
    default_fewshot: int | None


TASKS: dict[str, TaskInfo] = {
    "gsm8k": TaskInfo(
        name="gsm8k",
        lm_eval_task="gsm8k",
        file="gsm8k.yaml",
        hf_dataset="openai/gsm8k",
        hf_name="main",
        splits=("train", "test"),
        primary=("exact_match", "strict-match"),
        default_fewshot=5,
    ),
    "gpqa": TaskInfo(
        name="gpqa",
        lm_eval_task="gpqa_diamond_cot_n_shot",
        file="gpqa_diamond.yaml",
        hf_dataset="Idavidrein/gpqa",
        hf_name="gpqa_diamond",
        splits=("train",),
        primary=("exact_match", "extract_abcd"),
        default_fewshot=None,
    ),
}


def task_info(name: str) -> TaskInfo:
    if name not in TASKS:
        raise InputError(
            f"unknown eval task {name!r}",
            location=Location(key="--task"),
            hint="one of " + ", ".join(TASKS),
        )
    return TASKS[name]


def task_dir() -> Path:
    """The packaged task files (a real folder: lm-eval imports the helpers beside them)."""
    return Path(str(resources.files("inferbench.evals") / "tasks"))


class EvalSpec(FrozenModel):
    """One eval of one endpoint: task, data, and the request settings."""

    task: str = "gsm8k"
    dataset: Path | None = Field(
        default=None, description="local JSON lines file (or folder with <split>.jsonl)"
    )
    api: EvalApi = EvalApi.CHAT
    concurrency: int = Field(default=DEFAULT_CONCURRENCY, gt=0)
    context_length: int = Field(default=DEFAULT_CONTEXT, gt=0)
    num_fewshot: int | None = Field(default=None, ge=0)
    limit: int | None = Field(default=None, gt=0, description="first N questions only")
    timeout_s: float = Field(default=1800.0, gt=0, description="per request, as InferenceX")
    max_retries: int = Field(default=5, ge=0)
    # an InferenceX tree: its task files (utils/evals/) and its lm-eval patch are used
    # instead of the bundled ones
    tree: Path | None = None

    @property
    def max_output_tokens(self) -> int:
        ctx = self.context_length
        tokens = ctx - 4096 if ctx > 4096 else ctx // 2
        return min(tokens, MAX_OUTPUT_TOKENS)

    @property
    def info(self) -> TaskInfo:
        return task_info(self.task)


def eval_context_length(isl: int | None, osl: int | None, native_max: int | None) -> int:
    """InferenceX's rule: the benchmark's context (isl + osl + 256), capped at the model's."""
    wanted = max_model_len(isl, osl) if isl and osl else 0
    if not wanted:
        wanted = native_max or 0
    if native_max and wanted > native_max:
        wanted = native_max
    return wanted or DEFAULT_CONTEXT
