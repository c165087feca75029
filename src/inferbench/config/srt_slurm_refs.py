"""The srt-slurm trees `--srt-slurm` is given (check, plan, run), each at the ref it holds.

InferenceX's launchers clone srt-slurm at a ref per job (tags, branches, pinned commits),
and each ref has its own recipes and its own srtctl schema. `--srt-slurm` takes, once or
more:

- a git repository (a clone, bare or not) or a git bundle (`git bundle create`): every ref
  it holds. A ref is found by name (tag, branch, remote branch, commit id) or, for a pinned
  commit, as a tag `commit-<sha>` (how the srt-slurm refs bundle names them). A clone's
  working tree is the ref it is at (its HEAD: the branch, the tags on it, the commit);
- a plain copy (a folder with `recipes/` and no git): the ref named after it,
  `PATH@REF` or `PATH@OWNER/NAME@REF` (a fork's copy); unnamed, its ref is unknown.

Each source is used only for the refs it holds. A copy whose ref is unknown stands in for
every ref only when it is all that was given (as a single checkout always did); beside a
source that holds refs by name it stands in for none (`SrtSlurmSources.unnamed` lists it).

A ref in use is unpacked once (its `recipes/`, `src/` and `pyproject.toml`, with
`git archive`) into the cache folder, under its commit id; a bundle is cloned there once,
under its content hash. Each tree's schema is derived from its own `src/srtctl`
(`srtctl_source_schema`), cached by the content of the modules it read; a tree without
srtctl sources is judged with the bundled schema, and says so.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from inferbench.config import parse_cache
from inferbench.config.srtctl_schema import SrtctlSchema, schema_from_tree, srtctl_schema
from inferbench.config.srtctl_source_schema import SchemaSourceError, derive_tree
from inferbench.core.errors import InputError

# the repository InferenceX's launchers clone unless they name a fork; a source without a
# remote that says otherwise (a bundle, a plain checkout) is taken to be a copy of it
UPSTREAM_REPOSITORY = "NVIDIA/srt-slurm"
FOLDER = "srt-slurm-refs"
_SCHEMA_FOLDER = "srtctl-schema-v1"
_SCHEMA_VERSION = "srtctl-source-schema-1"  # bump when derive_tree's output changes
_GIT_TIMEOUT = 120
# in an unpacked tree: its commit and ref label (-2: all of src/srtctl, templates included,
# so that the ref's own srtctl runs from it; an older unpack is redone)
_MARK = ".inferbench-srt-slurm-ref-2"
_REPO_URL = re.compile(r"[:/]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")


def repository_name(url: str) -> str | None:
    """`https://github.com/NVIDIA/srt-slurm.git` -> `NVIDIA/srt-slurm` (None: not a URL
    of that shape)."""
    match = _REPO_URL.search(url.strip())
    return f"{match.group(1)}/{match.group(2)}" if match else None


@dataclass(frozen=True, eq=False)
class SrtTree:
    """One srt-slurm tree: its folder (holding `recipes/`), which repository and ref it is
    (ref None: a checkout whose ref is unknown) and the srtctl schema its source defines."""

    root: Path
    repository: str
    ref: str | None
    schema: SrtctlSchema
    # a ref unpacked into the cache holds only the recipes asked for (`fetch_recipes`)
    source: _GitSource | None = field(default=None, compare=False, repr=False)
    commit: str | None = None

    @property
    def label(self) -> str:
        """How findings name it: `NVIDIA/srt-slurm@v1.0.50`, or the checkout's folder."""
        return f"{self.repository}@{self.ref}" if self.ref else self.root.name

    def fetch_recipes(self, relative: Sequence[str]) -> None:
        """Make these files of `recipes/` (paths below it) present in an unpacked ref, those
        the ref holds; one `git archive` for all that are missing. A checkout has them all."""
        if self.source is None or self.commit is None:
            return
        held = _recipe_listing(self.source, self.commit, self.root)
        wanted = sorted({f"recipes/{r}" for r in relative} & held)
        missing = [w for w in wanted if not (self.root / w).is_file()]
        if missing:
            _extract(self.source, self.commit, self.root, missing)


