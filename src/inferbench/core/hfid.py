"""A Hugging Face model id, the one definition of its form: `name` or `org/name`, each part of
letters, digits, `_`, `.` and `-` (the Hub's own repo-id rule, in ASCII), 96 characters at
most. Engines are started with it (`vllm serve <id>`) and it names result series, so anything
else (a path, spaces, Rich markup such as `[bold]`) is a typo, not a model."""

from __future__ import annotations

import re

_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?"
_MODEL_ID = re.compile(rf"(?:{_PART}/)?{_PART}\Z")
MAX_MODEL_ID = 96


def check_model_id(value: str) -> str:
    """`value` when it is a Hugging Face model id; ValueError (saying the form) otherwise."""
    if len(value) > MAX_MODEL_ID or not _MODEL_ID.match(value) or ".." in value:
        raise ValueError(
            f"{value!r} is not a Hugging Face model id: write org/name (letters, digits, "
            "'_', '.', '-'), e.g. meta-llama/Llama-3.1-8B-Instruct"
        )
    return value
