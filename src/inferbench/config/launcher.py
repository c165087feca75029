"""Best-effort reader of `runners/launch_<cluster>.sh` model routing.

Multinode launchers pick the staged weights with an if/elif chain on
`$MODEL_PREFIX` / `$PRECISION` (sometimes `$FRAMEWORK`) that exports
`MODEL_PATH` and `SRT_SLURM_MODEL_PREFIX` (the srtslurm.yaml alias). This reads
that chain into a table; branches it cannot read with certainty (`||`, globs,
`!=`, `else`, values built from variables, `case`) are listed with the reason,
never guessed.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

from inferbench.config.launcher_srt_ref import SrtClone, SrtCloneTable, read_clone_table
from inferbench.config.shellif import ELSE, FI, code, opens
from inferbench.core.errors import ConfigError
from inferbench.core.fsread import MAX_CONFIG_BYTES, read_text_file

ROUTING_VARS = ("MODEL_PREFIX", "PRECISION", "FRAMEWORK")
MODEL_VAR = "MODEL"  # the job's model id: a branch may pick weights by a glob on it
EXPORTS = {"MODEL_PATH": "model_path", "SRT_SLURM_MODEL_PREFIX": "alias"}

_CASE = re.compile(r"^\s*case\b")
_ESAC = re.compile(r"^\s*esac\b")
_ASSIGN_VALUE = r"=(\"[^\"]*\"|'[^']*'|[^\s;#]*)"


def _assign_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(rf"(?:^|[\s;)])(?:export\s+)?({alternatives}){_ASSIGN_VALUE}")


_ASSIGN = _assign_pattern(tuple(EXPORTS))
# the srtslurm.yaml the launcher writes (a heredoc): `model_paths:` / `containers:` blocks
_BLOCK = re.compile(r"^(model_paths|containers):\s*$")
_BLOCK_ENTRY = re.compile(r"^  (\"[^\"]*\"|'[^']*'|[^\s:#\"']+):\s*(\S.*?)?\s*$")
_BLOCK_VAR_LINE = re.compile(r"^\$\{?(\w+)\}?\s*$")  # `${MODEL_PATHS_EXTRA}`: more entries
_YAML_KEY = re.compile(r"\"([^\"]+)\"\s*:|'([^']+)'\s*:")
_VAR_REF = re.compile(r"^\$\{?(\w+)\}?$")
_COMPARE = re.compile(r"\"?\$\{?(\w+)\}?\"?\s*(==|=|!=|=~)\s*(\"[^\"]*\"|'[^']*'|[^\s\]\)&|;]+)")


@dataclass(frozen=True)
class LauncherRow:
    """(model-prefix, precision[, framework]) -> (MODEL_PATH, SRT_SLURM_MODEL_PREFIX)."""

    model_prefix: str
    precision: str
    framework: str | None
    model_path: str | None
    alias: str | None
    line: int  # the if/elif line of the branch
    model_path_line: int | None = None
    alias_line: int | None = None
    extra_aliases: tuple[str, ...] = ()  # model_paths keys a branch adds (MODEL_PATHS_EXTRA)
    model_path_default: str | None = None  # MODEL_PATH as written when read as its default
    # one model-prefix/precision may route by the job's $MODEL too (launch_b200-dgxc.sh:
    # `$MODEL == *NVFP4-V2` before the plain qwen3.5 fp4 branch): the glob this branch tests,
    # and those of earlier branches of its chain for the same route, whose models it never gets
    model_match: str | None = None
    model_excludes: tuple[str, ...] = ()

    def serves_model(self, model: str) -> bool:
        """Whether a job benchmarking `model` (a master entry's `model`) takes this branch."""
        if self.model_match is not None and not fnmatch.fnmatchcase(model, self.model_match):
            return False
        return not any(fnmatch.fnmatchcase(model, other) for other in self.model_excludes)


@dataclass(frozen=True)
class AliasOverride:
    """A branch that only renames the alias of a routed model for some jobs
    (`elif [[ $IS_AGENTIC == "1" && $FRAMEWORK == "dynamo-trt" && $MODEL_PREFIX == "dsv4" ]]`
    setting SRT_SLURM_MODEL_PREFIX): those jobs' srtslurm.yaml key the routed MODEL_PATH by it."""

    model_prefix: str
    framework: str | None
    alias: str
    line: int

    def applies(self, row: LauncherRow) -> bool:
        if row.model_prefix != self.model_prefix:
            return False
        return self.framework is None or row.framework in (None, self.framework)


@dataclass(frozen=True)
class UnreadableBranch:
    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class LauncherTable:
    cluster: str
    path: Path
    names: tuple[str, ...]  # every launcher file name for this cluster (symlinks included)
    rows: tuple[LauncherRow, ...]
    unreadable: tuple[UnreadableBranch, ...]
    uses_slurm: bool = False
    uses_pyxis: bool = False
    # the srtslurm.yaml it writes: model_paths keys (as written, e.g. "${MODEL_PREFIX}") and
    # container aliases -> value as written ("${SQUASH_FILE}")
    alias_keys: tuple[str, ...] = ()
    containers: tuple[tuple[str, str], ...] = ()
    image_vars: frozenset[str] = frozenset()  # variables always derived from $IMAGE
    # every literal SRT_SLURM_MODEL_PREFIX the script assigns, routed or not (a branch the
    # table cannot follow, e.g. on $IS_AGENTIC, may still be the one a job takes)
    assigned_aliases: frozenset[str] = frozenset()
    alias_overrides: tuple[AliasOverride, ...] = ()
    # which srt-slurm repository and ref each job clones (`launcher_srt_ref`)
    srt_clones: SrtCloneTable | None = None

    @property
    def srt_slurm_ref(self) -> SrtClone | None:
        """The srt-slurm every job of this launcher clones (None: it picks one per job, or
        names none): the clone table's one outcome, never a second reading of the script."""
        return self.srt_clones.single() if self.srt_clones is not None else None

    def aliases(self, row: LauncherRow | None, model_prefix: str) -> set[str | None]:
        """Every model_paths alias the launcher writes for a job routed through `row` (an
        override branch's alias included: it keys the same path for the jobs it selects)."""
        if not self.alias_keys:  # no srtslurm.yaml block found: the routed alias only
            return {row.alias if row is not None else None}
        out: set[str | None] = set(row.extra_aliases if row is not None else ())
        if row is not None and any(k == "${SRT_SLURM_MODEL_PREFIX}" for k in self.alias_keys):
            out.update(o.alias for o in self.alias_overrides if o.applies(row))
        for key in self.alias_keys:
            variable = _VAR_REF.match(key)
            if variable is None:
                out.add(key)
            elif variable.group(1) == "SRT_SLURM_MODEL_PREFIX":
                out.add(row.alias if row is not None else None)
            elif variable.group(1) == "MODEL_PREFIX":
                out.add(model_prefix)
        return out

    def container_source(self, container: str) -> str | None:
        """What a recipe `model.container` resolves to through this launcher's aliases:
        "image" (the master entry's image), "other" (a file the launcher picks itself, not
        provably the image), or None (not an alias here)."""
        for key, value in self.containers:
            if _VAR_REF.match(key):
                continue  # keyed by a variable (the image itself): compared as the image
            if key == container:
                ref = _VAR_REF.match(value)
                return "image" if ref is not None and ref.group(1) in self.image_vars else "other"
        return None

    @property
    def container_aliases(self) -> frozenset[str]:
        """The literal container alias names the launcher's srtslurm.yaml defines."""
        return frozenset(k for k, _ in self.containers if not _VAR_REF.match(k))

    def lookup(
        self,
        model_prefix: str,
        precision: str,
        framework: str | None = None,
        model: str | None = None,
    ) -> LauncherRow | None:
        """The branch a job takes: framework-specific ones first; with `model`, only the
        branches that job's $MODEL takes."""
        hits = [
            r
            for r in self.rows
            if (r.model_prefix, r.precision) == (model_prefix, precision)
            and (r.framework is None or framework is None or r.framework == framework)
            and (model is None or r.serves_model(model))
        ]
        hits.sort(key=lambda r: r.framework is None)
        return hits[0] if hits else None


@dataclass
class _Branch:
    line: int
    text: str
    conditions: list[str]  # this branch's condition and its enclosing ones
    values: dict[str, tuple[str, int]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    siblings: list[str] = field(default_factory=list)  # earlier conditions of the same chain
    defaults: dict[str, str] = field(default_factory=dict)  # name -> `${VAR:-...}` as written


def cluster_name(path: Path) -> str:
    """`runners/launch_b200-dgxc.sh` -> `b200-dgxc`."""
    return path.stem.removeprefix("launch_")


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _scan(
    lines: list[str], assign: re.Pattern[str] = _ASSIGN, constants: dict[str, str] | None = None
) -> list[_Branch]:
    """Walk the if/elif/else/fi structure; return every branch that assigns an export."""
    stack: list[_Branch] = []  # the open branch of each enclosing `if`
    branches: list[_Branch] = []
    case_depth = 0
    for number, raw in enumerate(lines, start=1):
        line = code(raw)
        if _CASE.match(line):
            case_depth += 1
        elif _ESAC.match(line):
            case_depth = max(case_depth - 1, 0)
        opened = opens(line)
        if opened is not None:
            kind, cond = opened
            siblings: list[str] = []
            if kind == "elif" and stack:
                previous = stack.pop()
                siblings = [*previous.siblings, previous.conditions[-1]]
            parents = [b.conditions[-1] for b in stack]
            branch = _Branch(number, line.strip(), [*parents, cond], siblings=siblings)
            stack.append(branch)
            branches.append(branch)
            continue
        if ELSE.match(line) and stack:
            previous = stack.pop()
            parents = [b.conditions[-1] for b in stack]
            siblings = [*previous.siblings, previous.conditions[-1]]
            branch = _Branch(number, "else", [*parents, "else"], siblings=siblings)
            stack.append(branch)
            branches.append(branch)
            continue
        if FI.match(line) and stack:
            stack.pop()
            continue
        found = assign.search(line)
        if found and stack:
            branch = stack[-1]
            name, value = found.group(1), _unquote(found.group(2).strip())
            if case_depth:
                branch.problems.append("assignment inside a case statement")
            if "$" in value or "`" in value:
                resolved = _defaulted(value, constants or {})
                if resolved is None:
                    branch.problems.append(f"{name} is built from variables ({value})")
                else:
                    branch.defaults[name] = value
                    value = resolved
            branch.values[name] = (value, number)
    return [b for b in branches if b.values]


_DEFAULTED = re.compile(r"^\$\{(\w+):?-(.*)\}$")
_VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def _defaulted(value: str, constants: dict[str, str]) -> str | None:
    """`${MODEL_PATH:-$ROOT/DeepSeek-V4-Pro}`: the value the launcher uses when the variable
    is not set (nothing in the workflows sets it), with top-level constants filled in
    (`ROOT="/scratch/models"`); None when anything else is left to the run."""
    match = _DEFAULTED.match(value)
    if match is None:
        return None
    default = _VARIABLE.sub(lambda m: constants.get(m.group(1) or m.group(2), "\0"), match[2])
    return None if "$" in default or "`" in default or "\0" in default else default


def _constants(text: str) -> dict[str, str]:
    """Top-level variables assigned one literal (`X="/lit"` or `X="${X:-/lit}"`), once."""
    seen: dict[str, set[str]] = {}
    for match in re.finditer(r"(?m)^(?:export\s+)?(\w+)=(\S+)\s*$", text):
        name, value = match.group(1), _unquote(match.group(2))
        own = _DEFAULTED.match(value)
        if own is not None and own[1] == name and "$" not in own[2]:
            value = own[2]
        seen.setdefault(name, set()).add(value)
    return {n: next(iter(v)) for n, v in seen.items() if len(v) == 1 and "$" not in next(iter(v))}


def _else_on_framework_only(branch: _Branch) -> bool:
    """An `else` after branches that only pick a $FRAMEWORK: the generic route of the
    model/precision the enclosing branch names."""
    if not branch.siblings:
        return False
    for cond in branch.siblings:
        compared = _COMPARE.findall(cond)
        if not compared or "||" in cond or any(var != "FRAMEWORK" for var, _, _ in compared):
            return False
    return True


def _constraints(branch: _Branch) -> tuple[dict[str, str], list[str]]:
    found: dict[str, str] = {}
    problems = list(branch.problems)
    for cond in branch.conditions:
        if cond == "else":
            if not _else_on_framework_only(branch):
                problems.append("an else branch names no model/precision")
            continue
        if "||" in cond or " -o " in cond:
            problems.append("condition uses ||")
        for var, op, raw in _COMPARE.findall(cond):
            value = _unquote(raw)
            if var == MODEL_VAR and cond is branch.conditions[-1]:
                if op in ("!=", "=~") or MODEL_VAR in found:
                    problems.append(f"${var} is matched by {op} {value} (not one glob)")
                found[MODEL_VAR] = value
                continue
            if var not in ROUTING_VARS:
                continue
            if op in ("!=", "=~") or any(c in value for c in "*?["):
                problems.append(f"${var} is matched by {op} {value} (not an exact value)")
            elif var in found and found[var] != value:
                problems.append(f"${var} compared to two values")
            else:
                found[var] = value
    if not problems:
        for var in ("MODEL_PREFIX", "PRECISION"):
            if var not in found:
                problems.append(f"no exact ${var} in the condition")
    return found, problems


def _model_excludes(branch: _Branch, found: dict[str, str]) -> tuple[str, ...]:
    """The $MODEL globs of earlier branches of the chain that test the same route: the jobs
    they take never reach this branch."""
    out: list[str] = []
    for cond in branch.siblings:
        if cond == "else" or "||" in cond:
            continue
        tested = {var: _unquote(raw) for var, op, raw in _COMPARE.findall(cond) if op != "!="}
        if MODEL_VAR not in tested:
            continue
        if all(tested.get(var, found.get(var)) == found.get(var) for var in ROUTING_VARS):
            out.append(tested[MODEL_VAR])
    return tuple(out)


def _alias_override(
    branch: _Branch, found: dict[str, str], problems: list[str]
) -> AliasOverride | None:
    """A branch setting only a literal SRT_SLURM_MODEL_PREFIX for one $MODEL_PREFIX (and maybe
    one $FRAMEWORK), whatever else it tests (`$IS_AGENTIC`): an alias override."""
    if set(branch.values) != {"SRT_SLURM_MODEL_PREFIX"} or "MODEL_PREFIX" not in found:
        return None
    if problems != ["no exact $PRECISION in the condition"] or "else" in branch.conditions:
        return None
    value, line = branch.values["SRT_SLURM_MODEL_PREFIX"]
    if branch.defaults or "$" in value or MODEL_VAR in found:
        return None
    return AliasOverride(found["MODEL_PREFIX"], found.get("FRAMEWORK"), value, line)


def _srtslurm_blocks(
    lines: list[str],
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The model_paths keys, the variables expanded among them (extra entries), and the
    container aliases of the srtslurm.yaml heredoc(s) a launcher writes."""
    alias_keys: list[str] = []
    extra_vars: list[str] = []
    containers: dict[str, str] = {}
    block: str | None = None
    for line in lines:
        start = _BLOCK.match(line)
        if start:
            block = start.group(1)
            continue
        if block is None:
            continue
        entry = _BLOCK_ENTRY.match(line)
        var_line = _BLOCK_VAR_LINE.match(line)
        if entry:
            key, value = _unquote(entry.group(1)), _unquote((entry.group(2) or "").strip())
            if block == "model_paths":
                alias_keys.append(key)
            else:
                containers.setdefault(key, value)
        elif var_line and block == "model_paths":
            extra_vars.append(var_line.group(1))
        else:
            block = None
    return tuple(dict.fromkeys(alias_keys)), tuple(extra_vars), tuple(containers.items())


def _image_vars(text: str) -> frozenset[str]:
    """Variables every assignment of which is computed from $IMAGE (a squash file of it)."""
    seen: dict[str, bool] = {}
    for match in re.finditer(r"(?m)^\s*(?:export\s+)?(\w+)=(.*)$", text):
        name, value = match.group(1), match.group(2)
        derived = bool(re.search(r"\$\{?IMAGE\}?\b", value))
        seen[name] = seen.get(name, True) and derived
    return frozenset(name for name, derived in seen.items() if derived)


def parse_launcher(text: str, path: Path) -> LauncherTable:
    """Read the routing table of one launcher script (text already read)."""
    lines = text.splitlines()
    rows: list[LauncherRow] = []
    unreadable: list[UnreadableBranch] = []
    alias_keys, extra_vars, containers = _srtslurm_blocks(lines)
    constants = _constants(text)
    assign = _assign_pattern((*EXPORTS, *extra_vars)) if extra_vars else _ASSIGN
    overrides: list[AliasOverride] = []
    for branch in _scan(lines, assign, constants):
        found, problems = _constraints(branch)
        override = _alias_override(branch, found, problems)
        if override is not None:
            overrides.append(override)
            continue
        if problems:
            unreadable.append(UnreadableBranch(branch.line, branch.text, "; ".join(problems)))
            continue
        model_path = branch.values.get("MODEL_PATH")
        alias = branch.values.get("SRT_SLURM_MODEL_PREFIX")
        extras = tuple(
            key
            for var in extra_vars
            if var in branch.values
            for pair in _YAML_KEY.findall(branch.values[var][0])
            for key in pair
            if key
        )
        if model_path is None and alias is None and not extras:
            continue
        rows.append(
            LauncherRow(
                model_prefix=found["MODEL_PREFIX"],
                precision=found["PRECISION"],
                framework=found.get("FRAMEWORK"),
                model_path=model_path[0] if model_path else None,
                alias=alias[0] if alias else None,
                line=branch.line,
                model_path_line=model_path[1] if model_path else None,
                alias_line=alias[1] if alias else None,
                extra_aliases=extras,
                model_path_default=branch.defaults.get("MODEL_PATH"),
                model_match=found.get(MODEL_VAR),
                model_excludes=_model_excludes(branch, found),
            )
        )
    clones = read_clone_table(text, constants) if "srt-slurm" in text else None
    return LauncherTable(
        cluster=cluster_name(path),
        path=path,
        names=(path.name,),
        rows=tuple(rows),
        unreadable=tuple(unreadable),
        uses_slurm=bool(re.search(r"\b(sbatch|srun|salloc|srtctl)\b", text)),
        uses_pyxis="--container-image" in text,
        alias_keys=alias_keys,
        containers=containers,
        image_vars=_image_vars(text),
        alias_overrides=tuple(overrides),
        srt_clones=clones,
        assigned_aliases=frozenset(
            _unquote(m.group(2).strip())
            for m in _ASSIGN.finditer(text)
            if m.group(1) == "SRT_SLURM_MODEL_PREFIX" and "$" not in m.group(2)
        ),
    )


def _git_symlink_target(path: Path, text: str) -> Path | None:
    """A symlink checked out as a plain file (git without symlink support writes the target
    path as the file's only content): the file it names, if that exists beside it."""
    target = text.strip()
    if not target or "\n" in target or len(target) > 255 or " " in target:
        return None
    candidate = path.parent / target
    return candidate if candidate.is_file() and candidate.resolve() != path.resolve() else None


def read_launcher(path: Path) -> LauncherTable:
    """Read one launcher; a symlink is read through to its target."""
    path = Path(path)
    real = path.resolve()
    text = read_text_file(real, MAX_CONFIG_BYTES, error=ConfigError, what="launcher")
    target = _git_symlink_target(real, text)
    if target is not None:
        return read_launcher(target)
    table = parse_launcher(text, real)
    return table


def read_launchers(paths: list[Path]) -> dict[str, LauncherTable]:
    """Tables by cluster name; symlinked launchers fold into their target's table."""
    by_target: dict[Path, tuple[LauncherTable, list[str]]] = {}
    for path in sorted(paths):
        table = read_launcher(Path(path))
        real = table.path.resolve()
        if real not in by_target:
            by_target[real] = (table, [])
        by_target[real][1].append(Path(path).name)
    tables: dict[str, LauncherTable] = {}
    for table, names in by_target.values():
        all_names = tuple(sorted({table.path.name, *names}))
        tables[table.cluster] = _with_names(table, all_names)
    return tables


def _with_names(table: LauncherTable, names: tuple[str, ...]) -> LauncherTable:
    return dataclasses.replace(table, names=names)
