"""Which srt-slurm (repository and ref) a launcher clones for one job.

InferenceX's multinode launchers pick the srt-slurm they run by an if/elif chain on the
job's variables (`$FRAMEWORK`, `$MODEL_PREFIX`, `$PRECISION`, `$IS_AGENTIC`, `$CONFIG_FILE`
globs, `${SPEC_DECODING:-}`, and `$USES_DCGM_POWER`, which the recipe's telemetry block
decides), then `git clone [--branch B] URL` and maybe `git checkout REF`. This reads the
if/elif/else structure around every srt-slurm clone and checkout into the paths a run can
take, and evaluates the `[[ ... ]]` tests of each path on a job's variables: a test on a
variable the job does not set (or a command such as `uses_watchtower_shared_fs`) is
unknown and rules nothing out. The job's srt-slurm is the one outcome of the paths left;
none or several is said as such, never guessed.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from inferbench.config.shellif import ELSE, FI, code, opens
from inferbench.config.srt_slurm_refs import repository_name

_GIT = re.compile(r"(?:^|[;&|]\s*|^\s*)git\s+(?:-C\s+\S+\s+)?(clone|checkout)\b(.*)$")
_VAR = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}|\$(\w+)")
DEFAULT_BRANCH = "HEAD"  # a clone without --branch and no checkout: the default branch


@dataclass(frozen=True)
class CloneStep:
    """`git clone` (repository, branch) or `git checkout` (ref) at a line."""

    line: int
    kind: str  # "clone" or "checkout"
    repository: str | None = None  # owner/name; None: the URL is not readable
    ref: str | None = None  # --branch of a clone, the ref of a checkout


@dataclass
class _Chain:
    branches: list[tuple[str | None, list[_Item]]]  # (condition; None: else, body)


_Item = CloneStep | _Chain


@dataclass(frozen=True)
class _Path:
    constraints: tuple[tuple[str, bool], ...]  # (condition, what it must be)
    steps: tuple[CloneStep, ...]


@dataclass(frozen=True)
class SrtClone:
    """What a job clones: the repository and ref, and the line of the step that set it."""

    repository: str
    ref: str
    line: int

    @property
    def label(self) -> str:
        return f"{self.repository}@{self.ref}"


@dataclass(frozen=True)
class CloneUnknown:
    """A job whose srt-slurm the launcher does not say plainly, and why."""

    reason: str


@dataclass(frozen=True)
class SrtCloneTable:
    """Every path through a launcher's srt-slurm clone steps."""

    paths: tuple[_Path, ...]
    constants: Mapping[str, str] = field(default_factory=dict)
    too_many: bool = False  # more if/elif paths than MAX_PATHS: none is read
    _resolved: dict[tuple[tuple[str, str], ...], SrtClone | CloneUnknown] = field(
        default_factory=dict, compare=False, repr=False
    )

    def resolve(self, job: Mapping[str, str]) -> SrtClone | CloneUnknown:
        """The srt-slurm a job with these variables clones."""
        key = tuple(sorted(job.items()))
        cached = self._resolved.get(key)
        if cached is None:
            cached = self._resolved[key] = self._resolve(job)
        return cached

    def outcomes(self) -> tuple[SrtClone | CloneUnknown, ...]:
        """What the launcher's paths clone, each outcome once, in path order (repository
        and ref, whatever line set it)."""
        seen: dict[str, SrtClone | CloneUnknown] = {}
        for path in self.paths:
            outcome = _outcome(path.steps)
            seen.setdefault(outcome.label if isinstance(outcome, SrtClone) else "?", outcome)
        return tuple(seen.values())

    def single(self) -> SrtClone | None:
        """The one srt-slurm every job clones, whatever its variables (None: the launcher
        picks per job, or names no literal ref): what a cluster file can pin."""
        if self.too_many:
            return None
        outcomes = self.outcomes()
        if len(outcomes) != 1:
            return None
        return outcomes[0] if isinstance(outcomes[0], SrtClone) else None

    def _resolve(self, job: Mapping[str, str]) -> SrtClone | CloneUnknown:
        if self.too_many:
            return CloneUnknown(f"the launcher's clone steps take over {MAX_PATHS} paths")
        if not self.paths:
            return CloneUnknown("the launcher clones no srt-slurm inferbench can read")
        variables = {**self.constants, **job}
        outcomes: dict[tuple[str, str], SrtClone | CloneUnknown] = {}
        memo: dict[str, bool | None] = {}  # paths repeat their chains' earlier conditions
        for path in self.paths:
            if any(_memo_value(c, variables, memo) is (not want) for c, want in path.constraints):
                continue
            outcome = _outcome(path.steps)
            key = (outcome.label, "") if isinstance(outcome, SrtClone) else ("?", outcome.reason)
            outcomes.setdefault(key, outcome)
        if not outcomes:
            return CloneUnknown("no srt-slurm clone of the launcher is taken by this job")
        if len(outcomes) > 1:
            shown = sorted(
                o.label if isinstance(o, SrtClone) else o.reason for o in outcomes.values()
            )
            return CloneUnknown("the launcher may clone any of " + ", ".join(shown))
        return next(iter(outcomes.values()))


