"""IB310 on the real InferenceX tree: every master setting, recipe environment or engine flag
and single-node script that pins synthetic acceptance is held to the golden AL of its model,
thinking mode and draft length. docs/conformance.md judges each finding."""

from __future__ import annotations

from pathlib import Path

from inferbench.checks.collect import Collector
from inferbench.checks.engine import CheckOptions, _acceptance_settings, check_tree
from inferbench.config.project import load_project

# the AgentX dsv4 "-mtp" entries (not "-mtp2") pin 2.49, the K=3 AL, on recipes drafting 2
WRONG = {
    ("configs/nvidia-master.yaml", 7744),
    ("configs/nvidia-master.yaml", 7760),
    ("configs/nvidia-master.yaml", 7792),
    ("configs/nvidia-master.yaml", 7809),
}


def test_the_real_tree_is_held_to_its_golden_curves(inferencex_tree: Path) -> None:
    report = check_tree(inferencex_tree, CheckOptions(select=("IB310",)))
    found = {
        (f.file.relative_to(inferencex_tree).as_posix(), f.line)
        for f in report.findings
        if f.file is not None and f.line is not None
    }
    assert found == WRONG
    for finding in report.findings:
        assert "draft length 2: expected 2.27" in finding.message
        assert finding.hint == '- "SYNTHETIC_ACCEPTANCE_LENGTH=2.27"'


def test_every_place_that_pins_acceptance_is_read(inferencex_tree: Path) -> None:
    """47 master settings, 106 recipe knobs (63 files), 34 script targets (31 scripts)."""
    project = load_project(inferencex_tree).read_all()
    settings = _acceptance_settings(project, Collector(project).collect())
    by_kind: dict[str, int] = {}
    for s in settings:
        by_kind[s.written_as] = by_kind.get(s.written_as, 0) + 1
    assert by_kind == {"master": 47, "env": 89, "json": 17, "shell": 34}
    assert all(s.draft_length is not None and s.model_prefix for s in settings)
    recipes = {s.location.file for s in settings if s.written_as in ("env", "json")}
    assert len(recipes) == 63
