"""Corpus cases of issue 40's internal errors and silent acceptances: a run.json naming an
engine or backend no inferbench has, seeds outside 0 .. 2**63-1, a length past 64 bits in a
store filter, a --host that is no address of this machine and garbage catalogs. (An output
file in a folder that does not exist, made without a word before, is noted: see
test_round5_corpus.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator

from .corpus import BENCH, SIM_POINT, Case
from .corpus_round3 import RUN_ID, RUN_JSON, STATE_JSON

RUN = f"runs/{RUN_ID}"
SERVE = ("sim", "serve", "--port", "0", *SIM_POINT[:-2])
REPLAY = ("replay", "--base-url", "http://127.0.0.1:9", "--model", "m", "--concurrency", "1",
          "--synth", "sessions=1", "--sessions", "1")  # fmt: skip


def resume_cases() -> Iterator[Case]:
    saved = json.loads(RUN_JSON)
    bogus = {
        "engine": {"engine": "bogus"},
        "backend": {"backend": "bogus"},
        "plan": {"settings": {"plan": {"no_such_option": 1}}},
        "local": {"settings": {"local": {"no_such_option": 1}}},
    }
    for name, change in bogus.items():
        files: dict[str, str | bytes] = {
            f"{RUN}/run.json": json.dumps(saved | change),
            f"{RUN}/state.json": STATE_JSON,
            f"{RUN}/jobs.json": "[]\n",
        }
        yield Case(f"r5:resume:run.json-{name}=bogus",
                   ("run", "--resume", RUN_ID, "--runs-dir", "{tmp}/runs"),
                   ("run.json", "--engine"), tree=True, files=files)  # fmt: skip


SEEDED = {
    "bench": (*BENCH, "--concurrency", "1", "--num-prompts", "1"),
    "replay": REPLAY,
    "sim-serve": SERVE,
    "sim-estimate": ("sim", "estimate", *SIM_POINT, "--concurrency", "1"),
}


def number_cases() -> Iterator[Case]:
    for name, base in SEEDED.items():
        for value in ("-1", str(2**64), str(10**23)):
            yield Case(f"r5:seed:{name}={value}", (*base, "--seed", value), ("--seed",))
    for option in ("--isl", "--osl"):
        for value in (str(10**20), "0"):
            yield Case(f"r5:store-filter:{option}={value}",
                       ("results", "list", "--db", "sqlite:///{tmp}/r.sqlite", option, value),
                       (option,))  # fmt: skip


def host_cases() -> Iterator[Case]:
    for host in ("999.1.1.1", "nonexist.invalid", "192.0.2.1"):  # 192.0.2.1: TEST-NET, not ours
        yield Case(f"r5:sim-serve:--host={host}", (*SERVE, "--host", host), ("--host",))


CATALOGS: dict[str, str | bytes] = {
    "models-a-list": "models: [1, 2]\n",
    "gpus-a-number": "gpus: 7\n",
    "binary": b"\xff\xfe\x00\x89PNG",
    "top-level-list": "- 1\n- 2\n",
    "entry-a-number": "models:\n  foo: 5\n",
}


def catalog_cases() -> Iterator[Case]:
    estimate = ("sim", "estimate", *SIM_POINT, "--concurrency", "1")
    for name, body in CATALOGS.items():
        yield Case(f"r5:catalog:{name}", (*estimate, "--catalog", "{tmp}/c.yaml"), ("c.yaml",),
                   files={"c.yaml": body})  # fmt: skip


def round5_cases() -> Iterator[Case]:
    yield from resume_cases()
    yield from number_cases()
    yield from host_cases()
    yield from catalog_cases()