def _outcome(steps: tuple[CloneStep, ...]) -> SrtClone | CloneUnknown:
    repository: str | None = None
    ref: str | None = None
    line = 0
    for step in steps:
        if step.kind == "clone":
            repository, ref, line = step.repository, step.ref or DEFAULT_BRANCH, step.line
        else:
            ref, line = step.ref, step.line
    if repository is None:
        return CloneUnknown(f"the srt-slurm clone at line {line} names no readable repository")
    if ref is None or "$" in ref:
        return CloneUnknown(f"the srt-slurm ref at line {line} is not a literal")
    return SrtClone(repository, ref, line)


def read_clone_table(text: str, constants: Mapping[str, str]) -> SrtCloneTable:
    """The srt-slurm clone paths of one launcher script (text already read);
    `constants` are its top-level literal variables (a clone URL or pin may name one)."""
    root: list[_Item] = []
    stack: list[tuple[_Chain, list[_Item]]] = []  # open chains and the list holding them
    body = root
    for number, raw in enumerate(text.splitlines(), start=1):
        line = code(raw)
        opened = opens(line)
        if opened and opened[0] == "if":
            chain = _Chain([(opened[1], [])])
            body.append(chain)
            stack.append((chain, body))
            body = chain.branches[-1][1]
            continue
        if opened and stack:  # elif
            chain = stack[-1][0]
            chain.branches.append((opened[1], []))
            body = chain.branches[-1][1]
            continue
        if ELSE.match(line) and stack:
            chain = stack[-1][0]
            chain.branches.append((None, []))
            body = chain.branches[-1][1]
            continue
        if FI.match(line) and stack:
            _, body = stack.pop()
            continue
        step = _step(line, number, constants)
        if step is not None:
            body.append(step)
    try:
        paths = [p for p in _paths(root) if any(s.kind == "clone" for s in p.steps)]
    except _TooManyPaths:
        return SrtCloneTable((), dict(constants), too_many=True)
    return SrtCloneTable(tuple(paths), dict(constants))


class _TooManyPaths(Exception):
    pass


MAX_PATHS = 4096  # sequential chains multiply; real launchers have one chain of ~20


