"""`additional-settings`: KEY=VALUE items typed, anything else kept as written (InferenceX's
generator passes it on; `check` reports it, IB151)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from inferbench.config.settings import AdditionalSettings, RecipeRef


def test_known_and_passthrough_keys() -> None:
    settings = AdditionalSettings.model_validate(
        ["CONFIG_FILE=recipes/a.yaml:fast", "PREFILL_NODES=2", "FOO = bar"]
    )
    assert settings.config_file == RecipeRef(path="recipes/a.yaml", selector="fast")
    assert settings.prefill_nodes == 2 and settings.passthrough == (("FOO", "bar"),)
    assert settings.get("FOO") == "bar" and settings.malformed() == []


@pytest.mark.parametrize("item", ["NOEQUALS", "=value", "1X=2", "--flag"])
def test_an_item_that_is_not_key_value_is_kept_as_written(item: str) -> None:
    settings = AdditionalSettings.model_validate(["A=1", item])
    assert settings.raw == ("A=1", item)
    assert settings.pairs() == [("A", "1")] and settings.malformed() == [(1, item)]
    assert settings.get(item) is None


def test_a_key_set_twice_is_still_refused() -> None:
    with pytest.raises(ValidationError, match="set twice"):
        AdditionalSettings.model_validate(["A=1", "A=2"])
