"""Eval tests run the real lm-eval; a venv made before it joined the dev extras lacks it."""

from __future__ import annotations

from importlib.util import find_spec

import pytest

needs_lm_eval = pytest.mark.skipif(
    find_spec("lm_eval") is None,
    reason="lm-eval is not installed here (pip install -e '.[dev]' installs it)",
)