@dataclass(frozen=True)
class SourceSpec:
    """One `--srt-slurm` value: the path, and for a plain copy the ref (and repository)
    written after it (`PATH@REF`, `PATH@OWNER/NAME@REF`)."""

    path: Path
    ref: str | None = None
    repository: str | None = None


def parse_source(text: str | Path) -> SourceSpec:
    """`PATH`, `PATH@REF` or `PATH@OWNER/NAME@REF`; a path that exists as written is a path,
    `@` and all."""
    written = str(text)
    if Path(written).exists() or "@" not in written:
        return SourceSpec(Path(written))
    cut = [i for i, c in enumerate(written) if c == "@" and Path(written[:i]).exists()]
    if not cut:
        return SourceSpec(Path(written))  # refused as a missing path by SrtSlurmSources
    path, spec = Path(written[: cut[-1]]), written[cut[-1] + 1 :]
    repository, _, ref = spec.rpartition("@") if "@" in spec else ("", "", spec)
    if not ref or ref.startswith("-") or any(c.isspace() or ord(c) < 32 for c in ref):
        raise InputError(
            f"--srt-slurm {written}: {ref!r} is not a git ref",
            hint=f"name the copy's ref as PATH@REF (a branch, tag or commit), e.g. {path}@main",
        )
    if repository and not re.fullmatch(r"[\w.-]+/[\w.-]+", repository):
        raise InputError(
            f"--srt-slurm {written}: {repository!r} is not a repository owner/name",
            hint=f"write PATH@OWNER/NAME@REF, e.g. {path}@NVIDIA/srt-slurm@{ref}",
        )
    return SourceSpec(path, ref, repository or None)


def absolute_source(text: str | Path) -> str:
    """A `--srt-slurm` value with its path made absolute (the ref after it kept), as a run
    records it to be resumed from anywhere."""
    spec = parse_source(text)
    written = str(spec.path.resolve())
    if spec.ref is not None:
        written += f"@{spec.repository}@{spec.ref}" if spec.repository else f"@{spec.ref}"
    return written


