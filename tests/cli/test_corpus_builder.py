"""The corpus builder fails loudly when a value mutation does not apply to its file."""

from __future__ import annotations

import pytest

from .corpus import CHANGELOG, EXAMPLES, TEXT_MUTATIONS, Edit, MutationMissed


def test_an_edit_that_finds_nothing_fails_the_build() -> None:
    with pytest.raises(MutationMissed, match="finds nothing"):
        Edit(r"(: )(\d+)\b", r"\1-7").apply("perf-changelog.yaml", "- a: [x]\n")


def test_an_edit_that_breaks_the_yaml_fails_the_build() -> None:
    with pytest.raises(MutationMissed, match="leaves no YAML"):
        Edit(r"(: )(\d+)\b", r"\1[unclosed").apply("f.yaml", "a: 1\n")


def test_changelog_values_change_in_place() -> None:
    """No raw template at the end of the file: markup lands in the first pr-link."""
    text = (EXAMPLES / CHANGELOG).read_text()
    broken = TEXT_MUTATIONS["markup"](CHANGELOG, text)
    assert isinstance(broken, str) and broken.count("\n") == text.count("\n")
    assert "  pr-link: '[/][bold]x[/]'\n" in broken and "\\1" not in broken
