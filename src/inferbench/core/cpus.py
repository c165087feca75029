"""How many cores this process may run on (one definition for every parallel path)."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on: its affinity (`taskset` limits it), else the
    machine's count where the platform has no affinity."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
