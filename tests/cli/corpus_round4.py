"""Corpus cases of issue 27's last part: inputs that were accepted silently, losing or
falsifying data (in-memory stores, a result filed under another concurrency, YAML tags,
impossible parallelism, optional files that cannot be read, filters that select nothing,
line breaks and commas in catalog values), and messages that blamed the wrong cause."""

from __future__ import annotations

import json
from collections.abc import Iterator

from .corpus import (
    BENCH,
    CHANGELOG,
    CLUSTER,
    EXAMPLES,
    MASTER,
    PR_LINK,
    RECIPE,
    RESULT_NAME,
    RUNNERS,
    TREE_CMDS,
    WORD,
    Case,
    Edit,
    _result,
)

DB = "sqlite:///{tmp}/r.sqlite"
SLURM_CLUSTER = "clusters/b200-dgxc.yaml"


# -- stores that keep nothing, stores that are no store --------------------------------------
def store_cases() -> Iterator[Case]:
    good = json.dumps(_result())
    files: dict[str, str | bytes] = {"in/" + RESULT_NAME: good}
    for url in ("sqlite://", "sqlite:///:memory:", "sqlite:///file:x?mode=memory&uri=true"):
        yield Case(f"r4:in-memory:ingest={url}", ("results", "ingest", "{tmp}/in", "--db", url),
                   ("in-memory",), files=files)  # fmt: skip
        yield Case(f"r4:in-memory:list={url}", ("results", "list", "--db", url), ("in-memory",))
        yield Case(f"r4:in-memory:export={url}",
                   ("results", "export", "--format", "json", "--output", "{tmp}/x.json",
                    "--db", url), ("in-memory",))  # fmt: skip
    # a file that is not a SQLite store (or a damaged one) is said to be so, not blamed on a
    # server, URL or password
    garbage: dict[str, bytes] = {
        "random": bytes(range(256)) * 20,
        "text": b"not a database at all\n" * 200,
        "bad-header": b"SQLite format 3\x00" + b"\xff" * 4080,
    }
    commands = {
        "list": ("results", "list", "--db", DB),
        "show": ("results", "show", "1", "--db", DB),
        "export": ("results", "export", "--format", "csv", "--output", "{tmp}/x.csv", "--db", DB),
        "ingest": ("results", "ingest", "{tmp}/in", "--db", DB),
        "report": ("report", "--db", DB, "--output", "{tmp}/rep"),
    }
    for kind, body in garbage.items():
        for name, args in commands.items():
            yield Case(f"r4:garbled-sqlite:{name}={kind}", args, ("no SQLite results store",),
                       files={"r.sqlite": body, "in/" + RESULT_NAME: good},
                       never=("server is running",))  # fmt: skip


# -- a result filed under a concurrency it was not measured at -------------------------------
def concurrency_cases() -> Iterator[Case]:
    good = json.dumps(_result())  # measured at concurrency 4
    for conc in ("999", "8", "16", "1"):
        yield Case(f"r4:conc-name:run-dir=conc{conc}",
                   ("results", "ingest", "{tmp}/in/runs", "--db", DB), ("conc" + conc,),
                   files={f"in/runs/r1/job/results/conc{conc}.json": good,
                          "in/runs/r1/job/job.json": "{}"})  # fmt: skip
        name = RESULT_NAME.replace("_conc4_", f"_conc{conc}_")
        yield Case(f"r4:conc-name:file=conc{conc}",
                   ("results", "ingest", "{tmp}/in/" + name, "--db", DB),
                   ("measured at concurrency 4",), files={"in/" + name: good})  # fmt: skip


# -- YAML tags InferenceX's loader refuses ---------------------------------------------------
TAGS = ("!env", "!include", "!!python/name:os.system", "!ENV", "!!omap")
TAG_EDITS = {
    MASTER: Edit(WORD, r"\1{tag} \2"),
    RUNNERS: Edit(r"^(labels:\n  [\w.:-]+: )(\[.*\])$", r"\1{tag} \2"),
    CLUSTER: Edit(WORD, r"\1{tag} \2"),
    CHANGELOG: Edit(PR_LINK, r"\1{tag} https://x/pull/1"),
    RECIPE: Edit(WORD, r"\1{tag} \2"),
}


