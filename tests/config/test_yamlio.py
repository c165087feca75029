"""Positioned YAML loading: key paths, positions, duplicates, syntax errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from inferbench.config.yamlio import format_path, load_yaml, parse_path, parse_yaml
from inferbench.core.errors import ConfigError

WriteFile = Callable[[str, str], Path]
T = Path("t.yaml")

DOC = """\
top:
  scenarios:
    fixed-seq-len:
      - isl: 1024
        search-space:
          - {tp: 1}
          - tp: 2
            conc-list: [4, 8]
"""


def test_key_path_round_trip() -> None:
    path = ("scenarios", "fixed-seq-len", 0, "search-space", 1, "tp")
    assert format_path(path) == "scenarios.fixed-seq-len[0].search-space[1].tp"
    assert parse_path(format_path(path)) == path
    assert format_path(()) == ""


def test_locate_every_key_and_item(write: WriteFile) -> None:
    doc = load_yaml(write("m.yaml", DOC))
    base = ("top", "scenarios", "fixed-seq-len", 0)
    assert doc.data["top"]["scenarios"]["fixed-seq-len"][0]["isl"] == 1024
    loc = doc.locate((*base, "search-space", 1, "tp"))
    assert (loc.line, loc.column) == (7, 13)
    assert loc.key == "top.scenarios.fixed-seq-len[0].search-space[1].tp"
    assert doc.locate((*base, "search-space", 0, "tp")).line == 6  # flow mapping key
    assert doc.locate((*base, "search-space", 1, "conc-list", 1)).column == 28
    assert doc.locate("top.scenarios.fixed-seq-len[0].isl").line == 4


def test_locate_missing_key_falls_back_to_parent(write: WriteFile) -> None:
    doc = load_yaml(write("m.yaml", DOC))
    loc = doc.locate(("top", "scenarios", "agentic-coding", 0))
    assert loc.line == 2  # the `scenarios:` key
    assert loc.key == "top.scenarios.agentic-coding[0]"


def test_value_location_differs_from_key(write: WriteFile) -> None:
    doc = load_yaml(write("m.yaml", "a:\n  b: 1\nlong-key:   value\n"))
    assert doc.locate(("long-key",)).column == 1
    assert doc.locate_value(("long-key",)).column == 13


def test_duplicate_key_names_both_lines(write: WriteFile) -> None:
    path = write("m.yaml", "a:\n  tp: 1\n  ep: 2\n  tp: 4\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(path)
    assert err.value.location.line == 4
    assert err.value.location.column == 3
    assert "first defined at line 2" in err.value.message
    assert str(path) in err.value.render()


def test_malformed_yaml_has_file_line_column(write: WriteFile) -> None:
    path = write("m.yaml", "a:\n  b: [1, 2\n  c: 3\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(path)
    loc = err.value.location
    assert loc.file == path and loc.line is not None and loc.column is not None
    assert err.value.render().startswith(f"{path}:{loc.line}:{loc.column}")


def test_tab_indentation_gets_a_hint(write: WriteFile) -> None:
    with pytest.raises(ConfigError) as err:
        load_yaml(write("m.yaml", "a:\n\tb: 1\n"))
    assert err.value.hint is not None and "tab" in err.value.hint


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_yaml(tmp_path / "nope.yaml")


def test_scalars_are_plain_python() -> None:
    doc = parse_yaml("a: 1\nb: 1.5\nc: true\nd: null\ne: '7'\nf: 0x10\ng: inf\n", T)
    assert doc.data == {"a": 1, "b": 1.5, "c": True, "d": None, "e": "7", "f": 16, "g": "inf"}
    assert type(doc.data["a"]) is int


def test_anchors_and_merge_keys() -> None:
    text = "base: &b {tp: 1, ep: 1}\nx:\n  <<: *b\n  tp: 8\ny: *b\n"
    doc = parse_yaml(text, T)
    assert doc.data["x"] == {"tp": 8, "ep": 1}
    assert doc.data["y"] == {"tp": 1, "ep": 1}
    assert doc.locate(("x", "ep")).line is not None


def test_empty_document() -> None:
    doc = parse_yaml("# only a comment\n", T)
    assert doc.data is None
    assert doc.locate(("a",)).line is None


def test_non_scalar_key_rejected() -> None:
    with pytest.raises(ConfigError, match="scalar"):
        parse_yaml("? [a, b]\n: 1\n", T)


def test_merged_and_aliased_keys_are_located_where_written() -> None:
    text = "base: &b\n  tp: 1\n  ep: 1\nx:\n  <<: *b\n  tp: 8\ny: *b\n"
    doc = parse_yaml(text, T)
    assert doc.locate(("x", "tp")).line == 6  # explicit key wins
    assert doc.locate(("x", "ep")).line == 3  # merged from the anchor
    assert doc.locate(("y", "tp")).line == 2  # through the alias
    assert doc.has(("x", "ep")) and not doc.has(("x", "pp"))


def test_integer_mapping_keys_and_sequence_indexes() -> None:
    doc = parse_yaml("a:\n  1: one\nb:\n  - x\n  - y\n", T)
    assert doc.data["a"] == {1: "one"}
    assert doc.locate(("a", 1)).line == 2
    assert doc.locate(("b", 1)).line == 5
    assert doc.locate(("b", 7)).line == 3  # past the end: the list's key


TREE_OR_NOT = [
    DOC,
    "a: 1\na: 2\nb: [x, {c: 0x10, d: 1_000}]\n",  # a duplicate, YAML 1.1 integers
    "x: 'TP & EP'  # a & in text only\ny: a&b\n",
    "a: &x {k: 1}\nb: *x\n",
    "<<: {a: 1}\nb: 2\n",  # a merge key without an anchor
    "? [a]\n: 1\n",  # a non-scalar key
    "x: " + "[" * 100 + "]" * 100 + "\n",  # at the depth limit
    "x: " + "[" * 101 + "]" * 101 + "\n",  # past it
    "- !foo bar\n- ~\n- 1.5\n",
    'a:\n  b: "x\\x1by"\n',  # a control character, named at its key
]


@pytest.mark.parametrize("text", TREE_OR_NOT)
@pytest.mark.parametrize("duplicates", ["error", "last"])
def test_tree_documents_build_as_the_general_builder_does(
    text: str, duplicates: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a document without anchors skips the alias bookkeeping; the result must not change
    from inferbench.config import yamlio

    def outcome() -> object:
        try:
            doc = parse_yaml(text, T, duplicates=duplicates)
        except ConfigError as exc:
            return exc.render()
        return doc.data, list(doc.positions.items()), doc.duplicates

    fast = outcome()
    monkeypatch.setattr(yamlio, "_plain_tree", lambda _text: False)
    assert outcome() == fast
