"""Frame random prompt text as a chat turn: the tokenizer's own template, or DeepSeek-V4's.

sa-bench's `--use-chat-template` renders each random prompt as the only user message of a
conversation with the tokenizer's chat template (with the generation prompt, as text) and
sends that text to the completions endpoint; `--dsv4` uses DeepSeek-V4's encoder instead.
The template is the Jinja source Hugging Face tokenizers keep next to tokenizer.json:
`chat_template.jinja`, else `chat_template` in tokenizer_config.json (a string, or a list of
named templates of which `default` is used). It is rendered the way `transformers` renders
it: a sandbox, `trim_blocks`/`lstrip_blocks`, `raise_exception`, `strftime_now`, a `tojson`
that keeps non-ASCII text, and the special tokens of tokenizer_config.json as variables.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import TemplateError, TemplateSyntaxError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from inferbench.bench import deepseek_v4
from inferbench.bench.workload import PromptTemplate
from inferbench.core.errors import InputError, Location

Wrap = Callable[[str], str]

_SPECIAL_TOKEN_KEYS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)
_NO_TEMPLATE_HINT = (
    "put the model's tokenizer_config.json (with its chat_template) next to tokenizer.json, "
    "e.g. huggingface-cli download MODEL tokenizer.json tokenizer_config.json; or use "
    "--dsv4 for DeepSeek-V4, or --endpoint chat to have the server apply its template"
)


def wrapper(kind: PromptTemplate, tokenizer: Path) -> Wrap:
    """The function that frames one prompt text as a user turn ready for the reply."""
    if kind is PromptTemplate.DEEPSEEK_V4:
        return deepseek_v4.user_turn
    return _jinja_wrapper(tokenizer)


@lru_cache(maxsize=4)
def _jinja_wrapper(tokenizer: Path) -> Wrap:
    source, origin = template_source(tokenizer)
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    try:
        template = env.from_string(source)
    except TemplateSyntaxError as exc:
        where = Location(file=origin, line=exc.lineno if origin.suffix == ".jinja" else None)
        raise InputError(
            f"the chat template does not parse: {exc.message}",
            location=where,
            hint="use the model's own tokenizer_config.json (or chat_template.jinja)",
        ) from None
    tokens = _special_tokens(tokenizer.parent / "tokenizer_config.json")

    def wrap(text: str) -> str:
        try:
            return template.render(
                messages=[{"role": "user", "content": text}],
                add_generation_prompt=True,
                tools=None,
                documents=None,
                **tokens,
            )
        except TemplateError as exc:
            raise InputError(
                f"the chat template failed on a user message: {exc}", location=Location(origin)
            ) from None

    return wrap


def template_source(tokenizer: Path) -> tuple[str, Path]:
    """The Jinja chat template stored with `tokenizer` (a tokenizer.json), and its file."""
    folder = tokenizer.parent
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8"), jinja
    config = folder / "tokenizer_config.json"
    if not config.is_file():
        raise InputError(
            f"no chat template for {tokenizer}: {folder} has no tokenizer_config.json "
            "(nor chat_template.jinja)",
            location=Location(key="--use-chat-template"),
            hint=_NO_TEMPLATE_HINT,
        )
    value = _read_config(config).get("chat_template")
    if isinstance(value, list):
        named = {t.get("name"): t.get("template") for t in value if isinstance(t, dict)}
        value = named.get("default")
    if not isinstance(value, str) or not value.strip():
        raise InputError(
            "no chat template: no `chat_template` (or no template named `default`)",
            location=Location(file=config, key="chat_template"),
            hint=_NO_TEMPLATE_HINT,
        )
    return value, config


def _read_config(config: Path) -> dict[str, Any]:
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        message = f"cannot read tokenizer config: {exc}"
        raise InputError(message, location=Location(config)) from None
    if not isinstance(data, dict):
        raise InputError("a tokenizer config is a JSON object", location=Location(config))
    return data


def _special_tokens(config: Path) -> dict[str, Any]:
    """`bos_token` and the like, as templates see them (strings, never AddedToken dicts)."""
    if not config.is_file():
        return {}
    data = _read_config(config)
    out: dict[str, Any] = {}
    for key in _SPECIAL_TOKEN_KEYS:
        if (text := _token_text(data.get(key))) is not None:
            out[key] = text
    extra = data.get("additional_special_tokens")
    if isinstance(extra, list):
        out["additional_special_tokens"] = [
            t for t in (_token_text(v) for v in extra) if t is not None
        ]
    return out


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def _tojson(
    value: Any, indent: int | None = None, separators: Any = None, sort_keys: bool = False
) -> str:
    return json.dumps(
        value, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _raise_exception(message: str) -> None:
    raise TemplateError(message)