def tag_cases() -> Iterator[Case]:
    for rel, edit in TAG_EDITS.items():
        text = (EXAMPLES / rel).read_text()
        name = rel.rsplit("/", 1)[-1]
        for tag in TAGS:
            broken = Edit(edit.pattern, edit.repl.replace("{tag}", tag)).apply(rel, text)
            files: dict[str, str | bytes] = {f"tree/{rel}": broken}
            yield Case(f"r4:tag:check:{name}={tag}", ("check", "{tree}"), (name,),
                       frozenset({1, 2}), tree=True, files=files)  # fmt: skip
            if rel in (MASTER, RUNNERS, CLUSTER):
                yield Case(f"r4:tag:sweep:{name}={tag}",
                           ("sweep", "--root", "{tree}", "--format", "json"), (name,),
                           tree=True, files=files)  # fmt: skip


# -- parallelism no engine starts -------------------------------------------------------------
EP_EDITS = {
    "single-node-tp8": (r"(\{tp: 8, ep: )8\b", r"\g<1>{ep}"),
    "single-node-tp2": (r"(\{tp: 2, ep: )2\b", r"\g<1>{ep}"),
    "multinode-prefill": (r"(prefill:\n\s+num-worker: 2\n\s+tp: 2\n\s+ep: )2\b", r"\g<1>{ep}"),
}


def ep_cases() -> Iterator[Case]:
    text = (EXAMPLES / MASTER).read_text()
    for where, (pattern, repl) in EP_EDITS.items():
        for ep in ("3", "5", "12"):
            if where != "single-node-tp8" and ep == "12":
                continue  # 12 is a multiple of 2: a valid dp-attention layout
            broken = Edit(pattern, repl.replace("{ep}", ep)).apply(MASTER, text)
            files: dict[str, str | bytes] = {f"tree/{MASTER}": broken}
            yield Case(f"r4:ep:check:{where}=ep{ep}", ("check", "{tree}"), ("nvidia-master",),
                       frozenset({1, 2}), tree=True, files=files)  # fmt: skip
            yield Case(f"r4:ep:sweep:{where}=ep{ep}",
                       ("sweep", "--root", "{tree}", "--format", "json"), ("nvidia-master",),
                       tree=True, files=files)  # fmt: skip


# -- optional tree files that exist but cannot be read -----------------------------------------
UNREADABLE = {
    "runners": RUNNERS,
    "changelog": CHANGELOG,
    "cluster": CLUSTER,
    "project-file": "inferbench.toml",
    "clusters-folder": "clusters",
}


def unreadable_cases() -> Iterator[Case]:
    # Run as root, a file without read permission is readable: a link loop and a link to
    # nothing stand for every file `Path.is_file` answers False for without it being absent.
    for name, rel in UNREADABLE.items():
        for kind, target in (("link-loop", rel.rsplit("/", 1)[-1]), ("dangling", "no-such")):
            links = {f"tree/{rel}": target}
            shown = rel.rsplit("/", 1)[-1]
            yield Case(f"r4:unreadable:check:{name}={kind}", ("check", "{tree}"), (shown,),
                       frozenset({1, 2}), tree=True, links=links)  # fmt: skip
            if name == "changelog":
                continue  # sweep reads it only with --changed-since
            yield Case(f"r4:unreadable:sweep:{name}={kind}",
                       ("sweep", "--root", "{tree}", "--format", "json"), (shown,),
                       tree=True, links=links)  # fmt: skip


# -- options that asked for something and got something else -----------------------------------
REPLAY = ("replay", "--base-url", "http://127.0.0.1:9", "--model", "m", "--lanes", "1",
          "--synth", "sessions=1", "--sessions", "1")  # fmt: skip
EMPTY_FILTERS = (  # each selects no job of the example tree
    ("--precision", "fp1"),
    ("--framework", "tgi"),
    ("--min-conc", "100000"),
    ("--model-prefix", "nope"),
    ("--conc", "3"),
    ("--config-keys", "gptoss-fp4-b200-trt", "--multi-node"),
    ("--precision", "bf16", "--framework", "sglang"),
    ("--model-prefix", "dsr1", "--max-tp", "1"),
)