def _paths(items: list[_Item]) -> list[_Path]:
    out = [_Path((), ())]
    for item in items:
        if isinstance(item, CloneStep):
            out = [_Path(p.constraints, (*p.steps, item)) for p in out]
            continue
        if not _has_steps(item):
            continue
        ways: list[_Path] = []
        before: list[tuple[str, bool]] = []
        has_else = False
        for condition, body in item.branches:
            own = [*before] if condition is None else [*before, (condition, True)]
            has_else = has_else or condition is None
            ways.extend(_Path((*tuple(own), *p.constraints), p.steps) for p in _paths(body))
            if condition is not None:
                before.append((condition, False))
        if not has_else:
            ways.append(_Path(tuple(before), ()))
        if len(out) * len(ways) > MAX_PATHS:
            raise _TooManyPaths
        out = [
            _Path((*p.constraints, *w.constraints), (*p.steps, *w.steps)) for p in out for w in ways
        ]
    return out


def _has_steps(chain: _Chain) -> bool:
    return any(
        isinstance(i, CloneStep) or (isinstance(i, _Chain) and _has_steps(i))
        for _, body in chain.branches
        for i in body
    )


def _expand(word: str, constants: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        return constants.get(name, match.group(0))

    return _VAR.sub(one, word)


def _step(line: str, number: int, constants: Mapping[str, str]) -> CloneStep | None:
    match = _GIT.search(line)
    if match is None:
        return None
    command = re.split(r"\s*(?:\|\||&&|;|\|)\s*", match.group(2).strip())[0]
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if match.group(1) == "checkout":
        refs = [w for w in words if not w.startswith("-")]
        if len(refs) != 1:
            return None
        return CloneStep(number, "checkout", ref=_expand(refs[0], constants))
    branch: str | None = None
    positional: list[str] = []
    skip_next = False
    for index, word in enumerate(words):
        if skip_next:
            skip_next = False
            continue
        if word in ("--branch", "-b"):
            branch = words[index + 1] if index + 1 < len(words) else None
            skip_next = True
        elif word.startswith("--branch="):
            branch = word.partition("=")[2]
        elif word in ("--depth", "--origin", "-o", "--reference", "--config", "-c"):
            skip_next = True
        elif not word.startswith("-"):
            positional.append(word)
    if not positional:
        return None
    url = _expand(positional[0], constants)
    destination = positional[1] if len(positional) > 1 else ""
    repository = repository_name(url) if "$" not in url else None
    named = repository is not None and "srt-slurm" in repository.lower()
    if not named and "srt" not in destination.lower():
        return None  # another repository (dynamo, a benchmark tool)
    ref = _expand(branch, constants) if branch is not None else None
    return CloneStep(number, "clone", repository if named else None, ref)


# -- `[[ ... ]]` tests, three-valued ------------------------------------------------------


def _memo_value(
    condition: str, variables: Mapping[str, str], memo: dict[str, bool | None]
) -> bool | None:
    if condition not in memo:
        names = _names(condition)
        memo[condition] = _evaluate_on(condition, tuple(variables.get(n) for n in names))
    return memo[condition]


@functools.lru_cache(maxsize=1024)
def _names(condition: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.group(1) or m.group(3) for m in _VAR.finditer(condition)))


@functools.lru_cache(maxsize=16384)
def _evaluate_on(condition: str, values: tuple[str | None, ...]) -> bool | None:
    """`evaluate` on just the variables the condition names (many jobs share them)."""
    names = _names(condition)
    return evaluate(condition, {n: v for n, v in zip(names, values, strict=True) if v is not None})


def evaluate(condition: str, variables: Mapping[str, str]) -> bool | None:
    """The value of an `if` condition on these variables; None when it is unknown (a
    variable not set, a command, a construct this does not read)."""
    node = _compile(condition)
    return None if node is None else node.value(variables)


class _Unreadable(Exception):
    pass


