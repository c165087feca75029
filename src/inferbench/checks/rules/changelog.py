"""The perf changelog: names existing configs, is append-only against --base, covers every
changed config, and its topology words describe the configs it names."""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Iterator, Sequence

from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.checks.subjects import ChangelogSubject
from inferbench.checks.topology_match import same_token, tokens_of
from inferbench.config.changelog import ChangelogEntry, ChangelogItem, is_glob
from inferbench.config.master import MasterEntry, MultiNodeSearchSpace
from inferbench.config.topology import TokenKind, deployment_words, parse_tokens, seq_word


def _plain(entry: ChangelogEntry) -> ChangelogEntry:
    """An entry without its pr-link (the one field an old entry may have fixed)."""
    return entry.model_copy(update={"pr_link": None})


def first_rewrite(subject: ChangelogSubject) -> int | None:
    """Index of the first base entry that was changed or removed, or None if append-only."""
    base = subject.base.changelog if subject.base else None
    if base is None:
        return None
    current = subject.changelog.items
    for i, old in enumerate(base.items):
        if i >= len(current) or _plain(current[i].entry) != _plain(old.entry):
            return i
    return None


def new_items(subject: ChangelogSubject) -> Sequence[ChangelogItem]:
    """The entries appended since the base (all of them without --base)."""
    items = subject.changelog.items
    base = subject.base.changelog if subject.base else None
    if subject.base is None or base is None:
        return items
    if first_rewrite(subject) is None:
        return items[len(base.items) :]
    remaining = Counter(_plain(item.entry) for item in base.items)
    fresh: list[ChangelogItem] = []
    for item in items:
        plain = _plain(item.entry)
        if remaining[plain]:
            remaining[plain] -= 1
        else:
            fresh.append(item)
    return fresh


def resolve(patterns: Sequence[str], keys: Sequence[str], exact: set[str]) -> list[str]:
    out: list[str] = []
    for pattern in patterns:
        if is_glob(pattern):
            out.extend(fnmatch.filter(keys, pattern))
        elif pattern in exact:
            out.append(pattern)
    return out


@rule(
    "IB501",
    "changelog-unknown-key",
    Severity.ERROR,
    ChangelogSubject,
    "every config key (or glob) a changelog entry names exists (new entries, with --base)",
)
def changelog_unknown_key(subject: ChangelogSubject) -> Iterator[Problem]:
    keys = list(subject.project.masters)
    exact = set(keys)
    doc = subject.changelog.doc
    for item in new_items(subject):
        for i, pattern in enumerate(item.entry.config_keys):
            if not resolve([pattern], keys, exact):
                close = fnmatch.filter(keys, f"*{pattern.split('-')[0]}*")[:3]
                yield Problem(
                    f"config key {pattern!r} names no master entry",
                    doc.locate((item.index, "config-keys", i)),
                    hint=("did you mean: " + ", ".join(close)) if close else None,
                )


@rule(
    "IB502",
    "changelog-not-append-only",
    Severity.ERROR,
    ChangelogSubject,
    "entries present at --base are unchanged (pr-link fixes allowed), new ones at the end",
    hint="restore the old entry and append a new one at the end of the file",
)
def changelog_not_append_only(subject: ChangelogSubject) -> Iterator[Problem]:
    index = first_rewrite(subject)
    if index is None or subject.base is None or subject.base.changelog is None:
        return
    current = subject.changelog.items
    base_item = subject.base.changelog.items[index]
    if index >= len(current):
        yield Problem(
            f"{len(subject.base.changelog.items) - len(current)} entr(y/ies) present at "
            f"{subject.base.rev} were removed (first: #{index + 1}, "
            f"{', '.join(base_item.entry.config_keys)})",
            subject.changelog.doc.locate(),
        )
        return
    yield Problem(
        f"entry #{index + 1} differs from {subject.base.rev} (was "
        f"{', '.join(base_item.entry.config_keys)}); the changelog is append-only",
        current[index].location,
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
    Severity.ERROR,
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
            words.append(seq_word(point.isl, point.osl))
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


def _latest_items(subject: ChangelogSubject) -> dict[int, list[str]]:
    """item index -> the config keys for which it is the latest entry naming them."""
    keys = list(subject.project.masters)
    exact = set(keys)
    latest: dict[str, int] = {}
    for item in subject.changelog.items:
        for key in resolve(item.entry.config_keys, keys, exact):
            latest[key] = item.index
    by_item: dict[int, list[str]] = {}
    for key, index in latest.items():
        by_item.setdefault(index, []).append(key)
    return by_item


@rule(
    "IB504",
    "changelog-topology-words",
    Severity.WARNING,
    ChangelogSubject,
    "topology words in a description (2P1D, DEP8, 8k1k) match the configs it names",
    hint="fix the description; if it names the source of a port, say 'from ...' plainly",
)
def changelog_topology_words(subject: ChangelogSubject) -> Iterator[Problem]:
    kinds = (TokenKind.PD, TokenKind.WORKER, TokenKind.SEQ)
    by_item = _latest_items(subject)
    doc = subject.changelog.doc
    for item in subject.changelog.items:
        keys = by_item.get(item.index)
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