@dataclass
class _GitSource:
    git_dir: Path
    repository: str
    given: Path
    worktree: Path | None = None  # a clone's working tree (with recipes/): the ref at HEAD
    _commits: dict[str, str | None] = field(default_factory=dict)
    _refs: dict[str, str] | None = None

    def commit(self, ref: str) -> str | None:
        """The commit `ref` names here (None: not held)."""
        if ref not in self._commits:
            self._commits[ref] = self._find(ref)
        return self._commits[ref]

    def head(self) -> tuple[str, str] | None:
        """A clone's working tree: (its HEAD commit, how it is named: the branch, else a tag
        on it, else the commit)."""
        commit = self.commit("HEAD") if self.worktree is not None else None
        if commit is None:
            return None
        done = _git(self.git_dir, "symbolic-ref", "--quiet", "--short", "HEAD")
        name = done.stdout.decode().strip() if done.returncode == 0 else ""
        if not name:
            tags = sorted(
                n.removeprefix("refs/tags/")
                for n, c in self._names().items()
                if c == commit and n.startswith("refs/tags/")
            )
            name = tags[0] if tags else commit
        return commit, name

    def _find(self, ref: str) -> str | None:
        if ref.startswith("-") or not ref:
            return None
        names = self._names()
        for candidate in (f"refs/tags/{ref}", f"refs/heads/{ref}", f"refs/remotes/origin/{ref}"):
            if candidate in names:
                return names[candidate]
        if re.fullmatch(r"[0-9a-f]{7,40}", ref):
            # a pinned commit: the refs bundle keeps it as tag commit-<sha> (its own commit
            # ids differ); an abbreviated one matches the one tag it starts
            tags = [n for n in names if n.startswith(f"refs/tags/commit-{ref}")]
            if len(tags) == 1:
                return names[tags[0]]
            done = _git(self.git_dir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
            if done.returncode == 0 and done.stdout.strip():
                return done.stdout.decode().strip()
        if ref == "HEAD":
            done = _git(self.git_dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
            if done.returncode == 0 and done.stdout.strip():
                return done.stdout.decode().strip()
            return self._find("main")  # a bundle records no default branch: GitHub's, main
        return None

    def _names(self) -> dict[str, str]:
        """Every ref name -> its commit (an annotated tag peeled), read with one git call."""
        if self._refs is None:
            done = _git(
                self.git_dir, "for-each-ref", "--format=%(objectname) %(*objectname) %(refname)"
            )
            self._refs = {}
            for line in done.stdout.decode().splitlines() if done.returncode == 0 else []:
                parts = line.split()
                if len(parts) == 3:
                    self._refs[parts[2]] = parts[1]
                elif len(parts) == 2:
                    self._refs[parts[1]] = parts[0]
        return self._refs


class SrtSlurmSources:
    """Every tree `--srt-slurm` names, looked up by (repository, ref); each source only for
    the refs it holds."""

    def __init__(self, paths: Sequence[Path | str | SourceSpec]) -> None:
        specs = [p if isinstance(p, SourceSpec) else parse_source(p) for p in paths]
        self.given = tuple(s.path for s in specs)
        self._held: list[_GitSource | SrtTree] = []  # in the order given
        self._unnamed: list[SrtTree] = []  # plain copies whose ref is unknown
        self._trees: dict[tuple[str, str], SrtTree | None] = {}
        for spec in specs:
            self._add(spec)

    @property
    def checkout(self) -> SrtTree | None:
        """The tree for a job whose ref no source holds (or whose launcher names no ref
        inferbench can read): the first copy of unknown ref, when nothing but such copies
        was given; None beside any source whose refs are known."""
        return self._unnamed[0] if self._unnamed and not self._held else None

    @property
    def unnamed(self) -> tuple[SrtTree, ...]:
        """Copies of unknown ref given beside sources of known refs: used for no job."""
        return tuple(self._unnamed) if self._held else ()

    @property
    def has_refs(self) -> bool:
        """Whether a source holds refs by name (a git repository, a bundle, a named copy)."""
        return bool(self._held)

    def at(self, repository: str, ref: str) -> SrtTree | None:
        """The tree of `repository` at `ref`, if a source holds it."""
        key = (repository.lower(), ref)
        if key not in self._trees:
            self._trees[key] = self._lookup(repository, ref)
        return self._trees[key]

    def _lookup(self, repository: str, ref: str) -> SrtTree | None:
        for source in self._held:
            if source.repository.lower() != repository.lower():
                continue
            if isinstance(source, SrtTree):  # a copy named PATH@REF
                if source.ref == ref or (ref == "HEAD" and source.ref == "main"):
                    return source
                continue
            commit = source.commit(ref)
            if commit is None:
                continue
            label = f"{source.repository}@{ref}"
            head = source.head()
            if head is not None and head[0] == commit and source.worktree is not None:
                # the clone's own working tree: the files a user would submit from
                schema = tree_schema(source.worktree, label)
                return SrtTree(source.worktree, source.repository, ref, schema, None, commit)
            root = _unpacked(source, commit, label)
            return SrtTree(root, source.repository, ref, tree_schema(root, label), source, commit)
        return None

    def _add(self, spec: SourceSpec) -> None:
        path = spec.path
        if path.is_file():
            self._refuse_named(spec, "a git bundle")
            self._held.append(_bundle_source(path))
            return
        if not path.is_dir():
            raise InputError(
                f"--srt-slurm {path}: no such file or folder",
                hint="give an srt-slurm checkout (PATH or PATH@REF), a git clone of srt-slurm "
                "or a git bundle",
            )
        git_dir = _git_dir(path)
        has_recipes = (path / "recipes").is_dir()
        if git_dir is not None:
            self._refuse_named(spec, "a git repository")
            origin = _origin(git_dir) or UPSTREAM_REPOSITORY
            self._held.append(_GitSource(git_dir, origin, path, path if has_recipes else None))
            return
        if not has_recipes:
            raise InputError(
                f"--srt-slurm {path} has no recipes/ folder and is not a git repository",
                hint="point it at a checkout of the srt-slurm repository, a clone or a bundle",
            )
        repository = spec.repository or UPSTREAM_REPOSITORY
        if spec.ref is None:
            self._unnamed.append(SrtTree(path, repository, None, tree_schema(path, path.name)))
            return
        label = f"{repository}@{spec.ref}"
        self._held.append(SrtTree(path, repository, spec.ref, tree_schema(path, label)))

    @staticmethod
    def _refuse_named(spec: SourceSpec, what: str) -> None:
        if spec.ref is not None:
            raise InputError(
                f"--srt-slurm {spec.path}@{spec.ref}: {spec.path} is {what}, whose refs are "
                "known by name",
                hint=f"give it as {spec.path}: each job takes the ref its launcher clones",
            )


def tree_schema(root: Path, origin: str) -> SrtctlSchema:
    """The schema `root/src/srtctl` defines (cached by the bytes of the modules read); the
    bundled one when the tree has no srtctl sources."""
    src = root / "src"
    schema_file = src / "srtctl" / "core" / "schema.py"
    try:
        head = schema_file.read_bytes()
    except OSError:
        return srtctl_schema()
    version = _project_version(root)
    key = hashlib.sha256(f"{_SCHEMA_VERSION}\0{version}\0".encode() + head).hexdigest()
    stored = parse_cache.load(key, _SCHEMA_FOLDER)
    if isinstance(stored, tuple) and len(stored) == 2 and _still(src, stored[0]):
        return schema_from_tree(json.loads(stored[1]), origin)
    read: dict[str, str] = {}

    def reader(name: str) -> str | None:
        try:
            text = (src / name).read_text()
        except (OSError, UnicodeDecodeError):
            return None
        read[name] = hashlib.sha256(text.encode()).hexdigest()
        return text

    try:
        tree = derive_tree(reader, version)
    except SchemaSourceError:
        return srtctl_schema()
    parse_cache.store(key, (sorted(read.items()), json.dumps(tree)), _SCHEMA_FOLDER)
    return schema_from_tree(tree, origin)


def _still(src: Path, read: list[tuple[str, str]]) -> bool:
    """Every module a stored schema was derived from still has the same text."""
    for name, digest in read:
        try:
            text = (src / name).read_text()
        except (OSError, UnicodeDecodeError):
            return False
        if hashlib.sha256(text.encode()).hexdigest() != digest:
            return False
    return True


def _project_version(root: Path) -> str:
    try:
        text = (root / "pyproject.toml").read_text()
    except OSError:
        return "unknown"
    match = re.search(r'(?m)^version\s*=\s*"([^"]+)"', text)
    return match.group(1) if match else "unknown"


def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", f"--git-dir={git_dir}", *args],
            capture_output=True,
            timeout=_GIT_TIMEOUT,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(
            f"--srt-slurm {git_dir}: git failed ({exc})", hint="is git installed?"
        ) from None


def _git_dir(path: Path) -> Path | None:
    """The git directory of a clone (`.git`) or a bare repository at `path`."""
    bare = (path / "HEAD").is_file() and (path / "objects").is_dir()
    if not (path / ".git").exists() and not bare:
        return None
    done = _git_any(path, "rev-parse", "--absolute-git-dir")
    if done is None or done.returncode != 0:
        return None
    return Path(done.stdout.decode().strip())


def _git_any(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, timeout=_GIT_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _origin(git_dir: Path) -> str | None:
    done = _git(git_dir, "config", "--get", "remote.origin.url")
    if done.returncode != 0:
        return None
    return repository_name(done.stdout.decode())


def _cache_root() -> Path:
    folder = parse_cache.cache_dir(FOLDER)
    if folder is None:  # the cache is off: this process's own folder, removed at exit
        if not _OWN:
            _OWN.append(Path(tempfile.mkdtemp(prefix="inferbench-srt-slurm-")))
            atexit.register(shutil.rmtree, _OWN[0], True)
        folder = _OWN[0]
    folder.mkdir(parents=True, exist_ok=True)
    return folder


_OWN: list[Path] = []


def _bundle_source(path: Path) -> _GitSource:
    """A bundle, cloned once into the cache (a bundle is read through a clone)."""
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:32]
    except OSError as exc:
        raise InputError(f"--srt-slurm {path}: {exc.strerror}") from None
    repos = _cache_root() / "repos"
    target = repos / digest
    if not (target / "HEAD").is_file():
        repos.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".clone-", dir=repos))
        try:
            done = _git_any(
                repos, "clone", "--quiet", "--mirror", str(path.resolve()), str(staging / "git")
            )
            if done is None or done.returncode != 0:
                reason = done.stderr.decode().strip().splitlines()[-1:] if done else ["no git"]
                raise InputError(
                    f"--srt-slurm {path} is neither a folder nor a git bundle git can clone "
                    f"({(reason or ['?'])[0]})",
                    hint="give an srt-slurm checkout, a git clone of srt-slurm or a git bundle",
                )
            with contextlib.suppress(OSError):  # another process stored it first
                os.replace(staging / "git", target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return _GitSource(target, UPSTREAM_REPOSITORY, path)


def _unpacked(source: _GitSource, commit: str, label: str) -> Path:
    """`src/srtctl` and `pyproject.toml` of `commit` (what its schema is derived from, and
    what runs its srtctl: `PYTHONPATH=<root>/src`), unpacked once into the cache; recipes
    come later, only those asked for (`SrtTree.fetch_recipes`). `label`, the first ref it
    was unpacked for, names its files in findings."""
    root = _cache_root() / "trees" / commit
    if (root / _MARK).is_file():
        return root
    listed = _git(
        source.git_dir, "ls-tree", "--name-only", commit, "--", "pyproject.toml", "src/srtctl"
    )
    parts = listed.stdout.decode().split() if listed.returncode == 0 else []
    root.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(root, ignore_errors=True)  # a partial unpack of an interrupted run
    staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=root.parent))
    try:
        if parts:
            _extract(source, commit, staging, parts)
        (staging / "recipes").mkdir(exist_ok=True)
        (staging / _MARK).write_text(f"{commit}\n{label}\n")
        with contextlib.suppress(OSError):  # another process unpacked it first
            os.replace(staging, root)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return root


