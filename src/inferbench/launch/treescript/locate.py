"""Which benchmark script InferenceX runs for a single-node job.

The workflow runs `runners/launch_${RUNNER_NAME%%_*}.sh` on a machine of the job's runner
label (configs/runners.yaml), and each launcher names the script with its own template, e.g.

    BENCH_BASE="benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b200"
    BENCH_SCRIPT="${BENCH_BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh"
    if [[ ! -f "$BENCH_SCRIPT" ]]; then BENCH_SCRIPT="${BENCH_BASE}${FRAMEWORK_SUFFIX}..."

This reads each launcher's candidate paths in file order (assignments and `bash <path>` lines
that expand to `benchmarks/single_node/...sh`) and picks the first that exists, which is what
both the fallback chains and the single-template launchers do. Only plain expansions are
followed (`${V}`, `${V:-d}`, `${V%%_*}`, `${V#/}`, `${V%/}`, `$([[ "$V" == "x" ]] && printf
'a' || printf 'b')`, an assignment under `if [[ "$V" == "x" ]]`); a candidate using anything
else is skipped, never guessed.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from inferbench.core.errors import InputError, Location
from inferbench.launch.treescript.exports import launcher_exports

SINGLE_NODE = "benchmarks/single_node/"
_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*?)\s*$")
_IF_EQ = re.compile(
    r'^\s*if\s+\[\[\s*"?\$\{?(\w+)(?::-)?\}?"?\s*==\s*"?([^"\s\]]*)"?\s*\]\];\s*then'
)
_PRINTF = re.compile(
    r"^\$\(\[\[\s*\"?\$\{?(\w+)(?::-)?\}?\"?\s*==\s*\"?([^\"\s\]]*)\"?\s*\]\]\s*&&\s*"
    r"printf\s+'([^']*)'\s*\|\|\s*printf\s+'([^']*)'\s*\)$"
)
_PATH_WORD = re.compile(
    r"(?:^|\s)((?:\"?[^\s;|&<>()]*)benchmarks/single_node/[^\s;|&<>()]*\.sh\"?)"
)
_EXPANSION = re.compile(r"\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_OPERATOR = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:(:-)(.*)|(%%|%|##|#)(.*))?$")


class Unreadable(Exception):
    """A shell construct this reader does not follow."""


@dataclass(frozen=True)
class ScriptChoice:
    """The script a job runs and the launcher that picked it (tree-relative paths)."""

    script: str
    launcher: str
    runner_name: str  # the machine (RUNNER_NAME) whose launcher was read
    alternatives: tuple[tuple[str, str], ...] = ()  # (script, launcher) other launchers pick
    exports: tuple[tuple[str, str], ...] = ()  # what the launcher passes into the container


def _strip(pattern: str, value: str, op: str) -> str:
    """`${V%%pat}`, `${V%pat}`, `${V##pat}`, `${V#pat}` with a glob pattern."""
    ends = range(len(value) + 1)
    if op in ("%", "##"):  # shortest suffix / longest prefix: try from the far end
        ends = range(len(value), -1, -1)
    for i in ends:
        if op in ("%%", "%") and fnmatch.fnmatchcase(value[i:], pattern):
            return value[:i]
        if op in ("##", "#") and fnmatch.fnmatchcase(value[:i], pattern):
            return value[i:]
    return value


def expand(text: str, env: Mapping[str, str]) -> str:
    """Expand `text` (a shell word, quotes allowed) with `env`; Unreadable when it uses a
    construct or variable not known here."""
    if "$(" in text or "`" in text:
        raise Unreadable(text)

    def one(match: re.Match[str]) -> str:
        body = match.group(1) if match.group(1) is not None else match.group(2)
        op = _OPERATOR.match(body)
        if op is None:
            raise Unreadable(body)
        name, default, word, strip_op, pattern = op.groups()
        value = env.get(name)
        if default is not None:
            return value if value else expand(word, env)
        if value is None:
            raise Unreadable(name)
        return _strip(pattern, value, strip_op) if strip_op else value

    return _EXPANSION.sub(one, text.replace('"', "").replace("'", ""))


def _assigned(raw: str, env: Mapping[str, str]) -> str:
    printf = _PRINTF.match(raw)
    if printf:
        name, wanted, then, other = printf.groups()
        return then if env.get(name, "") == wanted else other
    return expand(raw, env)


def launcher_candidates(text: str, contract: Mapping[str, str]) -> list[str]:
    """The single-node script paths a launcher names for `contract`, in file order."""
    env = dict(contract)
    out: list[str] = []
    condition: tuple[str, str] | None = None
    for line in text.splitlines():
        code = line.split(" #", 1)[0]
        if code.lstrip().startswith("#"):
            continue
        branch = _IF_EQ.match(code)
        if branch:
            condition = (branch.group(1), branch.group(2))
            continue
        if re.match(r"^\s*(fi|else|elif)\b", code):
            condition = None
        assign = _ASSIGN.match(code)
        if assign:
            name, raw = assign.groups()
            if condition is not None and env.get(condition[0], "") != condition[1]:
                continue
            try:
                env[name] = _assigned(raw, env)
            except Unreadable:
                env.pop(name, None)  # unknown from here on: candidates using it are skipped
                continue
            if env[name].startswith(SINGLE_NODE) and env[name].endswith(".sh"):
                out.append(env[name])
            continue
        for word in _PATH_WORD.findall(code):
            try:
                path = expand(word, env)
            except Unreadable:
                continue
            if path.startswith(SINGLE_NODE):
                out.append(path)
    return list(dict.fromkeys(out))


def inside(root: Path, relative: str, what: str) -> Path:
    """`root/relative`, refused when it resolves outside `root` (a `..` or a symlink)."""
    base = root.resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        raise InputError(
            f"{what} {relative!r} points outside the benchmark tree",
            location=Location(file=root / relative),
            hint="keep benchmark scripts inside the tree",
        )
    return path


def pick(root: Path, launcher: str, contract: Mapping[str, str]) -> str | None:
    """The script `launcher` (tree-relative) runs for `contract`, when one exists."""
    text = (root / launcher).read_text(encoding="utf-8", errors="replace")
    for candidate in launcher_candidates(text, contract):
        if (root / candidate).is_file():
            inside(root, candidate, "benchmark script")
            return candidate
    return None


def launchers_for(
    root: Path, label: str, labels: Mapping[str, Sequence[str]]
) -> list[tuple[str, str]]:
    """(launcher, RUNNER_NAME) for each launcher a job of runner `label` can run under, in
    runners.yaml order. A label runners.yaml does not list (its machines registered only with
    the CI) is read as the cluster it names: `cluster:mi325x-tw` -> launch_mi325x-tw.sh,
    `h200-dgxc` -> launch_h200-dgxc-*.sh."""
    names = list(labels.get(label, ()))
    if not names:
        stem = label.removeprefix("cluster:")
        found = sorted((root / "runners").glob(f"launch_{stem}.sh"))
        found += sorted((root / "runners").glob(f"launch_{stem}-*.sh"))
        names = [f"{p.stem.removeprefix('launch_')}_0" for p in found]
    out: dict[str, str] = {}
    for name in names:
        launcher = f"runners/launch_{name.split('_', 1)[0]}.sh"
        if launcher not in out and (root / launcher).is_file():
            out[launcher] = name
    return list(out.items())


def find_script(
    root: Path, launchers: Sequence[tuple[str, str]], contract: Mapping[str, str]
) -> ScriptChoice | None:
    """The script InferenceX runs for a job under `launchers` ((launcher, RUNNER_NAME), see
    `launchers_for`), or None when none of them names an existing one. Launchers that pick
    another script are kept as alternatives: the first in runners.yaml order wins."""
    picks: list[tuple[str, str, str]] = []
    for launcher, name in launchers:
        script = pick(root, launcher, {**contract, "RUNNER_NAME": name})
        if script is not None:
            picks.append((script, launcher, name))
    if not picks:
        return None
    script, launcher, name = picks[0]
    others = tuple(dict.fromkeys((s, la) for s, la, _ in picks[1:] if s != script))
    text = (root / launcher).read_text(encoding="utf-8", errors="replace")
    return ScriptChoice(
        script=script,
        launcher=launcher,
        runner_name=name,
        alternatives=others,
        exports=tuple(launcher_exports(text).items()),
    )