@dataclass(frozen=True)
class _Word:
    parts: tuple[tuple[str, bool], ...]  # (text, quoted)

    @property
    def text(self) -> str:
        return "".join(t for t, _ in self.parts)

    @property
    def quoted(self) -> bool:
        return any(q for _, q in self.parts)

    def value(self, variables: Mapping[str, str]) -> str | None:
        out = []
        for text, _ in self.parts:
            expanded = _expand_job(text, variables)
            if expanded is None:
                return None
            out.append(expanded)
        return "".join(out)

    def pattern(self, variables: Mapping[str, str]) -> str | None:
        """The right side of `==`: unquoted text is a glob, quoted text is literal."""
        out = []
        for text, quoted in self.parts:
            expanded = _expand_job(text, variables)
            if expanded is None:
                return None
            out.append(_escape_glob(expanded) if quoted else expanded)
        return "".join(out)


def _expand_job(text: str, variables: Mapping[str, str]) -> str | None:
    if "$" not in text and "`" not in text:
        return text
    unknown = False

    def one(match: re.Match[str]) -> str:
        nonlocal unknown
        name = match.group(1) or match.group(3)
        value = variables.get(name)
        if value is None:  # not a variable of the job: any value, default or not
            unknown = True
            return ""
        if match.group(2) is not None and not value:
            return match.group(2)
        return value

    expanded = _VAR.sub(one, text)
    if unknown or "$" in expanded or "`" in expanded:
        return None
    return expanded


@dataclass(frozen=True)
class _Node:
    """One compiled test: `kind` is or/and/not/unknown/empty/nonempty/truthy/match."""

    kind: str
    children: tuple[_Node, ...] = ()
    left: _Word | None = None
    right: _Word | None = None
    negate: bool = False

    def value(self, variables: Mapping[str, str]) -> bool | None:
        kind = self.kind
        if kind in ("or", "and"):  # three-valued: an unknown child leaves it undecided
            decisive = kind == "or"  # True decides an `or`, False an `and`
            seen_unknown = False
            for child in self.children:
                got = child.value(variables)
                if got is decisive:
                    return decisive
                seen_unknown = seen_unknown or got is None
            return None if seen_unknown else not decisive
        if kind == "not":
            got = self.children[0].value(variables)
            return None if got is None else not got
        if kind == "unknown" or self.left is None:
            return None
        left = self.left.value(variables)
        if left is None:
            return None
        if kind in ("empty", "nonempty", "truthy"):
            return (not left) if kind == "empty" else bool(left)
        assert self.right is not None
        pattern = self.right.pattern(variables)
        if pattern is None:
            return None
        return fnmatch.fnmatchcase(left, pattern) != self.negate


@functools.lru_cache(maxsize=4096)
def _compile(condition: str) -> _Node | None:
    try:
        tokens = _tokens(condition)
        parser = _Parser(tokens)
        node = parser.expression()
    except _Unreadable:
        return None
    return node if parser.position == len(tokens) else None


def _tokens(text: str) -> list[str | _Word]:
    out: list[str | _Word] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        two = text[i : i + 2]
        if two in ("[[", "]]", "&&", "||"):
            out.append(two)
            i += 2
            continue
        alone = i + 1 >= n or text[i + 1].isspace()  # `!` and `[` as words, not `!=`
        if c in "()" or (c in "[]!" and alone):
            out.append(c)
            i += 1
            continue
        parts: list[tuple[str, bool]] = []
        while i < n and not text[i].isspace() and text[i : i + 2] not in ("&&", "||", "]]"):
            c = text[i]
            if c in "()":
                break
            if c in "\"'":
                end = text.find(c, i + 1)
                if end < 0:
                    raise _Unreadable
                parts.append((text[i + 1 : end], True))
                i = end + 1
            else:
                start = i
                while (
                    i < n
                    and not text[i].isspace()
                    and text[i] not in "\"'()"
                    and text[i : i + 2] not in ("&&", "||", "]]")
                ):
                    i += 1
                parts.append((text[start:i], False))
        out.append(_Word(tuple(parts)))
    return out


_UNKNOWN = _Node("unknown")


