"""A Hugging Face model id, the one definition of its form: `name` or `org/name`, each part of
letters, digits, `_`, `.` and `-` (the Hub's own repo-id rule, in ASCII), 96 characters at
most. Engines are started with it (`vllm serve <id>`) and it names result series, so anything
else (a path, spaces, Rich markup such as `[bold]`) is not a Hub id.

A master entry's `model` is wider, as InferenceX's generator takes any string there: a Hub id,
`hf:<id>`, or a local path (a model folder on the runner). `check_model_reference` refuses
only what cannot be a model at all (nothing, control characters); `model_form` says which of
the three a value is (`check` reports any other form)."""

from __future__ import annotations

import re
from typing import Literal

_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?"
_MODEL_ID = re.compile(rf"(?:{_PART}/)?{_PART}\Z")
MAX_MODEL_ID = 96


HF_PREFIX = "hf:"
MAX_MODEL_REFERENCE = 4096  # PATH_MAX: a local path is the longest form
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_LOCAL = ("/", "./", "../", "~/")

ModelForm = Literal["hub-id", "hf-prefixed", "local-path", "other"]


def is_model_id(value: str) -> bool:
    return len(value) <= MAX_MODEL_ID and bool(_MODEL_ID.match(value)) and ".." not in value


def check_model_reference(value: str) -> str:
    """`value` when it can name a model (a Hub id, `hf:<id>`, a path; any text InferenceX's
    generator passes on); ValueError for nothing or control characters."""
    if not value.strip():
        raise ValueError("the model is empty: give a Hugging Face id or a local model path")
    if _CONTROL.search(value):
        raise ValueError(f"the model {value!r} contains control characters")
    if len(value) > MAX_MODEL_REFERENCE:
        raise ValueError(f"the model is {len(value)} characters long (at most 4096)")
    return value


def model_form(value: str) -> ModelForm:
    """Which form of model reference `value` is."""
    if is_model_id(value):
        return "hub-id"
    if value.startswith(HF_PREFIX) and is_model_id(value.removeprefix(HF_PREFIX)):
        return "hf-prefixed"
    if value.startswith(_LOCAL) and not any(c.isspace() for c in value):
        return "local-path"
    return "other"
