"""sa-bench's `--use-chat-template`, `--dsv4` and `--tokenizer-mode deepseek_v4`: random text
framed as a chat turn, the template's tokens counted in the input length, and the errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from harness.testserver import TestServer
from inferbench.bench import deepseek_v4
from inferbench.bench.chat_template import wrapper
from inferbench.bench.datasets import build_prompts, load_tokenizer, template_overhead
from inferbench.bench.invocation import BenchArgs, resolve
from inferbench.bench.workload import PromptTemplate, RandomWorkload, SharedPrefixWorkload
from inferbench.cli.main import main

# A template in the usual Hugging Face style: BOS, a role marker per message, the generation
# prompt. Spaces between markers keep the test server's word count equal to the token count.
TEMPLATE = (
    "{{ bos_token }} {% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)
CONFIG = {"chat_template": TEMPLATE, "bos_token": {"content": "<s>", "__type": "AddedToken"}}


@pytest.fixture
def chat_tok(tmp_path: Path, write_tokenizer: Callable[..., Path]) -> Path:
    return write_tokenizer(tmp_path / "tok", CONFIG)


def _args(tokenizer: Path | str | None, **kw: object) -> BenchArgs:
    base: dict[str, object] = {
        "base_url": "http://127.0.0.1:1",
        "model": "org/chat-model",
        "isl": 48,
        "osl": 4,
        "concurrency": "1",
        "num_prompts": 4,
    }
    return BenchArgs(**{**base, "tokenizer": None if tokenizer is None else str(tokenizer), **kw})


def _random(args: BenchArgs) -> RandomWorkload:
    workload = resolve(args).workload
    assert isinstance(workload, RandomWorkload)
    return workload


def test_the_tokenizers_template_renders_as_transformers_does(
    tmp_path: Path, write_tokenizer: Callable[..., Path]
) -> None:
    folder = write_tokenizer(tmp_path / "a", CONFIG)
    wrap = wrapper(PromptTemplate.TOKENIZER, folder / "tokenizer.json")
    assert wrap("abc def") == "<s> <|user|> abc def <|assistant|> "
    # a list of named templates: `default` is used; tojson keeps non-ASCII text as it is
    named = {
        "bos_token": "<s>",
        "chat_template": [
            {"name": "tool_use", "template": "tools"},
            {"name": "default", "template": "{{ messages | tojson }}"},
        ],
    }
    folder = write_tokenizer(tmp_path / "b", named)
    wrap = wrapper(PromptTemplate.TOKENIZER, folder / "tokenizer.json")
    assert json.loads(wrap("héllo")) == [{"role": "user", "content": "héllo"}]
    assert "héllo" in wrap("héllo")
    # chat_template.jinja next to tokenizer.json wins over tokenizer_config.json
    folder = write_tokenizer(tmp_path / "c", CONFIG)
    (folder / "chat_template.jinja").write_text(
        "{% for m in messages %}\n[{{ m.role }}] {{ m.content }}\n{% endfor %}\n"
    )
    wrap = wrapper(PromptTemplate.TOKENIZER, folder / "tokenizer.json")
    assert wrap("x") == "[user] x\n"  # trim_blocks: no newline after a block tag


def test_deepseek_v4_frames_one_user_turn_in_thinking_mode() -> None:
    bos, user, assistant = deepseek_v4.BOS, deepseek_v4.USER, deepseek_v4.ASSISTANT
    assert bos == "<｜begin▁of▁sentence｜>" and user == "<｜User｜>"
    assert deepseek_v4.user_turn("hi") == f"{bos}{user}hi{assistant}<think>"
    assert deepseek_v4.user_turn("hi", thinking=False) == f"{bos}{user}hi{assistant}</think>"


@pytest.mark.parametrize(
    ("flags", "template", "overhead"),
    [
        ({"use_chat_template": True}, PromptTemplate.TOKENIZER, 3),  # <s> <|user|> <|assistant|>
        ({"dsv4": True}, PromptTemplate.DEEPSEEK_V4, 4),  # BOS, User, Assistant, <think>
        ({"dsv4": True, "use_chat_template": True}, PromptTemplate.DEEPSEEK_V4, 4),
        (
            {"use_chat_template": True, "tokenizer_mode": "deepseek_v4"},
            PromptTemplate.DEEPSEEK_V4,
            4,
        ),
    ],
)
def test_template_tokens_count_in_the_input_length_as_in_sa_bench(
    chat_tok: Path, flags: dict[str, object], template: PromptTemplate, overhead: int
) -> None:
    workload = _random(_args(chat_tok, **flags))
    assert workload.chat_template is template
    assert template_overhead(template, chat_tok / "tokenizer.json") == overhead
    tok = load_tokenizer(chat_tok / "tokenizer.json")
    prompts = build_prompts(workload, list(range(6)), seed=3)
    for p in prompts:
        assert isinstance(p.prompt, str)
        # the random part is isl - overhead tokens; the framed prompt is exactly isl
        assert len(tok.encode(p.prompt, add_special_tokens=False).ids) == p.input_len == 48
    framed = prompts[0].prompt
    if template is PromptTemplate.DEEPSEEK_V4:
        assert framed.startswith(deepseek_v4.BOS + deepseek_v4.USER)
        assert framed.endswith(deepseek_v4.ASSISTANT + "<think>")
    else:
        assert framed.startswith("<s> <|user|> ") and framed.endswith(" <|assistant|> ")


def test_range_ratio_applies_to_the_random_part(chat_tok: Path) -> None:
    """sa-bench draws U[floor((L - t) r), L - t] random tokens, then adds the t of the template."""
    args = _args(chat_tok, use_chat_template=True, range_ratio=0.5, dataset_name="random")
    lens = {p.input_len for p in build_prompts(_random(args), list(range(200)), seed=0)}
    assert min(lens) == (48 - 3) // 2 + 3 and max(lens) == 48


def test_a_shared_prefix_is_framed_whole(chat_tok: Path) -> None:
    args = _args(chat_tok, use_chat_template=True, random_prefix_len=16)
    workload = resolve(args).workload
    assert isinstance(workload, SharedPrefixWorkload)
    a, b = build_prompts(workload, [0, 1], seed=0)
    assert isinstance(a.prompt, str) and isinstance(b.prompt, str)
    assert a.prompt.startswith("<s> <|user|> ") and a.input_len == b.input_len == 16 + 48
    assert a.prompt[:60] == b.prompt[:60]  # the shared prefix follows the same header


def test_tokenizer_mode_deepseek_v4_alone_changes_nothing(chat_tok: Path) -> None:
    assert _random(_args(None, tokenizer_mode="deepseek_v4")).tokenizer is None
    assert _random(_args(chat_tok, tokenizer_mode="deepseek_v4")).chat_template is None


def test_model_id_is_the_tokenizer_by_default_from_the_hf_cache(
    tmp_path: Path, write_tokenizer: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """sa-bench loads --model's tokenizer when --tokenizer is not given; so does a chat
    template, or random text for the chat endpoint (never downloaded)."""
    repo = tmp_path / "hub" / "models--org--chat-model"
    write_tokenizer(repo / "snapshots" / "abc123", CONFIG)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    expected = repo / "snapshots" / "abc123" / "tokenizer.json"
    assert _random(_args(None, use_chat_template=True)).tokenizer == expected
    assert _random(_args(None, endpoint="chat")).tokenizer == expected
    assert _random(_args(None)).tokenizer is None  # token ids, as before


def _cli(args: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(["bench", *args])
    code = exc.value.code
    return code if isinstance(code, int) else 1


def _broken(
    tmp_path: Path, write_tokenizer: Callable[..., Path], case: str
) -> tuple[list[str], str]:
    """(flags, what the message names) for one mistake."""
    folder = tmp_path / case
    if case == "no-config":
        return ["--tokenizer", str(write_tokenizer(folder))], "no tokenizer_config.json"
    if case == "no-template":
        return ["--tokenizer", str(write_tokenizer(folder, {"bos_token": "<s>"}))], "chat_template"
    if case == "syntax":
        write_tokenizer(folder, CONFIG)
        (folder / "chat_template.jinja").write_text("ok\n{% for m in messages %}\n")
        return ["--tokenizer", str(folder)], "chat_template.jinja:2"
    if case == "raises":
        config = {"chat_template": "{{ raise_exception('system message required') }}"}
        return ["--tokenizer", str(write_tokenizer(folder, config))], "system message required"
    if case == "too-short":
        return ["--tokenizer", str(write_tokenizer(folder, CONFIG)), "--isl", "3"], "--isl"
    if case == "dataset":
        data = tmp_path / "d.jsonl"
        data.write_text('{"prompt": "abc"}\n')
        folder = write_tokenizer(folder, CONFIG)
        flags = [
            "--tokenizer",
            str(folder),
            "--dataset-name",
            "custom",
            "--dataset-path",
            str(data),
        ]
        return flags, "random prompts only"
    assert case == "not-cached"
    return ["--model", "no-such-org/no-such-model"], "huggingface-cli download"


@pytest.mark.parametrize(
    "case", ["no-config", "no-template", "syntax", "raises", "too-short", "dataset", "not-cached"]
)
def test_mistakes_exit_2_with_a_fix(
    case: str,
    tmp_path: Path,
    write_tokenizer: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    flags, named = _broken(tmp_path, write_tokenizer, case)
    base = ["--base-url", "http://127.0.0.1:1", "--model", "m", "--isl", "16", "--osl", "4"]
    code = _cli([*base, "--concurrency", "1", "--num-prompts", "1", "--use-chat-template", *flags])
    err = capsys.readouterr().err
    assert code == 2, err
    assert named in err and "Traceback" not in err, err
    if case not in ("syntax", "raises"):  # a template's own error names its file instead
        assert "fix:" in err


def test_other_tokenizer_modes_stay_refused(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--base-url", "http://127.0.0.1:1", "--model", "m", "--isl", "8", "--osl", "4"]
    code = _cli([*base, "--concurrency", "1", "--num-prompts", "1", "--tokenizer-mode", "slow"])
    err = capsys.readouterr().err
    assert code == 2 and "--tokenizer-mode" in err and "deepseek_v4" in err


@pytest.mark.integration
def test_sa_bench_chat_template_run_sends_framed_text(
    server: TestServer, chat_tok: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server counts every framed prompt at the intended length (else the run fails with
    prompt_mismatch), and the result records the template with the workload."""
    code = _cli(
        [
            "--backend", "vllm", "--base-url", f"http://127.0.0.1:{server.port}",
            "--model", "org/chat-model", "--tokenizer", str(chat_tok),
            "--dataset-name", "random", "--random-input-len", "64", "--random-output-len", "4",
            "--random-range-ratio", "0.8", "--num-prompts", "8", "--max-concurrency", "2",
            "--request-rate", "inf", "--ignore-eos", "--use-chat-template",
            "--save-result", "--result-dir", str(tmp_path), "--result-filename", "r.json",
            "--disable-tqdm",
        ]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    top = orjson.loads((tmp_path / "r.json").read_bytes())
    assert top["completed"] == 8 and top["failed"] == 0
    assert all(int((64 - 3) * 0.8) + 3 <= n <= 64 for n in top["input_lens"])
    assert top["inferbench"]["workload"]["chat_template"] == "tokenizer"
