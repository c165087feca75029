"""A replay as aiperf's artifact files, the ones InferenceX's agentic post-processing reads.

InferenceX replays agentic traces with aiperf (`--output-artifact-dir
<result dir>/aiperf_artifacts`) and then runs, from its tree:
`utils/agentic/aggregation/process_agentic_result.py` (the `agg_*.json`),
`utils/agentic/validation/validate_agentic_result.py` (the failed-request gate) and
`utils/agentic/aggregation/power_adapter.py` (the power window). They read three files,
which `write_aiperf_artifacts` writes from inferbench's own records and `/metrics` reads:

- `profile_export.jsonl` (`records.py`): one line per measured request, aiperf's
  `MetricRecordInfo` shape;
- `profile_export_aiperf.json` (`aggregate.py`): request counts, the window, the
  distributions, the workload's prefix-reuse ceiling;
- `server_metrics_export.json` (`server.py`): the server's counters over the window, and
  the same figures as `server_metrics_export.csv` (benchmark_lib.sh checks that both are
  there when a script requires the engine's metrics).
"""

from __future__ import annotations

from pathlib import Path

import orjson

from inferbench.bench.agentic.aiperf.aggregate import aggregate_export
from inferbench.bench.agentic.aiperf.records import record_lines
from inferbench.bench.agentic.aiperf.server import server_metrics_csv, server_metrics_export
from inferbench.bench.agentic.api import ReplayOutcome
from inferbench.core.fsio import atomic_write_bytes

RECORDS = "profile_export.jsonl"
AGGREGATE = "profile_export_aiperf.json"
SERVER_METRICS = "server_metrics_export.json"
SERVER_METRICS_CSV = "server_metrics_export.csv"


def write_aiperf_artifacts(folder: Path, outcome: ReplayOutcome, base_url: str) -> list[Path]:
    """Write the artifact files of one replay into `folder` (created); returns their paths.
    Without both `/metrics` reads there is no server file (InferenceX then warns)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = record_lines(outcome.run)
    written = [folder / RECORDS, folder / AGGREGATE]
    atomic_write_bytes(written[0], b"".join(orjson.dumps(line) + b"\n" for line in lines))
    aggregate = aggregate_export(outcome.result, outcome.run)
    atomic_write_bytes(written[1], orjson.dumps(aggregate, option=orjson.OPT_INDENT_2))
    if outcome.metrics_text is not None:
        start, end = outcome.metrics_text
        export = server_metrics_export(start, end, base_url, outcome.result)
        written.append(folder / SERVER_METRICS)
        atomic_write_bytes(written[-1], orjson.dumps(export, option=orjson.OPT_INDENT_2))
        written.append(folder / SERVER_METRICS_CSV)
        atomic_write_bytes(written[-1], server_metrics_csv(export).encode())
    return written
