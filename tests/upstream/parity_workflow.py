"""The environment InferenceX's workflows give a single-node job, read from the workflow files.

Nothing here comes from inferbench: `run-sweep.yml` passes a generator row to
`benchmark-tmpl.yml` as inputs (its `with:` blocks for single-node and agentic rows), the
template turns inputs into the job's `env:`, and its "Launch job script" step adds its own
`env:` and runs its `run:` text, which starts `runners/launch_${RUNNER_NAME%%_*}.sh`. Each
`${{ ... }}` is evaluated by a small evaluator of GitHub's expression language (property
access, literals, `==`/`!=`, `!`, `&&`/`||` with their operand-valued semantics, `toJson`,
`fromJson`, `contains`); secrets evaluate to '' as on a fork without them, pull-request
labels to none (a push-triggered sweep).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

TEMPLATE = Path(".github/workflows/benchmark-tmpl.yml")
SWEEP = Path(".github/workflows/run-sweep.yml")
SINGLE_NODE_JOB = "sweep-single-node-1k1k"  # its `with:` is the &single-node-inputs anchor
AGENTIC_JOB = "sweep-agentic"
LAUNCH_STEP = "Launch job script"

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||[!()\[\].,*])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        if text[i:].strip() == "":
            break
        match = _TOKEN.match(text, i)
        if match is None:
            raise ValueError(f"cannot read expression {text!r} at {i}")
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match.group(kind)))
        i = match.end()
    return out


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and value == value


def _string(value: Any) -> str:
    """How GitHub writes a value into a string (env values, `${{ }}` in text)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return "Object" if isinstance(value, dict) else "Array"
    return str(value)


def to_json(value: Any) -> str:
    """GitHub's toJSON: indented by two spaces, keys in the object's order."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    return a == b


class _Parser:
    def __init__(self, text: str, context: Mapping[str, Any]) -> None:
        self.tokens = _tokens(text)
        self.i = 0
        self.context = context

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.i]
        if expected is not None and token[1] != expected:
            raise ValueError(f"expected {expected!r}, got {token[1]!r}")
        self.i += 1
        return token

    def parse(self) -> Any:
        value = self.or_()
        if self.i != len(self.tokens):
            raise ValueError(f"unread tokens {self.tokens[self.i :]}")
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == "||":
            self.take()
            other = self.and_()
            value = value if _truthy(value) else other
        return value

    def and_(self) -> Any:
        value = self.compare()
        while self.peek() == "&&":
            self.take()
            other = self.compare()
            value = other if _truthy(value) else value
        return value

    def compare(self) -> Any:
        value = self.unary()
        while self.peek() in ("==", "!="):
            op = self.take()[1]
            other = self.unary()
            value = _equal(value, other) if op == "==" else not _equal(value, other)
        return value

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not _truthy(self.unary())
        return self.postfix(self.primary())

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text) if "." in text else int(text)
        if text == "(":
            value = self.or_()
            self.take(")")
            return value
        if kind != "name":
            raise ValueError(f"unexpected {text!r}")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self.peek() == "(":
            return self.call(text)
        return self.context.get(text)

    def call(self, name: str) -> Any:
        self.take("(")
        args = [self.or_()]
        while self.peek() == ",":
            self.take()
            args.append(self.or_())
        self.take(")")
        lowered = name.lower()
        if lowered == "tojson":
            return to_json(args[0])
        if lowered == "fromjson":
            return json.loads(args[0])
        if lowered == "contains":
            haystack, needle = args
            if isinstance(haystack, list):
                return any(_equal(item, needle) for item in haystack)
            return str(needle).casefold() in _string(haystack).casefold()
        raise ValueError(f"function {name} is not known here")

    def postfix(self, value: Any) -> Any:
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                kind, key = self.take()
                if key == "*":
                    value = list(value) if isinstance(value, list) else []
                    continue
                value = _member(value, key)
            else:
                key = self.or_()
                self.take("]")
                value = _member(value, key)
        return value


def _member(value: Any, key: Any) -> Any:
    if isinstance(value, list):
        return [_member(item, key) for item in value]
    if isinstance(value, dict):
        return value.get(key)
    return None


def evaluate(expression: str, context: Mapping[str, Any]) -> Any:
    return _Parser(expression, context).parse()


_EMBEDDED = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def interpolate(value: Any, context: Mapping[str, Any]) -> Any:
    """A YAML value with its `${{ }}` evaluated: one whole expression keeps its type, text
    around expressions makes a string."""
    if not isinstance(value, str):
        return value
    found = _EMBEDDED.findall(value)
    if len(found) == 1 and _EMBEDDED.fullmatch(value.strip()):
        return evaluate(found[0], context)
    return _EMBEDDED.sub(lambda m: _string(evaluate(m.group(1), context)), value)


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    # PyYAML reads the bare key `on` as True
    if True in data:
        data["on"] = data.pop(True)
    return data


def _coerce(value: Any, kind: str) -> Any:
    if kind == "boolean":
        return _truthy(value) if not isinstance(value, str) else value.lower() == "true"
    return _string(value)


@dataclass(frozen=True)
class LaunchStep:
    """What the template's launch step runs for one job on one machine."""

    env: dict[str, str]  # the job's env plus the step's env
    script: str  # the step's `run:` text, expressions evaluated


class Workflows:
    """benchmark-tmpl.yml and run-sweep.yml of one InferenceX tree."""

    def __init__(self, tree: Path) -> None:
        self.template = _load(tree / TEMPLATE)
        sweep = _load(tree / SWEEP)
        self.with_blocks = {
            "single-node": sweep["jobs"][SINGLE_NODE_JOB]["with"],
            "agentic": sweep["jobs"][AGENTIC_JOB]["with"],
        }
        self.input_specs: dict[str, dict[str, Any]] = self.template["on"]["workflow_call"]["inputs"]
        steps = self.template["jobs"]["benchmark"]["steps"]
        self.step = next(s for s in steps if s.get("name") == LAUNCH_STEP)

    def secret_names(self) -> set[str]:
        """Variables of the job's env whose value is a secret (absent on a local run)."""
        return {
            k for k, v in self.template["env"].items() if isinstance(v, str) and "secrets." in v
        }

    def inputs(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The template's inputs for a generator row, as run-sweep.yml passes them."""
        block = self.with_blocks[
            "agentic" if row.get("scenario-type") == "agentic-coding" else "single-node"
        ]
        context = {
            "matrix": {"config": dict(row)},
            "github": {"event": {"pull_request": {"labels": []}}, "event_name": "push"},
        }
        passed = {k: interpolate(v, context) for k, v in block.items()}
        out: dict[str, Any] = {}
        for name, spec in self.input_specs.items():
            kind = spec.get("type", "string")
            if name in passed and passed[name] is not None:
                out[name] = _coerce(passed[name], kind)
            elif "default" in spec:
                out[name] = _coerce(spec["default"], kind)
            else:
                out[name] = False if kind == "boolean" else ""
        return out

    def launch_step(self, row: Mapping[str, Any], runner_name: str) -> LaunchStep:
        inputs = self.inputs(row)
        context: dict[str, Any] = {"inputs": inputs, "secrets": {}, "github": {}}
        env = {k: _string(interpolate(v, context)) for k, v in self.template["env"].items()}
        step_context = {**context, "env": env, "runner": {"name": runner_name}}
        step_env = {
            k: _string(interpolate(v, step_context)) for k, v in self.step.get("env", {}).items()
        }
        script = interpolate(self.step["run"], step_context)
        return LaunchStep(env={**env, **step_env}, script=str(script))
