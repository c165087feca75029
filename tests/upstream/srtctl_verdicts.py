"""Print srtctl's own verdict on every recipe file under a folder, as JSON.

Run with the srtctl venv's interpreter: `python srtctl_verdicts.py DIR`. For each
`*.yaml` below DIR (relative path), each variant srtctl submits without a selector
(override files: every override_* and zip_override_* variant; plain files: the file,
key "") maps to null when srtctl's schema loads it, else to srtctl's error text. The
variants are expanded and loaded exactly as `srtctl.core.config.validate_config_file`
does (no srtslurm.yaml, so no cluster defaults).
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import yaml

logging.disable(logging.CRITICAL)

from srtctl.core.config import generate_override_configs  # noqa: E402
from srtctl.core.schema import SrtConfig  # noqa: E402


def verdicts(root: Path) -> dict[str, dict[str, str | None]]:
    schema = SrtConfig.Schema()
    out: dict[str, dict[str, str | None]] = {}
    for path in sorted(root.rglob("*.yaml")):
        raw = yaml.safe_load(path.read_text())
        rel = path.relative_to(root).as_posix()
        if isinstance(raw, dict) and "base" in raw:
            try:
                variants = generate_override_configs(raw)
            except Exception as exc:
                out[rel] = {"*": f"failed to expand overrides: {exc}"}
                continue
        else:
            variants = [("", raw)]
        result: dict[str, str | None] = {}
        for suffix, config in variants:
            try:
                schema.load(config)
                result[suffix] = None
            except Exception as exc:
                result[suffix] = f"{type(exc).__name__}: {exc}"
        out[rel] = result
    return out


if __name__ == "__main__":
    json.dump(verdicts(Path(sys.argv[1])), sys.stdout, indent=1)
