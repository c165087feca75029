"""The rule registry: every rule has a stable id and slug, a severity, and the subject it runs on.

A rule is a function from one typed subject (a master entry, a deployment, a recipe, ...) to
`Problem`s; the registry turns each problem into a `Finding` carrying the rule's id and severity.
Rules are registered with the `rule` decorator in `inferbench.checks.rules.*`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from inferbench.checks.finding import Finding, Severity
from inferbench.core.errors import InputError, Location

S = TypeVar("S")


@dataclass(frozen=True)
class Problem:
    """What a rule yields: a one-line message, where, and (optionally) a more specific fix
    and a severity other than the rule's (IB501: an error on a new entry, a warning on an
    old one that InferenceX accepted)."""

    message: str
    location: Location = field(default_factory=Location)
    hint: str | None = None
    severity: Severity | None = None


@dataclass(frozen=True)
class Rule(Generic[S]):
    """One check. `subject` is the type of object `check` runs on; `hint` is the fix every
    finding of the rule prints (`fix:`) unless its problem names a more specific one, so a
    rule without one cannot be registered."""

    id: str
    slug: str
    severity: Severity
    title: str
    subject: type[S]
    check: Callable[[S], Iterable[Problem]]
    hint: str

    def __post_init__(self) -> None:
        if not self.hint.strip():
            raise ValueError(f"rule {self.id} {self.slug} has no fix hint")

    def finding(self, problem: Problem) -> Finding:
        loc = problem.location
        return Finding(
            rule=self.id,
            slug=self.slug,
            severity=problem.severity or self.severity,
            message=problem.message,
            file=loc.file,
            line=loc.line,
            column=loc.column,
            key=loc.key,
            hint=(problem.hint or "").strip() or self.hint,
        )

    def matches(self, selector: str) -> bool:
        """A selector is a slug, an id, or an id prefix (`IB2` selects IB200..IB299)."""
        return selector == self.slug or self.id.startswith(selector.upper())


INTERNAL_ERROR_ID = "IB000"
INTERNAL_ERROR_SLUG = "internal-error"

_RULES: dict[str, Rule[Any]] = {}


def rule(
    id: str,
    slug: str,
    severity: Severity,
    subject: type[S],
    title: str,
    hint: str,
) -> Callable[[Callable[[S], Iterable[Problem]]], Callable[[S], Iterable[Problem]]]:
    """Register the decorated function as a rule."""

    def register(check: Callable[[S], Iterable[Problem]]) -> Callable[[S], Iterable[Problem]]:
        if id in _RULES or any(r.slug == slug for r in _RULES.values()):
            raise ValueError(f"rule {id} {slug} registered twice")
        _RULES[id] = Rule(id, slug, severity, title, subject, check, hint)
        return check

    return register


def all_rules() -> list[Rule[Any]]:
    """Every registered rule, ordered by id (importing the rule modules registers them)."""
    import inferbench.checks.rules  # noqa: F401  (registers the rules)

    return [_RULES[key] for key in sorted(_RULES)]


def select_rules(
    rules: Sequence[Rule[Any]], select: Sequence[str] = (), ignore: Sequence[str] = ()
) -> list[Rule[Any]]:
    """Keep the rules named by `select` (all when empty) minus those named by `ignore`."""
    known = [INTERNAL_ERROR_ID, INTERNAL_ERROR_SLUG]
    for selector in [*select, *ignore]:
        if not any(r.matches(selector) for r in rules) and selector.upper() not in known:
            raise InputError(
                f"unknown rule {selector!r}",
                hint="use a rule id (IB201), an id prefix (IB2) or a slug (recipe-schema); "
                "see `inferbench check --list-rules`",
            )
    chosen = [r for r in rules if not select or any(r.matches(s) for s in select)]
    return [r for r in chosen if not any(r.matches(s) for s in ignore)]


def run_rule(
    rule: Rule[S], subject: S, where: Location | Callable[[], Location]
) -> Iterator[Finding]:
    """Run one rule on one subject; a crash becomes an internal-error finding for `where`
    (a Location, or a function giving it: locating costs, and is needed only on a crash)."""
    try:
        problems = list(rule.check(subject))
    except Exception as exc:  # a crashing rule is a bug; report it and go on
        if callable(where):
            where = where()
        yield Finding(
            rule=INTERNAL_ERROR_ID,
            slug=INTERNAL_ERROR_SLUG,
            severity=Severity.ERROR,
            message=f"rule {rule.id} {rule.slug} crashed: {type(exc).__name__}: {exc}",
            file=where.file,
            line=where.line,
            column=where.column,
            key=where.key,
            hint="this is a bug in inferbench; please report it with the input file",
        )
        return
    for problem in problems:
        yield rule.finding(problem)