class _Parser:
    """`||` over `&&` over `!` over `[[ ]]` / `[ ]` / `( )` groups and single tests."""

    def __init__(self, tokens: list[str | _Word]) -> None:
        self.tokens = tokens
        self.position = 0

    def _peek(self) -> str | _Word | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _take(self) -> str | _Word:
        token = self._peek()
        if token is None:
            raise _Unreadable
        self.position += 1
        return token

    def expression(self) -> _Node:
        children = [self._and()]
        while self._peek() == "||":
            self._take()
            children.append(self._and())
        return children[0] if len(children) == 1 else _Node("or", tuple(children))

    def _and(self) -> _Node:
        children = [self._not()]
        while self._peek() == "&&":
            self._take()
            children.append(self._not())
        return children[0] if len(children) == 1 else _Node("and", tuple(children))

    def _not(self) -> _Node:
        if self._peek() == "!":
            self._take()
            return _Node("not", (self._not(),))
        return self._primary()

    def _primary(self) -> _Node:
        token = self._take()
        closing = {"[[": "]]", "[": "]", "(": ")"}.get(token) if isinstance(token, str) else None
        if closing is not None:
            node = self.expression()
            if self._take() != closing:
                raise _Unreadable
            return node
        if not isinstance(token, _Word):
            raise _Unreadable
        return self._test(token)

    def _test(self, first: _Word) -> _Node:
        text = first.text
        if text in ("-n", "-z") and not first.quoted:
            operand = self._take()
            if not isinstance(operand, _Word):
                raise _Unreadable
            return _Node("nonempty" if text == "-n" else "empty", left=operand)
        if text.startswith("-") and not first.quoted:
            self._take()  # a file test (-d, -f): not about the job
            return _UNKNOWN
        following = self._peek()
        if isinstance(following, _Word) and following.text in ("==", "=", "!=", "=~"):
            op = following.text
            self._take()
            right = self._take()
            if not isinstance(right, _Word):
                raise _Unreadable
            if op == "=~":
                return _UNKNOWN
            return _Node("match", left=first, right=right, negate=op == "!=")
        if not first.quoted and "$" not in text:
            return _UNKNOWN  # a command (`uses_watchtower_shared_fs`), not a test
        return _Node("truthy", left=first)


def _escape_glob(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


# -- a job's variables ---------------------------------------------------------------------


def job_variables(
    *,
    framework: str,
    model_prefix: str,
    precision: str,
    model: str,
    scenario: str,
    spec_decoding: str,
    config_file: str,
    recipe_text: str | None,
) -> dict[str, str]:
    """The variables a launcher's clone choice reads, as the multinode workflow
    (benchmark-multinode-tmpl.yml) exports them for a master entry's job, and
    `USES_DCGM_POWER` as launch_gb200-nv.sh / launch_gb300-nv.sh compute it from the recipe
    in the tree (`recipe_text`; None: not in the tree, so the lane is off)."""
    return {
        "FRAMEWORK": framework,
        "MODEL_PREFIX": model_prefix,
        "PRECISION": precision,
        "MODEL": model,
        "IS_AGENTIC": "1" if scenario == "agentic-coding" else "0",
        "SCENARIO_TYPE": scenario,
        "SPEC_DECODING": spec_decoding,
        "CONFIG_FILE": config_file,
        "USES_DCGM_POWER": "1" if recipe_text and uses_dcgm_power(recipe_text) else "0",
    }


def uses_dcgm_power(recipe_text: str) -> bool:
    """The launchers' awk over the recipe file: a top-level `telemetry:` block with the
    lines `  provider: dcgm-power` and `  enabled: true` (as written, not as YAML)."""
    inside = provider = enabled = False
    for line in recipe_text.splitlines():
        if line.startswith("telemetry:"):
            inside = True
            continue
        if inside and line[:1] not in ("", " "):
            inside = False
        if inside and line == "  provider: dcgm-power":
            provider = True
        if inside and line == "  enabled: true":
            enabled = True
    return provider and enabled
