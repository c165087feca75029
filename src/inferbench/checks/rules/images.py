"""Container images: every reference parses and is pinned (a tag other than latest, or a digest)."""

from __future__ import annotations

from collections.abc import Iterator

from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.checks.subjects import ImageUse
from inferbench.config.entry_problems import IMAGE_HINT
from inferbench.config.images import ImageRefError, image_problem, normalize_image


@rule(
    "IB701",
    "image-unpinned",
    Severity.ERROR,
    ImageUse,
    "image references are pinned: a tag other than `latest`, or a digest",
    hint="pin a release tag (e.g. vllm/vllm-openai:v0.10.2) or a @sha256 digest",
)
def image_unpinned(use: ImageUse) -> Iterator[Problem]:
    try:
        ref = normalize_image(use.reference)
    except ImageRefError:
        return
    for why in ref.problems():
        yield Problem(f"{use.owner} {use.reference!r} is not pinned: {why}", use.location)


@rule(
    "IB702",
    "image-invalid",
    Severity.ERROR,
    ImageUse,
    "image references parse as registry/repository[:tag][@digest]",
    hint=IMAGE_HINT,
)
def image_invalid(use: ImageUse) -> Iterator[Problem]:
    problem = image_problem(use.reference, use.owner)
    if problem is not None:
        yield Problem(problem, use.location)
