"""The perf changelog: names existing configs, is append-only against --base (read from the
diff, as InferenceX's CI reads it), covers every changed config, and the topology words of new
entries describe the configs they name."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.checks.subjects import ChangelogSubject
from inferbench.checks.topology_match import same_token, tokens_of
from inferbench.config.changelog import ChangelogEntry, ChangelogItem, changelog_key_matches
from inferbench.config.changelog_diff import ChangelogDiff, diff_changelog, parse_added
from inferbench.config.master import MasterEntry, MultiNodeSearchSpace
from inferbench.config.topology import TokenKind, deployment_words, parse_tokens
from inferbench.core.errors import ConfigError, Location
from inferbench.core.seqlen import seq_len_name


def _plain(entry: ChangelogEntry) -> ChangelogEntry:
    """An entry without its pr-link."""
    return entry.model_copy(update={"pr_link": None})


@functools.lru_cache(maxsize=8)
def _diff(path: Path, base_text: str, head_text: str) -> ChangelogDiff:
    del head_text  # part of the cache key: the file as it is now
    return diff_changelog(base_text, path)


def changelog_diff(subject: ChangelogSubject) -> ChangelogDiff | None:
    """The working changelog against its --base text, as git diffs it (None without one)."""
    base = subject.base
    if base is None or base.changelog_text is None:
        return None
    path = subject.changelog.file
    return _diff(path, base.changelog_text, path.read_text(encoding="utf-8", errors="replace"))


def _added_items(subject: ChangelogSubject, diff: ChangelogDiff) -> list[ChangelogItem] | None:
    """The current entries the diff's added lines make up, or None when they make up none
    that is an entry of the file (lines added inside an old entry)."""
    try:
        added = parse_added("\n".join(diff.added), diff.added_lines, subject.changelog.file)
    except ConfigError:
        return None
    by_line = {item.line: item for item in subject.changelog.items}
    items = [by_line.get(item.line) for item in added]
    return None if any(item is None for item in items) else [i for i in items if i is not None]


def new_items(subject: ChangelogSubject) -> Sequence[ChangelogItem]:
    """The entries added since the base, as InferenceX's CI finds them (the entries the
    diff's added lines make up); all of them without --base or a changelog at the base."""
    items = subject.changelog.items
    diff = changelog_diff(subject)
    if diff is None:
        return items
    if not diff.deleted:
        added = _added_items(subject, diff)
        if added is not None:
            return added
    # an edited changelog (IB502 says so): the entries not present at the base
    base = subject.base.changelog if subject.base else None
    remaining = Counter(_plain(item.entry) for item in base.items) if base else Counter()
    fresh: list[ChangelogItem] = []
    for item in items:
        plain = _plain(item.entry)
        if remaining[plain]:
            remaining[plain] -= 1
        else:
            fresh.append(item)
    return fresh


def resolve(patterns: Sequence[str], keys: Sequence[str]) -> list[str]:
    """The keys the patterns name, as InferenceX's CI matches them (`*` the only wildcard)."""
    return [k for pattern in patterns for k in keys if changelog_key_matches(pattern, k)]


def _names_any(pattern: str, keys: frozenset[str]) -> bool:
    """Whether `pattern` names one of `keys` (as `resolve`; a plain key is a set lookup:
    the real changelog has thousands of them against a thousand keys)."""
    if "*" not in pattern:
        return pattern in keys
    return any(changelog_key_matches(pattern, k) for k in keys)


@rule(
    "IB501",
    "changelog-unknown-key",
    Severity.ERROR,
    ChangelogSubject,
    "a changelog entry names existing config keys: entries added since --base, keys of the "
    "master configs (what InferenceX's CI sweeps); without --base, keys of the master configs "
    "or of configs/deprecated/ (a warning: InferenceX's validator accepts the history)",
    hint="name config keys that exist in the master configs (or fix the glob), in a new entry",
)
def changelog_unknown_key(subject: ChangelogSubject) -> Iterator[Problem]:
    keys = list(subject.project.masters)
    active, deprecated = frozenset(keys), subject.project.deprecated_keys()
    history = subject.base is None
    doc = subject.changelog.doc
    for item in new_items(subject):
        for i, pattern in enumerate(item.entry.config_keys):
            if _names_any(pattern, active):
                continue
            retired = _names_any(pattern, deprecated)
            if history and retired:
                continue
            hint: str | None
            if retired:
                message = (
                    f"config key {pattern!r} is archived under configs/deprecated/; "
                    "InferenceX's CI sweeps master configs only"
                )
                hint = "name an active config, or restore the entry to a master file"
            else:
                message = f"config key {pattern!r} names no master entry" + (
                    ", active or deprecated" if history else ""
                )
                close = fnmatch.filter(keys, f"*{pattern.split('-')[0]}*")[:3]
                hint = ("did you mean: " + ", ".join(close)) if close else None
            # the history was accepted as it was appended: only a new entry fails the run
            severity = Severity.WARNING if history else None
            yield Problem(message, doc.locate((item.index, "config-keys", i)), hint, severity)


