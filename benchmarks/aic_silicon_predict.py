"""aiconfigurator's own prediction of silicon-sample rows (run by benchmarks/sim_silicon_cv.py
under the Python of the environment aiconfigurator is installed in; imports nothing of
inferbench).

Reads row ids on stdin (one a line), writes one JSON object a line to stdout: `id` and
`ttft_ms`/`tpot_ms`, or `error`. Each row is estimated with aiconfigurator's
`cli_estimate` at the row's backend, layout, batch and quantisation, as its own silicon
regression check does, and at the row's backend version where aiconfigurator has tables
for it (else its default version for that system; `version` says which).

    AIC/bin/python benchmarks/aic_silicon_predict.py SILICON_CSV < ids
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sys

LAYOUT = ("tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size")
AGG = ("batch_size", *LAYOUT)
DISAGG = tuple(
    f"{role}_{key}"
    for role in ("prefill", "decode")
    for key in (*LAYOUT, "batch_size", "num_workers")
)


def estimate(row: dict[str, str], version: str | None) -> tuple[float, float]:
    from aiconfigurator.cli.api import cli_estimate

    keys = AGG if row["mode"] == "agg" else DISAGG
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its own report
        result = cli_estimate(
            model_path=row["model_path"],
            system_name=row["system"],
            mode=row["mode"],
            backend_name=row["backend"],
            backend_version=version,
            isl=int(row["isl"]),
            osl=int(row["osl"]),
            gemm_quant_mode=row["gemm_quant_mode"] or None,
            moe_quant_mode=row["moe_quant_mode"] or None,
            **{k: int(float(row[k])) for k in keys if row.get(k)},
        )
    return float(result.ttft), float(result.tpot)


def main() -> int:
    with open(sys.argv[1], newline="", encoding="utf-8") as f:
        rows = {row["id"]: row for row in csv.DictReader(f)}
    for line in sys.stdin:
        row_id = line.strip()
        if not row_id:
            continue
        out: dict[str, object] = {"id": row_id}
        row = rows[row_id]
        try:
            try:
                out["ttft_ms"], out["tpot_ms"] = estimate(row, row["backend_version"] or None)
                out["version"] = row["backend_version"]
            except ValueError as exc:
                if "version" not in str(exc):
                    raise
                # the row's version is not one of the system's data slots: its default
                out["ttft_ms"], out["tpot_ms"] = estimate(row, None)
                out["version"] = "default"
        except Exception as exc:  # any refusal is reported per row
            out["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
