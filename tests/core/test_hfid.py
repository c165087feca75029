"""Model references: a Hub id, `hf:<id>`, a local path; anything but nothing and control
characters is read (as InferenceX's generator reads it)."""

from __future__ import annotations

import pytest

from inferbench.core.hfid import check_model_reference, is_model_id, model_form


@pytest.mark.parametrize(
    ("value", "form"),
    [
        ("deepseek-ai/DeepSeek-R1-0528", "hub-id"),
        ("gpt2", "hub-id"),
        ("hf:deepseek-ai/DeepSeek-R1-0528", "hf-prefixed"),
        ("/models/DeepSeek-R1", "local-path"),
        ("./weights", "local-path"),
        ("~/models/x", "local-path"),
        ("org/../x", "other"),
        ("a b/c", "other"),
        ("[/][bold]x[/]", "other"),
        ("hf:", "other"),
    ],
)
def test_model_form(value: str, form: str) -> None:
    assert model_form(check_model_reference(value)) == form


@pytest.mark.parametrize("value", ["", " ", "a\nb", "x\x1b[31m", "y" * 4097])
def test_what_cannot_be_a_model_is_refused(value: str) -> None:
    with pytest.raises(ValueError):
        check_model_reference(value)


def test_a_hub_id_is_96_characters_at_most() -> None:
    assert is_model_id("o/" + "n" * 94) and not is_model_id("o/" + "n" * 95)
