"""Conventions of agentic-coding jobs that several stages share (sim, launch, results)."""

from __future__ import annotations

SCENARIO = "agentic-coding"
