"""The bad-input corpus: every case is one command line plus, optionally, one broken file.

Cases are generated from small tables: mutations of the example tree's YAML files (text
level and value level), bad values for each command's options, broken result files, and
broken catalogs. Each case says which exit codes are acceptable and which words the message
must contain to say where the problem is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MASTER = "configs/nvidia-master.yaml"
RUNNERS = "configs/runners.yaml"
CLUSTER = "clusters/h200-nv.yaml"
CHANGELOG = "perf-changelog.yaml"
RECIPE = next(
    str(p.relative_to(EXAMPLES))
    for p in sorted((EXAMPLES / "benchmarks").rglob("*.yaml"))
    if "broken" not in p.parts
)
TREE_FILES = (MASTER, RUNNERS, CLUSTER, CHANGELOG, RECIPE)

BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]\n"
    for p, n in zip("abcdefghi", "bcdefghij", strict=True)
)


@dataclass(frozen=True)
class Case:
    """One bad input. `args` may hold `{tree}` and `{tmp}`; `files` are written under tmp."""

    id: str
    args: tuple[str, ...]
    where: tuple[str, ...]  # at least one must appear in the output
    codes: frozenset[int] = frozenset({2})
    tree: bool = False  # copy the example tree into {tree} first
    files: dict[str, str | bytes] = field(default_factory=dict)  # relative to {tmp}
    links: dict[str, str] = field(default_factory=dict)  # symlinks under {tmp}: name -> target
    never: tuple[str, ...] = ()  # words the output must not hold (a wrong cause blamed)


# -- YAML text mutations --------------------------------------------------------------------
class MutationMissed(AssertionError):
    """A value mutation found nothing to change in its file: the case would test something
    else than its name says (the corpus fails to build rather than test that silently)."""


@dataclass(frozen=True)
class Edit:
    """Rewrite the first match of `pattern` (multi-line) with `repl`. The result must still
    be YAML, so that the case tests the value it changed, not the syntax around it."""

    pattern: str
    repl: str

    def apply(self, rel: str, text: str) -> str:
        out, n = re.subn(self.pattern, self.repl, text, count=1, flags=re.M)
        if not n or out == text:
            raise MutationMissed(f"{rel}: {self.pattern!r} finds nothing to change")
        try:
            yaml.load(out, Loader=yaml.BaseLoader)  # every scalar as text: 5000 digits too
        except yaml.YAMLError as exc:
            raise MutationMissed(f"{rel}: {self.repl!r} leaves no YAML: {exc}") from exc
        return out


Mutation = Callable[[str, str], str | bytes]  # (file relative to the tree, its text)


def _edits(default: Edit, per_file: dict[str, Edit] | None = None) -> Mutation:
    """A value mutation: `default`, or the edit `per_file` gives for a file whose values
    the default pattern would miss (runners.yaml's labels, the changelog's URL and text)."""

    def change(rel: str, text: str) -> str:
        return (per_file or {}).get(rel, default).apply(rel, text)

    return change


INT = r"(: )(\d+)\b"  # the first integer value
WORD = r"(: )([A-Za-z][\w./-]+)$"  # the first one-word text value
RUNNER_LABEL = r"^(labels:\n  )[\w.:-]+:"  # the first runner label of runners.yaml
PR_LINK = r"^(  pr-link: )\S+$"  # the first changelog entry's pull request URL
DESCRIPTION = r'^(    - )"[^"\n]*"$'  # the first line of the first entry's description


def _changelog_number(value: str) -> Edit:
    # A changelog entry's one number is `eval-min-prefill-ep` (an int >= 1); the example
    # changelog sets none, so the bad number goes in as that key of the first entry.
    return Edit(r"^(  pr-link: .*)$", rf"\1\n  eval-min-prefill-ep: {value}")


HUGE = "9" * 5000
TEXT_MUTATIONS: dict[str, Mutation] = {
    "empty": lambda rel, t: "",
    "truncated": lambda rel, t: t[: len(t) // 2] + "\n  - [unclosed\n",
    "tab-indent": lambda rel, t: t.replace("\n  ", "\n\t", 3),
    "duplicate-key": _edits(Edit(r"^(\s*)(\w[\w-]*): (.+)$", r"\1\2: \3\n\1\2: \3")),
    "huge-int": _edits(Edit(INT, rf"\g<1>{HUGE}"), {CHANGELOG: _changelog_number(HUGE)}),
    "alias-bomb": lambda rel, t: BOMB,
    "list-root": lambda rel, t: "- just\n- a list\n",
    "scalar-root": lambda rel, t: "just a string\n",
    "binary": lambda rel, t: b"\x00\xff\xfe\x00garbage\x89PNG",
    "bad-utf8": lambda rel, t: t.encode()[:40] + b"\xc3\x28\xa0\xa1\n",
    "markup": _edits(
        Edit(WORD, r"\1'[/][bold]x[/]'"),
        {
            # a master's first word is its model, which InferenceX's generator takes as any
            # text (sweep runs it; check warns, IB153); `multinode` is a true/false both read
            MASTER: Edit(r"^(  multinode: )\S+$", r"\1'[/][bold]x[/]'"),
            RUNNERS: Edit(RUNNER_LABEL, r"\1'[/][bold]x[/]':"),
            CHANGELOG: Edit(PR_LINK, r"\1'[/][bold]x[/]'"),
        },
    ),
    "negative": _edits(Edit(INT, r"\g<1>-7"), {CHANGELOG: _changelog_number("-7")}),
    "string-for-int": _edits(Edit(INT, r"\1abc"), {CHANGELOG: _changelog_number("abc")}),
    "float-for-int": _edits(Edit(INT, r"\g<1>1.5"), {CHANGELOG: _changelog_number("1.5")}),
    # the first value outside a comment (a `key: text` inside a comment is no value)
    "null-value": _edits(Edit(r"^([^#\n]*?: )(\S.*)$", r"\1null")),
    "deep-nesting": lambda rel, t: "x: " + "[" * 150 + "]" * 150 + "\n",
    "recursive-anchor": lambda rel, t: "a: &a [1, *a]\n",
    # a key no schema knows, beside the first well-known key of the file
    "unknown-key": _edits(
        Edit(r"^(\s*)(image|gpu|name|labels|description):(?= |$)", r"\1bogus-key: 1\n\1\2:")
    ),
    "bool-for-list": _edits(
        Edit(r"(: )\[[^\]\n]*\]", r"\1yes"),
        # a recipe's list is its concurrencies ("2048", "4x8x16" or [4, 8, 16])
        {RECIPE: Edit(r"^(\s+concurrencies: ).+$", r"\1yes")},
    ),
    "control-chars": _edits(
        Edit(WORD, r'\1"a\\x07\\x1bb"'),
        {
            RUNNERS: Edit(RUNNER_LABEL, r'\1"a\\x07\\x1bb":'),
            CHANGELOG: Edit(DESCRIPTION, r'\1"a\\x07\\x1bb"'),
        },
    ),
}


def tree_cases() -> Iterator[Case]:
    for rel in TREE_FILES:
        name = Path(rel).stem
        text = (EXAMPLES / rel).read_text()
        for mutation, change in TEXT_MUTATIONS.items():
            broken = change(rel, text)
            if broken == text:
                raise MutationMissed(f"{rel}: {mutation} changes nothing")
            where = (Path(rel).name,)
            # check: a broken file is bad input (2) or a finding naming it (1)
            codes = frozenset({1, 2})
            if rel == RECIPE and mutation == "duplicate-key":
                # valid input: a recipe key written twice with the same value reads the same
                # either way (srtctl keeps the later one), so check warns (IB210, both lines
                # and a fix) and exits 0 unless --strict; a warning that vanished still fails
                codes = frozenset({0, 1})
            yield Case(
                f"check:{name}:{mutation}",
                ("check", "{tree}"),
                where,
                codes,
                tree=True,
                files={f"tree/{rel}": broken},
            )
            if rel in (MASTER, RUNNERS, CLUSTER):  # what sweep reads (recipes it does not)
                yield Case(
                    f"sweep:{name}:{mutation}",
                    ("sweep", "--root", "{tree}", "--format", "json"),
                    where,
                    tree=True,
                    files={f"tree/{rel}": broken},
                )
            if rel == CLUSTER:
                yield Case(
                    f"clusters-import:{name}:{mutation}",
                    (
                        "plan",
                        "llama3.1-8b-bf16-h200-vllm",
                        "--root",
                        "{tree}",
                        "--cluster",
                        "h200-nv",
                    ),
                    where,
                    tree=True,
                    files={f"tree/{rel}": broken},
                )


# -- option values: (command line before the option, option, bad values) -------------------
INT_BAD = ("abc", "-1", "0", "99999999999999999999999", "", "1e3", "4.5", "[/]")
TREE_CMDS = {
    "sweep": ("sweep", "--root", "{tree}"),
    "plan": ("plan", "llama3.1-8b-bf16-h200-vllm", "--root", "{tree}"),
    "run-dry": ("run", "--root", "{tree}", "--dry-run", "--runs-dir", "{tmp}/runs"),
}
OPTION_CASES: list[tuple[str, tuple[str, ...], str, tuple[str, ...]]] = [
    # (id, base args, option, bad values)
    *[(f"{k}:min-conc", v, "--min-concurrency", INT_BAD) for k, v in TREE_CMDS.items()],
    *[(f"{k}:max-conc", v, "--max-concurrency", INT_BAD) for k, v in TREE_CMDS.items()],
    *[(f"{k}:max-tp", v, "--max-tp", INT_BAD) for k, v in TREE_CMDS.items()],
    *[
        (f"{k}:seq-lens", v, "--seq-lens", ("2k", "1k1k1k", "0k1k", "-1_5", "[/]"))
        for k, v in TREE_CMDS.items()
    ],
    ("sweep:step-size", TREE_CMDS["sweep"], "--step-size", ("1", "0", "-2", "abc")),
    ("sweep:format", TREE_CMDS["sweep"], "--format", ("xml", "", "[/]")),
    ("sweep:scenario", TREE_CMDS["sweep"], "--scenario-type", ("agentic", "fixed")),
    ("plan:engine", TREE_CMDS["plan"], "--engine", ("tgi", "", "VLLM2")),
    ("plan:backend", TREE_CMDS["plan"], "--backend", ("k8s", "")),
    ("plan:cluster", TREE_CMDS["plan"], "--cluster", ("nope", "[/]")),
    ("run:retries", TREE_CMDS["run-dry"], "--retries", ("-1", "abc")),
    ("run:max-jobs", TREE_CMDS["run-dry"], "--max-jobs", ("0", "-3", "abc")),
    ("run:repeats", TREE_CMDS["run-dry"], "--repeats", ("0", "-1", "abc")),
    (
        "run:resume",
        ("run", "--root", "{tree}", "--runs-dir", "{tmp}/runs"),
        "--resume",
        ("nope", "../../etc", "[/]"),
    ),
    ("check:format", ("check", "{tree}"), "--format", ("xml", "[/]")),
    ("check:select", ("check", "{tree}"), "--select", ("IB999", "nope")),
    ("check:base", ("check", "{tree}"), "--base", ("no-such-rev-xyz",)),
    (
        "results-list:limit",
        ("results", "list", "--db", "sqlite:///{tmp}/r.sqlite"),
        "--limit",
        ("abc", "-1"),
    ),
    (
        "results-list:format",
        ("results", "list", "--db", "sqlite:///{tmp}/r.sqlite"),
        "--format",
        ("xml",),
    ),
    (
        "results-list:db",
        ("results", "list"),
        "--db",
        ("nosuchdb://x", "sqlite:///{tmp}/no/such/dir/r.sqlite", "[/]"),
    ),
    (
        "results-show:id",
        ("results", "show", "--db", "sqlite:///{tmp}/r.sqlite"),
        "",
        ("abc", "99999999999999999999999", "0"),
    ),
    (
        "results-compare:threshold",
        ("results", "compare", "a", "b", "--db", "sqlite:///{tmp}/r.sqlite"),
        "--threshold",
        ("abc", "-0.5", "nan"),
    ),
    (
        "results-compare:confidence",
        ("results", "compare", "a", "b", "--db", "sqlite:///{tmp}/r.sqlite"),
        "--confidence",
        ("abc", "1.5", "0.2", "nan"),
    ),
    (
        "results-compare:min-samples",
        ("results", "compare", "a", "b", "--db", "sqlite:///{tmp}/r.sqlite"),
        "--min-samples",
        ("abc", "0", "-5"),
    ),
    (
        "results-compare:resamples",
        ("results", "compare", "a", "b", "--db", "sqlite:///{tmp}/r.sqlite"),
        "--resamples",
        ("abc", "5", "100000000"),
    ),
    (
        "report:threshold",
        ("report", "--db", "sqlite:///{tmp}/r.sqlite", "--output-dir", "{tmp}/rep"),
        "--threshold",
        ("abc", "-1"),
    ),
    (
        "report:prices",
        ("report", "--db", "sqlite:///{tmp}/r.sqlite", "--output-dir", "{tmp}/rep"),
        "--prices",
        ("{tmp}/nope.yaml",),
    ),
    (
        "sim:concurrency",
        (
            "sim",
            "estimate",
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--gpu",
            "h100",
            "--isl",
            "128",
            "--osl",
            "16",
        ),
        "--concurrency",
        ("abc", "0", "4,,8", "4x-8", "99999999999999999999", "[/]"),
    ),
    (
        "sim:gpu",
        (
            "sim",
            "estimate",
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--isl",
            "128",
            "--osl",
            "16",
            "--concurrency",
            "1",
        ),
        "--gpu",
        ("h999", "[/]", ""),
    ),
    (
        "sim:model",
        ("sim", "estimate", "--gpu", "h100", "--isl", "128", "--osl", "16", "--concurrency", "1"),
        "--model",
        ("no/such-model", "[/]"),
    ),
    (
        "sim:isl",
        (
            "sim",
            "estimate",
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--gpu",
            "h100",
            "--osl",
            "16",
            "--concurrency",
            "1",
        ),
        "--isl",
        ("abc", "0", "-5"),
    ),
    (
        "sim:tp",
        (
            "sim",
            "estimate",
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--gpu",
            "h100",
            "--isl",
            "128",
            "--osl",
            "16",
            "--concurrency",
            "1",
        ),
        "--tp",
        ("0", "-1", "3", "abc"),
    ),
    (
        "sim:recipe",
        ("sim", "estimate", "--concurrency", "1"),
        "--recipe",
        ("{tmp}/nope.yaml", "{tmp}/nope.yaml:sel", "[/]"),
    ),
    ("sim:job", ("sim", "estimate"), "--job", ("{tmp}/nope.json", "[/]")),
    (
        "bench:base-url",
        ("bench", "--model", "m", "--isl", "8", "--osl", "8", "--num-prompts", "1"),
        "--base-url",
        ("notaurl", "ftp://x", "http://", "[/]"),
    ),
    (
        "bench:repeats",
        ("bench", "--base-url", "http://127.0.0.1:9", "--model", "m", "--isl", "8", "--osl", "8"),
        "--repeats",
        ("abc", "0", "-2"),
    ),
    (
        "bench:num-prompts",
        ("bench", "--base-url", "http://127.0.0.1:9", "--model", "m", "--isl", "8", "--osl", "8"),
        "--num-prompts",
        ("abc", "-1", "0"),
    ),
    (
        "bench:concurrency",
        (
            "bench",
            "--base-url",
            "http://127.0.0.1:9",
            "--model",
            "m",
            "--isl",
            "8",
            "--osl",
            "8",
            "--num-prompts",
            "1",
        ),
        "--max-concurrency",
        ("abc", "0", "-4"),
    ),
    (
        "bench:request-rate",
        (
            "bench",
            "--base-url",
            "http://127.0.0.1:9",
            "--model",
            "m",
            "--isl",
            "8",
            "--osl",
            "8",
            "--num-prompts",
            "1",
        ),
        "--request-rate",
        ("abc", "-1", "0"),
    ),
    (
        "bench:slo",
        (
            "bench",
            "--base-url",
            "http://127.0.0.1:9",
            "--model",
            "m",
            "--isl",
            "8",
            "--osl",
            "8",
            "--num-prompts",
            "1",
        ),
        "--slo",
        ("ttft", "foo=1", "ttft=abc"),
    ),
    ("bench:config", ("bench",), "--config", ("{tmp}/nope.yaml",)),
    ("eval:task", ("eval", "--endpoint", "http://127.0.0.1:9"), "--task", ("nosuchtask", "[/]")),
    ("traces:sessions", ("traces", "synth", "{tmp}/t.jsonl"), "--sessions", ("abc", "0", "-1")),
    (
        "clusters-import:cluster",
        ("clusters", "import", "--root", "{tree}", "--output", "{tmp}/out"),
        "--cluster",
        ("nope",),
    ),
]


def option_cases() -> Iterator[Case]:
    for case_id, base, option, values in OPTION_CASES:
        tree = any("{tree}" in a for a in base)
        for value in values:
            args = (*base, option, value) if option else (*base, value)
            # the message names the option, or the value it refused (a path, a name)
            where = tuple(w for w in (option, value.replace("{tmp}/", ""), "Usage") if w)
            yield Case(f"{case_id}={value!r}", args, where, tree=tree)


# -- result files for `results ingest` --------------------------------------------------------
def _result() -> dict[str, object]:
    import random

    from harness.synthetic import SyntheticConfig, sa_bench_result

    return sa_bench_result(SyntheticConfig(), 4, rng=random.Random(0))


RESULT_NAME = "dsr1_1k1k_fp8_vllm_tp8-ep1-dpafalse_disagg-false_spec-none_conc4_h200-a_0.json"


def result_cases() -> Iterator[Case]:
    good = _result()
    mutations: dict[str, str | bytes] = {
        "not-json": "{not json",
        "empty": "",
        "list": "[1, 2, 3]",
        "string": '"hello"',
        "binary": b"\x00\xff\x89PNG",
        "huge-int": json.dumps({**good, "completed": 10**30}),
        "nan": json.dumps({**good, "median_ttft_ms": "NaN"}).replace('"NaN"', "NaN"),
        "negative": json.dumps({**good, "completed": -5}),
        "wrong-type": json.dumps({**good, "median_ttft_ms": "fast"}),
        "missing": json.dumps({k: v for k, v in good.items() if k not in ("completed",)}),
        "deep": "[" * 5000 + "]" * 5000,
        "null": "null",
    }
    for name, body in mutations.items():
        yield Case(
            f"ingest:{name}",
            ("results", "ingest", "{tmp}/in/" + RESULT_NAME, "--db", "sqlite:///{tmp}/r.sqlite"),
            (RESULT_NAME,),
            files={"in/" + RESULT_NAME: body},
        )
    # A served model name is free text ("[/][bold]" included): it is valid input, stored and
    # printed literally (tests/results/test_cli.py), so it has no case here. A file name is
    # at most 255 bytes, so the longest concurrency a file can carry has about 240 digits.
    for conc in ("9" * 20, "0", "00", "1" * 240):
        rel = f"in/runs/r1/job/results/conc{conc}.json"
        yield Case(
            f"ingest:conc{conc[:25]}",
            ("results", "ingest", "{tmp}/in/runs", "--db", "sqlite:///{tmp}/r.sqlite"),
            (f"conc{conc[:25]}",),
            files={rel: json.dumps(good), "in/runs/r1/job/job.json": "{}"},
        )
    yield Case(
        "ingest:missing-path",
        ("results", "ingest", "{tmp}/no/such", "--db", "sqlite:///{tmp}/r.sqlite"),
        ("no/such",),
    )
    for identity in ("isl=abc", "nokey", "conc=99999999999999999999", "[/]=1"):
        yield Case(
            f"ingest:identity={identity}",
            (
                "results",
                "ingest",
                "{tmp}/in/x.json",
                "--identity",
                identity,
                "--db",
                "sqlite:///{tmp}/r.sqlite",
            ),
            ("--identity", "identity", "x.json"),
            files={"in/x.json": json.dumps(good)},
        )


# -- output options: what a file or folder option is given instead of a writable path ------
SIM_POINT = ("--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--isl", "64",
             "--osl", "8", "--num-prompts", "4")  # fmt: skip
BENCH = ("bench", "--base-url", "http://127.0.0.1:9", "--model", "m", "--isl", "8", "--osl", "4")
FILE_OUTPUTS: list[tuple[str, tuple[str, ...], str]] = [
    # (id, command line before the option, the option)
    ("sweep", ("sweep", "--root", "{tree}", "--format", "json"), "--output"),
    ("traces-synth", ("traces", "synth", "--sessions", "2"), "--output"),
    ("sim-calibrate", ("sim", "calibrate", "{tmp}/points.yaml"), "--output"),
    ("sim-estimate", ("sim", "estimate", *SIM_POINT, "--concurrency", "2"), "--output"),
    ("sim-serve", ("sim", "serve", "--port", "0", *SIM_POINT), "--record-sends"),
    (
        "results-export",
        ("results", "export", "--format", "json", "--db", "sqlite:///{tmp}/r.sqlite"),
        "--output",
    ),
    ("bench", (*BENCH, "--num-prompts", "1"), "--output"),
    ("bench-detail", (*BENCH, "--num-prompts", "1"), "--detail-file"),
    (
        "replay",
        ("replay", "--base-url", "http://127.0.0.1:9", "--model", "m", "--concurrency", "1"),
        "--output",
    ),
    ("eval", ("eval", "--base-url", "http://127.0.0.1:9", "--model", "m"), "--output"),
]
FOLDER_OUTPUTS: list[tuple[str, tuple[str, ...], str]] = [
    ("bench", (*BENCH, "--num-prompts", "1"), "--output-dir"),
    ("sim-estimate", ("sim", "estimate", *SIM_POINT, "--concurrency", "2"), "--output-dir"),
    ("eval", ("eval", "--base-url", "http://127.0.0.1:9", "--model", "m"), "--output-dir"),
    ("report", ("report", "--db", "sqlite:///{tmp}/r.sqlite"), "--output-dir"),
    ("clusters-import", ("clusters", "import", "--root", "{tree}"), "--output-dir"),
    ("run", ("run", "--root", "{tree}", "--dry-run"), "--runs-dir"),
    ("demo", ("demo",), "--runs-dir"),
]
# a folder for a file, no name, a path through a file, a missing device (never created)
FILE_OUTPUT_BAD = ("{tmp}", "", "{tmp}/a-file/out.json", "/dev/no-such-device-ib")
FOLDER_OUTPUT_BAD = ("", "{tmp}/a-file", "/dev/null", "{tmp}/a-file/sub")


def output_cases() -> Iterator[Case]:
    files: dict[str, str | bytes] = {"a-file": "mine\n"}
    for case_id, base, option in FILE_OUTPUTS:
        tree = "{tree}" in base
        for value in FILE_OUTPUT_BAD:
            yield Case(f"output:{case_id}{option}={value!r}", (*base, option, value),
                       (option,), tree=tree, files=files)  # fmt: skip
    for case_id, base, option in FOLDER_OUTPUTS:
        tree = "{tree}" in base
        for value in FOLDER_OUTPUT_BAD:
            yield Case(f"output-dir:{case_id}{option}={value!r}", (*base, option, value),
                       (option,), tree=tree, files=files)  # fmt: skip
    # the write itself fails (ENOSPC): one line naming the file, a fix, exit 2
    for case_id, base, option in FILE_OUTPUTS[:2]:
        yield Case(f"output:{case_id}{option}=/dev/full", (*base, option, "/dev/full"),
                   ("/dev/full",), tree="{tree}" in base)  # fmt: skip
    yield Case(
        "output:results-export=/dev/full",
        ("results", "export", "--format", "csv", "--db", "sqlite:///{tmp}/r.sqlite",
         "--output", "/dev/full"),
        ("/dev/full",),
        files={"r.sqlite": b""},
    )  # fmt: skip
    # names that become files in --result-dir stay there
    for name in ("../x", "a/b", "", "..", "."):
        yield Case(f"output:bench--result-filename={name!r}",
                   (*BENCH, "--num-prompts", "1", "--result-dir", "{tmp}/d",
                    "--result-filename", name), ("--result-filename",))  # fmt: skip
    yield Case("output:bench--label='../x'",
               (*BENCH, "--num-prompts", "1", "--save-result", "--label", "../x"),
               ("--label",))  # fmt: skip
    # a stream takes one point: per-point names beside /dev/stdout would be files in /dev
    yield Case("output:bench-stream-2-points",
               (*BENCH, "--num-prompts", "1", "--concurrency", "1,2", "--output", "-"),
               ("--output",))  # fmt: skip
    yield Case("output:sim-estimate-stream-2-points",
               ("sim", "estimate", *SIM_POINT, "--concurrency", "2,4", "--output",
                "/dev/stdout"), ("--output",))  # fmt: skip


# -- inputs that are no regular file: refused by name, unread (a device never ends) ---------
INPUT_READERS: list[tuple[str, tuple[str, ...], str]] = [
    # (id, command line before the input, the option naming it ("" for an argument))
    ("bench-config", ("bench", "--model", "m"), "--config"),
    (
        "bench-dataset",
        (*BENCH, "--num-prompts", "1", "--concurrency", "1", "--dataset-name", "custom"),
        "--dataset",
    ),  # fmt: skip
    ("sim-calibration", ("sim", "estimate", *SIM_POINT, "--concurrency", "1"), "--calibration"),
    ("sim-job", ("sim", "estimate"), "--job"),
    ("sim-recipe", ("sim", "estimate", "--concurrency", "1"), "--recipe"),
    ("sim-calibrate-points", ("sim", "calibrate", "-o", "{tmp}/c.yaml"), ""),
    ("results-ingest", ("results", "ingest", "--db", "sqlite:///{tmp}/r.sqlite"), ""),
    (
        "replay-trace",
        ("replay", "--base-url", "http://127.0.0.1:9", "--model", "m", "--concurrency", "1"),
        "--trace",
    ),
    ("traces-show", ("traces", "show"), "--trace"),
    ("report-prices", ("report", "--db", "sqlite:///{tmp}/r.sqlite"), "--prices"),
    ("check-root", ("check",), ""),
    ("sweep-root", ("sweep",), "--root"),
]
FOLDER_INPUTS = {"results-ingest", "replay-trace", "traces-show", "check-root", "sweep-root"}


def input_cases() -> Iterator[Case]:
    for case_id, base, option in INPUT_READERS:
        values = ["/dev/zero", "/dev/null"]
        if case_id not in FOLDER_INPUTS:
            values.append("{tmp}")
        for value in values:
            args = (*base, option, value) if option else (*base, value)
            where = ("is a directory",) if value == "{tmp}" else (value,)
            yield Case(f"input:{case_id}={value!r}", args, where)


# -- numbers past the documented bounds, and past 64 bits -------------------------------------
BOUNDED: list[tuple[str, tuple[str, ...], str, tuple[str, ...]]] = [
    # (id, command line before the option, option, values past its bound)
    ("bench", (*BENCH[:-4], "--concurrency", "1"), "--num-prompts", ("1000001", "1000000000")),
    ("bench", (*BENCH[:-2], "--num-prompts", "1"), "--isl", ("10000001", "18446744073709551616")),
    ("bench", (*BENCH[:-2], "--num-prompts", "1"), "--random-input-len", ("1000000000",)),
    ("bench", (*BENCH[:-4], "--num-prompts", "1", "--isl", "8"), "--osl", ("1000000000",)),
    ("bench", (*BENCH, "--num-prompts", "1"), "--concurrency",
     ("10000001", "4,18446744073709551616")),
    ("bench", (*BENCH, "--num-prompts", "1"), "--workers", ("1025", "1000000")),
    ("bench", (*BENCH, "--num-prompts", "1"), "--warmups", ("1000000000",)),
    ("sim-estimate", ("sim", "estimate", *SIM_POINT[:-2], "--concurrency", "1"), "--num-prompts",
     ("1000001", "1000000000")),
    ("sim-estimate", ("sim", "estimate", *SIM_POINT[:4], "--osl", "8", "--concurrency", "1"),
     "--isl", ("1000000000",)),
    ("traces-synth", ("traces", "synth", "-o", "{tmp}/t.jsonl"), "--sessions",
     ("100001", "100000000")),
    ("traces-synth", ("traces", "synth", "-o", "{tmp}/t.jsonl"), "--spec",
     ("sessions=100000000", "sessions=100000,turns=1000", "output=1000000000",
      "max_turns=100000")),
    ("replay", ("replay", "--base-url", "http://127.0.0.1:9", "--model", "m", "--concurrency", "1",
                "--synth", "sessions=1"), "--sessions", ("100001",)),
    ("replay", ("replay", "--base-url", "http://127.0.0.1:9", "--model", "m",
                "--synth", "sessions=1"), "--concurrency", ("10000001",)),
]  # fmt: skip
WIDE_INTS = {
    "conc-list-2**64": (r"conc-list: \[4, 16, 64\]", "conc-list: [4, 18446744073709551616]"),
    "conc-end-2**63": (r"conc-end: 64\b", "conc-end: 9223372036854775808"),
    "conc-end-1e7+1": (r"conc-end: 64\b", "conc-end: 10000001"),
    "conc-start-2**64": (r"conc-start: 4\b", "conc-start: 18446744073709551616"),
    "tp-2**63": (r"tp: 4\b", "tp: 9223372036854775808"),
    "isl-2**64": (r"isl: 1024\b", "isl: 18446744073709551616"),
}


def bound_cases() -> Iterator[Case]:
    for case_id, base, option, values in BOUNDED:
        for value in values:
            where = (option, "--synth") if option == "--spec" else (option,)
            yield Case(f"bound:{case_id}{option}={value}", (*base, option, value), where)
    text = (EXAMPLES / MASTER).read_text()
    for name, (pattern, repl) in WIDE_INTS.items():
        broken = Edit(pattern, repl).apply(MASTER, text)
        files: dict[str, str | bytes] = {f"tree/{MASTER}": broken}
        # check: a finding or an error naming the file; sweep: an error naming it (never rc 70)
        yield Case(f"check:wide-int:{name}", ("check", "{tree}"), ("nvidia-master.yaml",),
                   frozenset({1, 2}), tree=True, files=files)  # fmt: skip
        yield Case(f"sweep:wide-int:{name}", ("sweep", "--root", "{tree}", "--format", "json"),
                   ("nvidia-master.yaml",), tree=True, files=files)  # fmt: skip


def all_cases() -> list[Case]:
    return [
        *tree_cases(),
        *option_cases(),
        *result_cases(),
        *output_cases(),
        *input_cases(),
        *bound_cases(),
        *round3_cases(),
        *round4_cases(),
        *round5_cases(),
    ]


from .corpus_round3 import round3_cases  # noqa: E402 - it imports this module's tables
from .corpus_round4 import round4_cases  # noqa: E402
from .corpus_round5 import round5_cases  # noqa: E402
