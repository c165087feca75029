"""GPU power samples from a power file, in any form `inferbench.power.parse` reads.

nvidia-smi's times carry no zone: `tz` is the zone of the host that wrote the file
(the run's `env.json` records it), None for this process's local zone.
"""

from __future__ import annotations

from datetime import tzinfo
from pathlib import Path

from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import MAX_RESULT_BYTES, read_text_file
from inferbench.power.parse import ParseError, PowerCsvReader
from inferbench.results.derived import PowerSample


def read_power_csv(path: Path, tz: tzinfo | None = None) -> tuple[PowerSample, ...]:
    """All samples in the file; a malformed row -> InputError with its line."""
    reader = PowerCsvReader(tz)
    out = []
    # a regular file of bounded size (a FIFO or device is refused, not read forever)
    text = read_text_file(path, MAX_RESULT_BYTES, what="power file", errors="replace")
    for line_no, line in enumerate(text.splitlines(), start=1):
        try:
            sample = reader.feed(line)
        except ParseError as exc:
            raise InputError(
                f"bad power file: {exc}",
                location=Location(path, line=line_no),
                hint=_HEADER_HINT if not reader.started else _ROW_HINT,
            ) from None
        if sample is not None:
            out.append(PowerSample(t=sample.t, gpu=sample.gpu, watts=sample.watts))
    if not reader.started and text.strip():
        raise InputError(
            "power CSV needs a time and a power column",
            location=Location(path, line=1),
            hint=_HEADER_HINT,
        )
    return tuple(out)


_HEADER_HINT = (
    "name a time and a power column in the header (timestamp, power.draw as nvidia-smi "
    "does) or remove the file"
)
_ROW_HINT = "fix or delete the row (a number of watts per sample), or remove the file"