def option_cases() -> Iterator[Case]:
    for root in ("{tmp}/missing", "{tmp}", "{tmp}/a-file", "/dev/null"):
        yield Case(f"r4:demo--root={root}", ("demo", "--root", root, "--runs-dir", "{tmp}/runs"),
                   ("--root",), files={"a-file": "x\n"})  # fmt: skip
    for var in ("NO_SUCH_VAR_IB27", "", "1BAD", "A B"):
        yield Case(
            f"r4:bench--api-key-env={var!r}",
            (*BENCH, "--num-prompts", "1", "--api-key-env", var),
            ("--api-key-env",),
        )
        yield Case(f"r4:replay--api-key-env={var!r}", (*REPLAY, "--api-key-env", var),
                   ("--api-key-env",))  # fmt: skip
    for fmt in ("csv", "json", "parquet"):
        for flag in ("--run", "--tag"):
            for evals in ((), ("--evals",)):
                yield Case(f"r4:export-nothing:{fmt}{flag}{''.join(evals)}",
                           ("results", "export", "--format", fmt, "--output", "{tmp}/x",
                            "--db", DB, flag, "nope", *evals),
                           (flag,), files={"r.sqlite": b""})  # fmt: skip
    for value in ("0", "-1", "nan", "inf", "1e9", "abc"):
        yield Case(f"r4:run--request-timeout={value}",
                   (*TREE_CMDS["run-dry"], "--request-timeout", value), ("--request-timeout",),
                   tree=True)  # fmt: skip
        yield Case(
            f"r4:bench--duration={value}",
            (*BENCH, "--concurrency", "1", "--duration", value),
            ("--duration",),
        )
    for name, base in TREE_CMDS.items():
        plan = ("plan", "*", *base[2:]) if name == "plan" else base
        yield Case(f"r4:{name}:single-and-multi-node", (*plan, "--single-node", "--multi-node"),
                   ("--single-node",), tree=True)  # fmt: skip
        for filters in EMPTY_FILTERS:
            yield Case(f"r4:{name}:selects-nothing{'='.join(filters)}", (*plan, *filters),
                       (filters[0],), tree=True)  # fmt: skip


# -- catalog values that reach sbatch scripts and pyxis --------------------------------------
# YAML double-quoted escapes (written through a regex template: each backslash doubled)
BREAKS = {"newline": r"\\n", "carriage-return": r"\\r", "tab": r"\\t", "u2028": r"\\u2028"}
CATALOG_EDITS = {
    "account": Edit(r"^(  account: )benchmark$", r'\1"bench{brk}rm -rf ~"'),
    "partition": Edit(r"^(  partition: )batch$", r'\1"batch{brk}x"'),
    "mount": Edit(r"^(    /scratch/fsw/models: )/models$", r'\1"/models{brk}x"'),
    "model-path": Edit(r"^(    path: )(/scratch/fsw/models/gpt-oss-120b)$", r'\1"\2{brk}x"'),
    "container": Edit(r"^(  vllm-minimax-m3: )(\S+)$", r'\1"\2{brk}x"'),
}
MOUNT_EDITS = {
    "comma-in-target": Edit(r"^(    /scratch/fsw/models: )/models$", r"\1/models,/etc:/host-etc"),
    "comma-in-source": Edit(r"^(    )/scratch/fsw/models(: /models)$", r"\1/scratch/a,/etc\2"),
    "colon-in-source": Edit(r"^(    )/scratch/fsw/models(: /models)$", r'\1"/a:/etc"\2'),
}


def catalog_cases() -> Iterator[Case]:
    text = (EXAMPLES / SLURM_CLUSTER).read_text()
    name = SLURM_CLUSTER.rsplit("/", 1)[-1]
    edits = {
        f"{key}={brk}": Edit(edit.pattern, edit.repl.replace("{brk}", escape))
        for key, edit in CATALOG_EDITS.items()
        for brk, escape in BREAKS.items()
    }
    block = Edit(r"^(  account: )benchmark$", "\\1|\n    bench\n    rm -rf ~")
    for case, edit in {**edits, "account=block-scalar": block, **MOUNT_EDITS}.items():
        files: dict[str, str | bytes] = {f"tree/{SLURM_CLUSTER}": edit.apply(SLURM_CLUSTER, text)}
        yield Case(f"r4:catalog:check:{case}", ("check", "{tree}"), (name,), frozenset({1, 2}),
                   tree=True, files=files)  # fmt: skip
        yield Case(f"r4:catalog:sweep:{case}", ("sweep", "--root", "{tree}", "--format", "json"),
                   (name,), tree=True, files=files)  # fmt: skip
    for runs in ("{tmp}/a,b", "{tmp}/a:b", "{tmp}/x,/etc:/host-etc"):
        yield Case(f"r4:slurm--runs-dir={runs}",
                   ("run", "--root", "{tree}", "--dry-run", "--backend", "slurm", "--cluster",
                    "b200-dgxc", "--config-keys", "gptoss-fp4-b200-trt", "--runs-dir", runs),
                   ("--runs-dir",), frozenset({1, 2}), tree=True)  # fmt: skip


def round4_cases() -> Iterator[Case]:
    yield from store_cases()
    yield from concurrency_cases()
    yield from tag_cases()
    yield from ep_cases()
    yield from unreadable_cases()
    yield from option_cases()
    yield from catalog_cases()
