"""Tests that need a service `.ci/run` installs and starts (PostgreSQL, Slurm, Chromium, the
oracle venvs, srtctl, lm-eval, vLLM): on a developer's machine without it they skip with the
reason; in CI (`CI=true`, which `.ci/run` exports) they fail, so CI cannot pass without the
service having run.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1")


def missing_service(reason: str) -> NoReturn:
    """Skip (fail in CI) because a service the test needs is not there."""
    if in_ci():
        pytest.fail(f"CI=true and a service .ci/run provides is missing: {reason}")
    pytest.skip(reason)


def needs_service(missing: bool, reason: str) -> pytest.MarkDecorator:
    """A skipif marker for a missing service that never skips in CI (the test then runs and
    fails on the missing service)."""
    return pytest.mark.skipif(missing and not in_ci(), reason=reason)
