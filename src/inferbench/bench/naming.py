"""Where the result files of several points go: one rule for every command that writes them.

`inferbench bench`, `inferbench sim estimate` and `inferbench run` all name a point's file
after its load, `conc<C>` for a closed loop at concurrency C, `rate<R>` for arrivals at R
req/s and `rate<R>_conc<C>` for both:

- `--result-dir D`: `D/conc4.json`, `D/conc8.json` (a run directory's `results/` folder is
  such a directory);
- `--result-file out.json`: exactly `out.json` for one point, `out_conc4.json`,
  `out_conc8.json` for several;
- sa-bench's `--result-dir D --result-filename F.json` is the result file `D/F.json`.

With `--repeats N`, repeat k > 1 of a point adds `_r<k>` to its file's stem
(`conc8.json`, `conc8_r2.json`, ...): the first is where a single measurement goes.

docs/bench.md describes the same rule for users.
"""

from __future__ import annotations

import re
from pathlib import Path

from inferbench.core.errors import InputError
from inferbench.core.fsio import check_output_file, is_stream


def point_stem(concurrency: int | None, request_rate: float | None = None) -> str:
    """`conc64`, `rate2.5` or `rate2.5_conc64`: the file stem of one point."""
    if request_rate is None:
        if concurrency is None:
            raise ValueError("a point needs a concurrency, a request rate, or both")
        return f"conc{concurrency}"
    rate = f"rate{request_rate:g}"
    return rate if concurrency is None else f"{rate}_conc{concurrency}"


def result_path(
    result_file: Path | None, result_dir: Path | None, stem: str, many: bool
) -> Path | None:
    """The file of the point named `stem`, or None when no result file was asked for."""
    if result_dir is not None:
        return result_dir / f"{stem}.json"
    if result_file is None:
        return None
    if not many:
        return result_file
    return result_file.with_name(f"{result_file.stem}_{stem}{result_file.suffix or '.json'}")


def check_point_output(path: Path | None, option: str, points: int) -> None:
    """Refuse, before anything runs, a file option that cannot take `points` results: one
    that is no file at all, or a stream (stdout, a FIFO, a device) for several points, whose
    per-point names (`out_conc4.json`) would be files beside a device or in /dev."""
    if path is None:
        return
    check_output_file(path, option)
    if points > 1 and is_stream(path):
        raise InputError(
            f"{option} {path} is a stream, and {points} points need a file each",
            hint=f"name a file ({option} out.json writes out_conc4.json, ...), or measure"
            " one point",
        )


REPEAT_SUFFIX = re.compile(r"_r(\d+)$")  # on a file's stem: which repeat of its point


def repeat_path(path: Path, repeat: int) -> Path:
    """Repeat `repeat` (1-based) of the point whose file is `path`."""
    return path if repeat == 1 else path.with_name(f"{path.stem}_r{repeat}{path.suffix}")


def repeat_of(stem: str) -> tuple[str, int]:
    """(the point's stem, its repeat) of a file stem: `conc8_r2` -> (`conc8`, 2)."""
    m = REPEAT_SUFFIX.search(stem)
    return (stem[: m.start()], int(m.group(1))) if m and int(m.group(1)) >= 1 else (stem, 1)
