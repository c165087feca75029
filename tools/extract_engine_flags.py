"""Extract the command-line flag names an engine release accepts from its own source.

    python tools/extract_engine_flags.py ENGINE RELEASE SOURCE --repo OWNER/NAME --ref REF \
        [--obtained TEXT] > src/inferbench/catalog/engine_flags/ENGINE-RELEASE.yaml

SOURCE is the release's wheel (or sdist / zip) or an unpacked source folder. Only flag names
are taken, never code: the option strings of `add_argument(...)` / `click.option(...)` calls,
and for the dataclasses whose fields become flags (vLLM's FrontendArgs, TRT-LLM's LlmArgs)
the field names. Every file is parsed with `ast`; nothing of the engine is imported or run.
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tarfile
import zipfile
from pathlib import Path

import yaml

# Per engine: the files that define its flags, and the classes whose fields are flags.
FILES = {
    "vllm": (
        "vllm/engine/arg_utils.py",
        "vllm/entrypoints/openai/cli_args.py",
        "vllm/entrypoints/cli/serve.py",
    ),
    "sglang": ("sglang/srt/server_args.py",),
    "trtllm": ("tensorrt_llm/commands/serve.py", "tensorrt_llm/llmapi/llm_args.py"),
}
FIELD_CLASSES = {
    "vllm": ("BaseFrontendArgs", "FrontendArgs"),
    "sglang": ("ServerArgs",),  # 0.5.1x derives `--tp-size` from the field `tp_size`
    # extra_llm_api_options / srt-slurm trtllm_config keys are LlmArgs fields
    "trtllm": ("BaseLlmArgs", "TorchLlmArgs", "LlmArgs"),
}


def read_sources(source: Path, wanted: tuple[str, ...]) -> dict[str, str]:
    """`wanted` files (package-relative) from a wheel, an sdist or a folder."""
    found: dict[str, str] = {}

    def take(name: str, text: bytes) -> None:
        for want in wanted:
            if name == want or name.endswith("/" + want):
                found[want] = text.decode("utf-8")

    if source.is_dir():
        for want in wanted:
            hits = sorted(source.rglob(Path(want).name))
            for hit in hits:
                take(hit.relative_to(source).as_posix(), hit.read_bytes())
    elif zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            for name in archive.namelist():
                take(name, archive.read(name))
    else:
        with tarfile.open(source) as tar:
            for member in tar.getmembers():
                handle = tar.extractfile(member) if member.isfile() else None
                if handle is not None:
                    take(member.name, handle.read())
    return found


def _dashed(values: list[ast.expr]) -> set[str]:
    return {
        v.value[2:]
        for v in values
        if isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value.startswith("--")
    }


def _option_strings(tree: ast.AST) -> set[str]:
    """Option strings of `add_argument` / `click.option` calls, `aliases=[...]` lists and
    `cli_name=` names."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg == "aliases" and isinstance(keyword.value, ast.List | ast.Tuple):
                out |= _dashed(list(keyword.value.elts))
            elif keyword.arg == "cli_name":  # SGLang's Arg(cli_name="--fp4-gemm-backend")
                out |= _dashed([keyword.value])
        name = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if name not in ("add_argument", "option"):
            continue
        out |= _dashed(list(node.args))
    return {flag for flag in out if flag}


# Engines whose names are kept verbatim: TRT-LLM's LLM-API YAML keys are pydantic field names
# (`max_batch_size`, never `max-batch-size`) and its click options are matched exactly.
VERBATIM = frozenset({"trtllm"})


def _fields(tree: ast.AST, classes: tuple[str, ...], verbatim: bool) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name in classes:
            for item in node.body:
                target = item.target if isinstance(item, ast.AnnAssign) else None
                if not isinstance(target, ast.Name) or target.id.startswith("_"):
                    continue
                if _is_classvar(item):  # `decoding_type: ClassVar[str]` is no field
                    continue
                out.add(target.id if verbatim else target.id.replace("_", "-"))
    return out


def _is_classvar(item: ast.stmt) -> bool:
    annotation = item.annotation if isinstance(item, ast.AnnAssign) else None
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    name = annotation.attr if isinstance(annotation, ast.Attribute) else ""
    name = annotation.id if isinstance(annotation, ast.Name) else name
    return name == "ClassVar"


def extract(engine: str, sources: dict[str, str]) -> list[str]:
    flags: set[str] = set()
    for text in sources.values():
        tree = ast.parse(text)
        flags |= _option_strings(tree)
        flags |= _fields(tree, FIELD_CLASSES[engine], engine in VERBATIM)
    return sorted(flags)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=sorted(FILES))
    parser.add_argument("release")
    parser.add_argument("source", type=Path)
    parser.add_argument("--repo", required=True, help="OWNER/NAME of the engine's repository")
    parser.add_argument("--ref", required=True, help="the tag or commit SOURCE was built from")
    parser.add_argument("--obtained", default="", help="how SOURCE was obtained")
    args = parser.parse_args(argv)
    wanted = FILES[args.engine]
    sources = read_sources(args.source, wanted)
    missing = [w for w in wanted if w not in sources]
    if not sources:
        print(f"none of {', '.join(wanted)} in {args.source}", file=sys.stderr)
        return 1
    table = {
        "engine": args.engine,
        "release": args.release,
        "source": {
            "repo": args.repo,
            "ref": args.ref,
            "files": sorted(sources),
            "obtained": args.obtained or args.source.name,
            "extracted-by": "tools/extract_engine_flags.py",
        },
        "flags": extract(args.engine, sources),
    }
    if missing:
        table["source"]["absent"] = missing
    out = io.StringIO()
    out.write(f"# Flag names {args.engine} {args.release} accepts; generated, do not edit.\n")
    yaml.safe_dump(table, out, sort_keys=False, default_flow_style=False)
    sys.stdout.write(out.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
