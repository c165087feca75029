"""Eval tests run the real lm-eval; a venv made before it joined the dev extras lacks it
(CI installs it: there the tests fail instead of skipping)."""

from __future__ import annotations

from importlib.util import find_spec

from services import needs_service

needs_lm_eval = needs_service(
    find_spec("lm_eval") is None,
    "lm-eval is not installed here (pip install -e '.[dev]' installs it)",
)
