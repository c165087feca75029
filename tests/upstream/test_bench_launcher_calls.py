"""Every `run_benchmark_serving` call of InferenceX's single-node launchers, expanded into
sa-bench's argv by the launcher library itself, runs unchanged with `inferbench bench`.

A third of the launchers pass `--use-chat-template` or `--dsv4` (DeepSeek-V4's encoder);
those prompts are text framed by the model's template, so each run finds a tokenizer the
test builds in a local Hugging Face cache under the model's id, as sa-bench would.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from inferbench.bench import deepseek_v4
from inferbench.bench.datasets import template_overhead
from inferbench.bench.workload import PromptTemplate

from .sa_bench_calls import Call, call_argv, launcher_calls

SIM_MODEL = "meta-llama/Llama-3.1-8B-Instruct"  # the model `sim serve` answers for
ISL, OSL, CONC, RATIO = 512, 8, 2, "0.8"
TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
# The flags the launchers hand sa-bench beyond the common list; each must be exercised.
LAUNCHER_FLAGS = {"--use-chat-template", "--dsv4", "--trust-remote-code", "--endpoint"}


def _launcher_env(port: str) -> dict[str, str]:
    """The variables a launcher script reads in its call (the CI job sets these)."""
    return {
        "MODEL": SIM_MODEL,
        "PORT": port,
        "ISL": str(ISL),
        "OSL": str(OSL),
        "RANDOM_RANGE_RATIO": RATIO,
        "CONC": str(CONC),
        "RESULT_FILENAME": "result",
        "SERVER_PID": "1",
    }


def _hf_cache(root: Path, write_tokenizer: Callable[..., Path]) -> Path:
    """A Hugging Face cache holding SIM_MODEL's tokenizer (one this test builds)."""
    repo = root / f"models--{SIM_MODEL.replace('/', '--')}"
    write_tokenizer(repo / "snapshots" / "0123abc", {"chat_template": TEMPLATE, "bos_token": "<s>"})
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0123abc")
    return repo / "snapshots" / "0123abc" / "tokenizer.json"


def _value(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


def _expected_template(argv: list[str]) -> PromptTemplate | None:
    if "--dsv4" in argv or (
        "--use-chat-template" in argv and _value(argv, "--tokenizer-mode") == "deepseek_v4"
    ):
        return PromptTemplate.DEEPSEEK_V4
    return PromptTemplate.TOKENIZER if "--use-chat-template" in argv else None


def test_dsv4_framing_is_inferencex_encoder_for_one_user_turn(inferencex_tree: Path) -> None:
    """sa-bench's own encoder (encoding_dsv4.py, standard library only) is the oracle."""
    path = inferencex_tree / "utils" / "bench_serving" / "encoding_dsv4.py"
    spec = importlib.util.spec_from_file_location("inferencex_encoding_dsv4", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for text in ("", "a", "hello world", "多语言\n\ntext </think> <think>", " x " * 50):
        message = [{"role": "user", "content": text}]
        assert deepseek_v4.user_turn(text) == module.encode_messages(message, "thinking")
        assert deepseek_v4.user_turn(text, thinking=False) == module.encode_messages(
            message, "chat"
        )
    assert set(deepseek_v4.SPECIAL_TOKENS) >= {module.bos_token, module.eos_token}


def _distinct_argvs(
    inferencex_tree: Path, port: str, work: Path
) -> tuple[dict[tuple[str, ...], list[str]], dict[str, str]]:
    """{sa-bench argv (its --result-dir as <dir>): scripts} and {script: library's refusal}."""
    lib = inferencex_tree / "benchmarks" / "benchmark_lib.sh"
    calls = launcher_calls(inferencex_tree)
    assert len(calls) > 50  # the tree's single-node launchers, not an empty glob
    # benchmark_lib.sh forwards --tokenizer-mode to sa-bench; no call of this tree passes it
    # (the launchers give deepseek_v4 to the server), so one DeepSeek-V4 call is also run with it
    dsv4 = next(c for c in calls if "--dsv4" in c.text)
    calls.append(Call(dsv4.script, dsv4.text + " --tokenizer-mode deepseek_v4"))
    argvs: dict[tuple[str, ...], list[str]] = {}
    refused: dict[str, str] = {}
    for call in calls:
        try:
            argv = call_argv(lib, call, _launcher_env(port), work)
        except subprocess.CalledProcessError as exc:
            refused[call.script.name] = exc.stdout.decode().strip()
            continue
        key = list(argv)
        key[key.index("--result-dir") + 1] = "<dir>"  # /workspace/ or $PWD/: the runner's
        argvs.setdefault(tuple(key), []).append(call.script.name)
    return argvs, refused


@pytest.mark.integration
@pytest.mark.slow
def test_every_run_benchmark_serving_argv_runs_unchanged(
    inferencex_tree: Path,
    sim_serve: Callable[[int, int, int], AbstractContextManager[str]],
    write_tokenizer: Callable[..., Path],
    tmp_path: Path,
) -> None:
    tokenizer = _hf_cache(tmp_path / "hub", write_tokenizer)
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub")}
    with sim_serve(ISL, OSL, 4 * ISL) as url:
        argvs, refused = _distinct_argvs(inferencex_tree, url.rsplit(":", 1)[-1], tmp_path)
        # calls the library itself rejects never reach sa-bench in InferenceX either
        for script, message in refused.items():
            assert message.startswith("Unknown parameter"), (script, message)
        seen = {a for argv in argvs for a in argv if a.startswith("--")}
        assert seen >= LAUNCHER_FLAGS | {"--tokenizer-mode"}
        for i, (argv, scripts) in enumerate(sorted(argvs.items())):
            out = tmp_path / f"run{i}"
            out.mkdir()
            run = list(argv)
            # the runner's result folder (/workspace/ on CI machines) becomes this run's
            run[run.index("--result-dir") + 1] = str(out)
            bench = subprocess.run(
                [sys.executable, "-m", "inferbench.cli.main", "bench", *run],
                capture_output=True,
                text=True,
                timeout=300,
                cwd=out,
                env=env,
            )
            assert bench.returncode == 0, (scripts, run, bench.stderr)
            _check_result(json.loads((out / "result.json").read_text()), run, tokenizer)


def _check_result(result: dict[str, object], argv: list[str], tokenizer: Path) -> None:
    assert result["completed"] == CONC * 10 and result["failed"] == 0
    assert result["backend"] == _value(argv, "--backend") and result["model_id"] == SIM_MODEL
    inferbench = result["inferbench"]
    assert isinstance(inferbench, dict)
    workload, endpoint = inferbench["workload"], inferbench["endpoint"]
    template = _expected_template(argv)
    assert workload["chat_template"] == (template.value if template else None)
    assert endpoint["api"] == ("chat" if "--endpoint" in argv else "completions")
    # sa-bench's lengths: U[floor((L - t) r), L - t] random tokens, plus t of the template
    # (`input_lens` are the server's counts: the simulator estimates text at 4 characters a
    # token, and the run's gate already failed any prompt it counted 5% off the intended)
    t = template_overhead(template, tokenizer) if template else 0
    nominal = inferbench["lengths"]["nominal_mean_input"]
    assert int((ISL - t) * float(RATIO)) + t < nominal < ISL
