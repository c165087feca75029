"""Accuracy evals through the real lm-eval, against real loopback servers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from inferbench.core.errors import InputError
from inferbench.evals.lmeval import lm_eval_argv, prepare_task, run_eval
from inferbench.evals.result import EvalStatus, read_eval_result, write_eval_result
from inferbench.evals.spec import EvalApi, EvalSpec, eval_context_length, task_info

from .conftest import needs_lm_eval
from .known_answers import QUESTIONS, known_answer_server, write_dataset


def test_inferencex_context_and_output_rules() -> None:
    assert eval_context_length(8192, 1024, None) == 8192 + 1024 + 256
    assert eval_context_length(8192, 1024, 4096) == 4096  # capped at the model's own
    assert eval_context_length(None, None, None) == 16384
    assert EvalSpec(context_length=9472).max_output_tokens == 9472 - 4096
    assert EvalSpec(context_length=4096).max_output_tokens == 2048
    assert EvalSpec(context_length=131072).max_output_tokens == 16384


def test_argv_is_inferencex_invocation_without_the_key(tmp_path: Path) -> None:
    spec = EvalSpec(concurrency=32, context_length=9472)
    argv = lm_eval_argv("py", spec, "http://h:8000/v1", "m", tmp_path / "t.yaml", tmp_path)
    assert argv[:5] == ["py", "-m", "lm_eval", "--model", "local-chat-completions"]
    assert "--apply_chat_template" in argv and "--log_samples" in argv
    model_args = argv[argv.index("--model_args") + 1]
    assert "base_url=http://h:8000/v1/chat/completions" in model_args
    assert "num_concurrent=32" in model_args and "max_length=9472" in model_args
    assert "api_key" not in model_args  # the key travels in the environment only
    gen = argv[argv.index("--gen_kwargs") + 1]
    assert gen == "max_tokens=5376,temperature=0,top_p=1"
    completions = lm_eval_argv(
        "py", EvalSpec(api=EvalApi.COMPLETIONS), "http://h:8000", "m", tmp_path, tmp_path
    )
    assert "local-completions" in completions and "--apply_chat_template" not in completions


def test_local_dataset_and_missing_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_dataset(tmp_path / "gsm.jsonl")
    task = prepare_task(EvalSpec(dataset=data), tmp_path / "work")
    text = task.read_text()
    assert "dataset_path: json" in text and str(data.resolve()) in text
    assert "openai/gsm8k" not in text.split("doc_to_text")[0].split("task:")[1]
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-cache"))
    result = run_eval("http://127.0.0.1:1", "m", EvalSpec(), tmp_path / "out")
    assert result.status is EvalStatus.UNAVAILABLE and "huggingface-cli download" in (
        result.reason or ""
    )
    with pytest.raises(InputError, match="unknown eval task"):
        task_info("mmlu")


def test_missing_lm_eval_is_an_outcome(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    data = write_dataset(tmp_path / "gsm.jsonl")
    result = run_eval("http://127.0.0.1:1", "m", EvalSpec(dataset=data), tmp_path, python=str(fake))
    assert result.status is EvalStatus.UNAVAILABLE and "lm-eval is not installed" in (
        result.reason or ""
    )


def test_the_eval_result_keeps_no_url_credential(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    data = write_dataset(tmp_path / "gsm.jsonl")
    url = "http://u:pw-1@127.0.0.1:1/v1?token=tok-2&n=1"
    result = run_eval(url, "m", EvalSpec(dataset=data), tmp_path, python=str(fake))
    assert result.base_url == "http://127.0.0.1:1/v1?token=[redacted]&n=1"


@needs_lm_eval
@pytest.mark.slow
@pytest.mark.integration
def test_known_answers_give_exactly_the_expected_score(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "gsm.jsonl")
    with known_answer_server(known=7) as srv:
        result = run_eval(srv.url, "known", EvalSpec(dataset=data, concurrency=4), tmp_path)
    assert result.status is EvalStatus.OK, result.reason
    primary = result.primary
    assert primary is not None and primary.filter == "strict-match"
    assert primary.value == pytest.approx(7 / len(QUESTIONS)) and primary.samples == 10
    assert primary.stderr == pytest.approx((0.7 * 0.3 / 9) ** 0.5)
    assert not result.simulated and result.samples_file
    write_eval_result(tmp_path / "eval_gsm8k.json", result)
    assert read_eval_result(tmp_path / "eval_gsm8k.json") == result


@needs_lm_eval
@pytest.mark.slow
@pytest.mark.integration
def test_a_reasoning_models_answers_are_scored(tmp_path: Path) -> None:
    """`content` null and the answer in `reasoning_content`: lm-eval alone scores 0; with the
    patch inferbench puts on its path (as InferenceX's), the answers count."""
    data = write_dataset(tmp_path / "gsm.jsonl")
    with known_answer_server(known=7, reasoning=True) as srv:
        result = run_eval(srv.url, "known", EvalSpec(dataset=data, concurrency=4), tmp_path)
    assert result.status is EvalStatus.OK, result.reason
    assert result.primary is not None and result.primary.value == pytest.approx(0.7)


@needs_lm_eval
@pytest.mark.slow
@pytest.mark.integration
def test_a_server_dying_mid_eval_is_a_recorded_failure(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "gsm.jsonl")
    spec = EvalSpec(dataset=data, concurrency=1, max_retries=0, timeout_s=10)
    with known_answer_server(known=10, fail_after=3) as srv:
        result = run_eval(srv.url, "known", spec, tmp_path, wall_timeout_s=240)
    assert result.status is EvalStatus.FAILED, result
    assert result.log_file and (tmp_path / result.log_file).is_file()


@pytest.fixture
def sim_url(sim_serve: Callable[[int, int, int], AbstractContextManager[str]]) -> Iterator[str]:
    with sim_serve(512, 64, 4096) as url:
        yield url


@needs_lm_eval
@pytest.mark.slow
@pytest.mark.integration
def test_the_simulator_scores_near_zero_and_says_so(sim_url: str, tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "gsm.jsonl")
    spec = EvalSpec(dataset=data, concurrency=4, context_length=4096, limit=4)
    result = run_eval(sim_url, "meta-llama/Llama-3.1-8B-Instruct", spec, tmp_path)
    assert result.status is EvalStatus.OK, result.reason
    assert result.simulated  # told by the server's /v1/models
    assert result.primary is not None and result.primary.value <= 0.25


def test_failure_summary_is_the_exception_not_its_frames() -> None:
    from inferbench.evals.lmeval import failure_summary

    log = "\n".join([
        "$ python -m lm_eval --model local-completions",
        "Traceback (most recent call last):",
        '  File "/x/lm_eval/api/task.py", line 1204, in doc_to_text',
        "    return apply_template(doc_to_text, doc)",
        '  File "/x/jinja2/environment.py", line 942, in handle_exception',
        "    raise rewrite_traceback_stack(source=source)",
        '  File "<template>", line 1, in top-level template code',
        "jinja2.exceptions.UndefinedError: 'question' is undefined",
    ])  # fmt: skip
    assert failure_summary(log) == "UndefinedError: 'question' is undefined"
    assert failure_summary("KeyboardInterrupt\n") == "KeyboardInterrupt"
    assert failure_summary("oops: no such task\n  at a line\n") == "oops: no such task"
    assert failure_summary("") == "no message"
