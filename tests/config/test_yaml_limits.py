"""YAML loading refuses documents built to exhaust the machine, fast and with a location."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.config.yamlio import (
    MAX_DEPTH,
    MAX_EXPANDED_NODES,
    MAX_YAML_BYTES,
    check_expansion,
    load_yaml,
    parse_yaml,
)
from inferbench.core.errors import ConfigError
from services import missing_service


def billion_laughs(size: int = 410) -> str:
    """Ten levels of nine aliases each: 9**10 (3.4 billion) strings once expanded."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefghij":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
        previous = name
    text = "\n".join(lines) + "\n"
    return "#" * (size - len(text) - 1) + "\n" + text


@pytest.mark.timeout(10)  # a hang guard, not a speed target (benchmarks/ has the figure)
def test_a_410_byte_alias_bomb_is_refused_with_its_location() -> None:
    text = billion_laughs()
    assert len(text.encode()) == 410
    with pytest.raises(ConfigError, match="alias bomb") as err:
        parse_yaml(text, Path("bomb.yaml"))
    assert err.value.location.file == Path("bomb.yaml") and err.value.location.line
    assert err.value.hint and "alias" in err.value.hint


def test_aliases_within_the_limit_still_load_and_locate() -> None:
    doc = parse_yaml("base: &b {tp: 8, ep: 1}\nx: *b\ny: {<<: *b, ep: 8}\n", Path("ok.yaml"))
    assert doc.data == {
        "base": {"tp": 8, "ep": 1},
        "x": {"tp": 8, "ep": 1},
        "y": {"tp": 8, "ep": 8},
    }
    assert doc.locate("x.tp").line == 1 and doc.locate("y.ep").line == 3


def test_the_largest_real_file_is_far_below_the_expansion_limit() -> None:
    real = Path(__file__).resolve().parents[3] / "shared/upstream/inferencex/configs"
    master = real / "nvidia-master.yaml"
    if not master.is_file():
        missing_service("../shared/upstream is not here")
    from inferbench.config.yamlio import _compose

    root = _compose(master.read_text(), master)
    assert root is not None and check_expansion(root, master) * 10 < MAX_EXPANDED_NODES


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: &a [1, *a]\n", "contains an alias to itself"),
        ("x: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n", "nests deeper"),
        ("conc: " + "9" * 5000 + "\n", "integer with 5,000 characters"),
        ("conc: -" + "1" * 200 + "\n", "out of range"),
    ],
)
def test_absurd_documents_are_refused(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        parse_yaml(text, Path("x.yaml"))
    assert err.value.location.line == 1


def test_an_absurdly_large_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:  # sparse: nothing is written but the size
        handle.truncate(MAX_YAML_BYTES + 1)
    with pytest.raises(ConfigError, match="larger than") as err:
        load_yaml(path)
    assert err.value.location.file == path


@pytest.mark.parametrize("escape", ["\\x07", "\\e", "\\0", "\\x9b", "\\x7f"])
def test_a_control_character_in_text_is_refused_at_its_key(escape: str) -> None:
    text = f'a:\n  name: ok\n  b: ["x", "left{escape}right"]\n'
    with pytest.raises(ConfigError, match="control character") as err:
        parse_yaml(text, Path("x.yaml"))
    assert (err.value.location.line, err.value.location.key) == (3, "a.b[1]")
    assert err.value.hint is not None


def test_tabs_and_newlines_in_text_are_text() -> None:
    doc = parse_yaml('cmd: "a\\tb\\nc\\r"\nplain: x\\x07\n', Path("x.yaml"))
    assert doc.data == {"cmd": "a\tb\nc\r", "plain": "x\\x07"}