@rule(
    "IB502",
    "changelog-not-append-only",
    Severity.ERROR,
    ChangelogSubject,
    "the changelog diff since --base only adds whole entries (InferenceX's CI refuses any "
    "deleted or edited line; blank lines may go)",
    hint="restore the old lines and append a new entry at the end of the file",
)
def changelog_not_append_only(subject: ChangelogSubject) -> Iterator[Problem]:
    diff = changelog_diff(subject)
    if diff is None or subject.base is None:
        return
    rev = subject.base.rev
    file = subject.changelog.file
    if diff.deleted:
        line, text = diff.deleted[0]
        more = f" (and {len(diff.deleted) - 1} more)" if len(diff.deleted) > 1 else ""
        yield Problem(
            f"a line present at {rev} was deleted or edited here{more}: {text.strip()!r}; "
            "the changelog is append-only",
            Location(file, line),
        )
    elif diff.added and _added_items(subject, diff) is None:
        yield Problem(
            f"the lines added since {rev} are no whole entry (added inside an existing one?)",
            Location(file, diff.added_lines[0]),
        )


def _changed_keys(subject: ChangelogSubject) -> list[tuple[str, str]]:
    """(config key, why) for every master entry added or edited since the base, or deploying
    a recipe file changed since the base."""
    base = subject.base
    if base is None:
        return []
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for key, config in subject.project.masters.items():
        before = base.master_data.get(key)
        if before is None or before != config.doc.data.get(key):
            out.append((key, "added" if before is None else "edited"))
            seen.add(key)
    for path, users in subject.recipe_users.items():
        if path.resolve() not in base.changed_files:
            continue
        for key in users:
            if key not in seen:
                seen.add(key)
                out.append((key, f"its recipe {path.name} changed"))
    return out


@rule(
    "IB503",
    "changelog-entry-missing",
    Severity.WARNING,  # InferenceX's CI accepts such a change (nothing is swept for it)
    ChangelogSubject,
    "every master entry or recipe changed since --base is named by a newly appended entry",
    hint="append an entry naming the config at the end of the changelog",
)
def changelog_entry_missing(subject: ChangelogSubject) -> Iterator[Problem]:
    changed = _changed_keys(subject)
    if not changed:
        return
    fresh = new_items(subject)
    rev = subject.base.rev if subject.base else "the base"
    for key, why in changed:
        if not any(item.entry.matches(key) for item in fresh):
            config = subject.project.masters[key]
            yield Problem(
                f"{key} was {why} since {rev} but no changelog entry appended since names it",
                config.locate(),
                hint=f"append `- config-keys: [{key}]` with a description and pr-link to "
                f"{subject.changelog.file.name}",
            )


def config_words(entry: MasterEntry) -> list[str]:
    """The topology words of every deployment of an entry: 2P1D, DEP2, DEP8, TP4, 8k1k."""
    words: list[str] = []
    for point in entry.search_spaces():
        space = point.space
        if point.isl is not None and point.osl is not None:
            words.append(seq_len_name(point.isl, point.osl))
        if isinstance(space, MultiNodeSearchSpace):
            if space.aggregated:
                words.extend(deployment_words(space.prefill.layout).all())
            else:
                words.extend(
                    deployment_words(
                        space.decode.layout,
                        prefill=space.prefill.layout,
                        prefill_workers=space.prefill.num_worker,
                        decode_workers=space.decode.num_worker,
                    ).all()
                )
        else:
            words.extend(deployment_words(space.layout).all())
    return words


@rule(
    "IB504",
    "changelog-topology-words",
    Severity.WARNING,
    ChangelogSubject,
    "topology words in the description of an entry added since --base (2P1D, DEP8, 8k1k) "
    "match the configs it names (older descriptions tell their own time)",
    hint="fix the description; if it names the source of a port, say 'from ...' plainly",
)
def changelog_topology_words(subject: ChangelogSubject) -> Iterator[Problem]:
    if subject.base is None:
        return
    kinds = (TokenKind.PD, TokenKind.WORKER, TokenKind.SEQ)
    doc = subject.changelog.doc
    names = list(subject.project.masters)
    for item in new_items(subject):
        keys = list(dict.fromkeys(resolve(item.entry.config_keys, names)))
        if not keys:
            continue
        words = [w for key in keys for w in config_words(subject.project.masters[key].entry)]
        known = tokens_of(words)
        for line, text in enumerate(item.entry.description):
            for token in parse_tokens(text):
                if token.kind in kinds and not any(same_token(token, k) for k in known):
                    have = ", ".join(dict.fromkeys(words)) or "no topology"
                    yield Problem(
                        f"description says {token.text!r} but {', '.join(keys)} "
                        f"{'is' if len(keys) == 1 else 'are'} {have}",
                        doc.locate((item.index, "description", line)),
                    )


# What InferenceX's validate_perf_changelog.py lets a pr-link be: the pull request's URL
# (its own tree also holds `.../pull/2305/changes`) or the XXX placeholder of an open PR.
# Text, brackets (Rich markup), quotes and spaces make no URL.
_PR_LINK = re.compile(r"https?://[^\s\[\]<>\"'`{}|\\^]+\Z|XXX\Z")


@rule(
    "IB505",
    "changelog-pr-link",
    Severity.ERROR,
    ChangelogSubject,
    "every entry's pr-link is the URL of its pull request (or InferenceX's XXX placeholder)",
    hint="write the pull request's URL, e.g. https://github.com/<org>/<repo>/pull/123, or XXX "
    "until the pull request exists",
)
def changelog_pr_link(subject: ChangelogSubject) -> Iterator[Problem]:
    doc = subject.changelog.doc
    for item in subject.changelog.items:
        link = item.entry.pr_link
        if link is not None and not _PR_LINK.match(link):
            yield Problem(
                f"pr-link {link!r} is not a URL", doc.locate_value((item.index, "pr-link"))
            )
