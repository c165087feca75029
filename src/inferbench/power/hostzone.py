"""The time zone of the host that wrote a power file, recorded and read back.

nvidia-smi stamps samples with the host's wall clock and no zone. A run records its
host's zone in `env.json` (`timezone`: the IANA name when the host has one, and the UTC
offset at the time); ingest reads a raw nvidia-smi file of that run in that zone. A
file with no recorded zone is read in the ingesting process's local zone (set `TZ` to
the writing host's zone), as InferenceX's `utils/aggregate_power.py` does.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from inferbench.core.rundir import EnvRecord

_ZONEINFO = "zoneinfo/"


def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _local_zone_name() -> str | None:
    """The IANA name of this process's zone: `TZ`, else what /etc/localtime links to."""
    tz = os.environ.get("TZ", "").removeprefix(":")
    if tz:
        return tz if _zone(tz) is not None else None
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        return None
    if _ZONEINFO in target:
        name = target.split(_ZONEINFO, 1)[1]
        return name if _zone(name) is not None else None
    try:
        name = Path("/etc/timezone").read_text().strip()
    except OSError:
        return None
    return name if name and _zone(name) is not None else None


def host_zone() -> dict[str, Any]:
    """What `env.json` records: `{"name": "Europe/Berlin" | None, "utc_offset_s": 3600}`."""
    time.tzset()  # TZ may have changed since the interpreter started
    offset = datetime.now(UTC).astimezone().utcoffset() or timedelta(0)
    return {"name": _local_zone_name(), "utc_offset_s": int(offset.total_seconds())}


def recorded_zone(env: EnvRecord) -> tzinfo | None:
    """The zone an `env.json` records (by name, which knows daylight saving; else its
    offset), or None when it records none (read the file as local time)."""
    record = env.timezone
    if record is None:
        return None
    if record.name and (zone := _zone(record.name)) is not None:
        return zone
    if record.utc_offset_s is not None:
        return timezone(timedelta(seconds=record.utc_offset_s))
    return None
