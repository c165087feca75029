"""Corpus cases of issue 27's second half: options of `sim serve`, `eval`, `replay` and `bench`
validated before use and blamed by name, damaged run directories on `--resume`, and paths in
`inferbench.toml` that would leave the tree."""

from __future__ import annotations

from collections.abc import Iterator

from .corpus import BENCH, Case

SERVE = ("sim", "serve", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100",
         "--isl", "64", "--osl", "8")  # fmt: skip
EVAL = ("eval", "--base-url", "http://127.0.0.1:9", "--model", "m")
REPLAY = ("replay", "--base-url", "http://127.0.0.1:9", "--model", "m", "--concurrency", "1",
          "--synth", "sessions=1", "--sessions", "1")  # fmt: skip

# (id, command line before the option, option, bad values)
OPTIONS: list[tuple[str, tuple[str, ...], str, tuple[str, ...]]] = [
    ("sim-serve", SERVE, "--port", ("70000", "65536", "-1")),
    ("sim-serve", SERVE, "--fault-error-rate", ("2", "-0.5", "nan")),
    ("sim-serve", SERVE, "--fault-stall-rate", ("2", "-0.5", "nan")),
    ("sim-serve", SERVE, "--fault-drop-rate", ("2", "-0.5", "nan")),
    ("sim-serve", SERVE, "--slow-start", ("-1",)),
    ("sim-serve", SERVE, "--crash-after", ("0", "-3")),
    ("eval", EVAL, "--limit", ("-1", "0")),
    ("eval", EVAL, "--concurrency", ("0", "-5")),
    ("eval", EVAL, "--context-length", ("0", "-1")),
    ("eval", EVAL, "--num-fewshot", ("-1",)),
    ("eval", EVAL, "--timeout", ("0", "-1", "nan")),
    ("replay", REPLAY, "--duration", ("-1", "0")),
    ("replay", REPLAY, "--max-model-len", ("1", "2")),
    ("replay", REPLAY, "--max-idle", ("-1",)),
    ("replay", REPLAY, "--delay-scale", ("-1",)),
    ("replay", REPLAY, "--request-timeout", ("0", "-1")),
    ("replay", REPLAY, "--max-failure-rate", ("2", "-1")),
    ("bench", (*BENCH, "--num-prompts", "1"), "--workers", ("0", "-1")),
    ("bench", (*BENCH, "--num-prompts", "1"), "--request-timeout", ("0", "-1", "nan")),
    ("bench", (*BENCH, "--num-prompts", "1"), "--max-failure-rate", ("2",)),
]


def option_cases() -> Iterator[Case]:
    for case_id, base, option, values in OPTIONS:
        for value in values:
            yield Case(f"r3:{case_id}{option}={value}", (*base, option, value), (option,))


# -- run --resume of a damaged run directory ---------------------------------------------------
RUN_ID = "20260101-000000-abcd"
RUN = f"runs/{RUN_ID}"
RUN_JSON = (
    f'{{"run_id": "{RUN_ID}", "created": "2026-01-01T00:00:00Z", "backend": "local", '
    '"engine": "sim", "root": "tree", "filters": {}, "version": "0.1.0", "host": "h"}\n'
)
STATE_JSON = f'{{"run_id": "{RUN_ID}", "jobs": {{}}}}\n'
DAMAGE: dict[str, dict[str, str | bytes]] = {
    "run.json": {
        "truncated": RUN_JSON[: len(RUN_JSON) // 2],
        "empty": "",
        "list": "[]",
        "null": "null",
        "binary": b"\xff\xfe\x00garbage",
        "wrong-type": f'{{"run_id": 1, "backend": "{RUN_ID}"}}',
        "a-folder": "",
    },
    "state.json": {
        "truncated": STATE_JSON[:20],
        "empty": "",
        "list": "[]",
        "no-run-id": "{}",
        "binary": b"\xff\xfe\x00garbage",
        "wrong-type": f'{{"run_id": "{RUN_ID}", "jobs": 5}}',
        "a-folder": "",
    },
    "jobs.json": {
        "garbage": "garbage",
        "empty": "",
        "ints": "[1, 2]",
        "object": '{"a": 1}',
        "no-concurrencies": '[{"job": {}}]',
        "binary": b"\xff\xfe\x00garbage",
        "a-folder": "",
    },
    "run.lock": {"a-folder": ""},
}


def _run_files(name: str, kind: str, body: str | bytes) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        f"{RUN}/run.json": RUN_JSON,
        f"{RUN}/state.json": STATE_JSON,
        f"{RUN}/jobs.json": "[]\n",
    }
    if kind == "a-folder":
        files.pop(f"{RUN}/{name}", None)
        files[f"{RUN}/{name}/x"] = ""  # the name is a folder
    else:
        files[f"{RUN}/{name}"] = body
    return files


def resume_cases() -> Iterator[Case]:
    for name, kinds in DAMAGE.items():
        for kind, body in kinds.items():
            yield Case(
                f"r3:resume:{name}={kind}",
                ("run", "--resume", RUN_ID, "--runs-dir", "{tmp}/runs"),
                (name, "no run"),
                tree=True,  # run.json's root: the tree the resume re-reads
                files=_run_files(name, kind, body),
            )


# -- inferbench.toml paths outside the tree ----------------------------------------------------
LIST_KEYS = ("masters", "deprecated", "launchers", "clusters")
TEXT_KEYS = ("runners", "changelog", "recipes")
OUTSIDE = ("/etc/*", "../x/*.yaml", "~/x", "")


def toml_cases() -> Iterator[Case]:
    for key in (*LIST_KEYS, *TEXT_KEYS):
        for value in OUTSIDE:
            line = f'{key} = ["{value}"]' if key in LIST_KEYS else f'{key} = "{value}"'
            files: dict[str, str | bytes] = {"tree/inferbench.toml": line + "\n"}
            yield Case(f"r3:toml:{key}={value!r}", ("check", "{tree}"), ("inferbench.toml",),
                       frozenset({1, 2}), tree=True, files=files)  # fmt: skip
            if key == "masters":
                yield Case(f"r3:toml-sweep:{key}={value!r}",
                           ("sweep", "--root", "{tree}", "--format", "json"),
                           ("inferbench.toml",), tree=True, files=files)  # fmt: skip


def round3_cases() -> Iterator[Case]:
    yield from option_cases()
    yield from resume_cases()
    yield from toml_cases()
