"""runners.yaml in both of InferenceX's layouts: `labels:` (+ `hardware:`) and the flat file
it had before AgentX v1.0 (upstream #1970, 2026-07-02)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.config.runners import load_runners
from inferbench.core.errors import ConfigError

FLAT = """\
h100:
- 'h100-cw_0'
- 'h100-cw_1'
h100-multinode:
- 'h100-dgxc-slurm_9'
"""
LABELS = """\
labels:
  h100:
    - h100-cw_0
hardware:
  h100:
    gpus-per-node: 8
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "runners.yaml"
    path.write_text(text)
    return path


def test_the_flat_layout_is_read_as_labels(tmp_path: Path) -> None:
    runners = load_runners(write(tmp_path, FLAT))
    assert runners.flat
    assert runners.registry.labels == {
        "h100": ("h100-cw_0", "h100-cw_1"),
        "h100-multinode": ("h100-dgxc-slurm_9",),
    }
    assert runners.registry.hardware == {}
    assert runners.locate_label("h100-multinode").line == 4


def test_the_labels_layout(tmp_path: Path) -> None:
    runners = load_runners(write(tmp_path, LABELS))
    assert not runners.flat and runners.registry.labels == {"h100": ("h100-cw_0",)}
    assert runners.locate_label("h100").line == 2
    spec = runners.registry.hardware_for("h100")
    assert spec is not None and spec.gpus_per_node == 8


def test_a_flat_file_error_is_located_at_its_label(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_runners(write(tmp_path, FLAT + "b200: []\n"))
    assert "b200" in err.value.message and err.value.location.line == 6
    assert "allowed keys" not in str(err.value)  # a valid older layout is never "unknown keys"


def test_a_labels_file_with_a_stray_key_names_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown key 'h200'"):
        load_runners(write(tmp_path, LABELS + "h200:\n- h200-nb_0\n"))
