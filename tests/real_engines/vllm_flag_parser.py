"""Parse `vllm serve ...` command lines with the installed vLLM's own CLI parser.

    VLLM_PYTHON tests/real_engines/vllm_flag_parser.py < argvs.json > verdicts.json

Run with the vLLM venv's Python. Reads a JSON list of argv lists (each starting `vllm serve
MODEL`), writes a JSON list of {"argv": [...], "error": str | null}: the parser vLLM's
`vllm` command builds (the `serve` subcommand), then vLLM's own checks of parsed serve
arguments and the engine arguments made from them, all without loading a model.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys


def _parser():  # type: ignore[no-untyped-def]
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser(description="vLLM CLI")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    ServeSubcommand().subparser_init(subparsers)
    return parser


def verdict(parser, argv: list[str]) -> str | None:  # type: ignore[no-untyped-def]
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.entrypoints.launchers.cli_args import validate_parsed_serve_args

    if argv[:2] != ["vllm", "serve"]:
        return f"not a `vllm serve` command line: {argv[:2]}"
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = parser.parse_args(argv[1:])
        validate_parsed_serve_args(args)
        AsyncEngineArgs.from_cli_args(args)
    except SystemExit:
        lines = [line for line in err.getvalue().splitlines() if line.strip()]
        return lines[-1] if lines else "the parser exited"
    except Exception as exc:  # vLLM's checks raise ValueError, TypeError, pydantic errors
        return f"{type(exc).__name__}: {exc}"
    return None


def main() -> int:
    argvs = json.load(sys.stdin)
    parser = _parser()
    out = [{"argv": argv, "error": verdict(parser, argv)} for argv in argvs]
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