def _extract(source: _GitSource, commit: str, into: Path, paths: Sequence[str]) -> None:
    """`git archive` these paths of `commit` into the folder `into`."""
    done = _git(source.git_dir, "archive", "--format=tar", commit, "--", *paths)
    if done.returncode != 0:
        raise InputError(
            f"--srt-slurm {source.given}: cannot read commit {commit[:12]}",
            hint="the repository may be damaged; clone it again",
        )
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        archive.extractall(into, filter="data")


def _recipe_listing(source: _GitSource, commit: str, root: Path) -> set[str]:
    """Every file below `recipes/` at `commit` (listed once, kept beside the unpacked tree)."""
    listing = root / ".inferbench-recipes"
    try:
        return set(listing.read_text().splitlines())
    except OSError:
        pass
    done = _git(source.git_dir, "ls-tree", "-r", "--name-only", commit, "--", "recipes")
    names = done.stdout.decode().splitlines() if done.returncode == 0 else []
    with contextlib.suppress(OSError):
        staging = listing.with_suffix(f".{os.getpid()}")
        staging.write_text("\n".join(names) + "\n")
        os.replace(staging, listing)
    return set(names)


def unpacked_label(path: Path) -> tuple[Path, str] | None:
    """For a file of a ref unpacked into the cache: (the tree's root, `owner/name@ref`), so
    that findings name it by its ref rather than by a cache path; None for any other file."""
    for parent in list(path.parents)[:8]:
        if parent.parent.name != "trees":
            continue
        try:
            lines = (parent / _MARK).read_text().splitlines()
        except OSError:
            continue
        if len(lines) >= 2:
            return parent, lines[1]
    return None
