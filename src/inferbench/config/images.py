"""Container image references, normalised so that two spellings of one image compare equal.

`vllm/vllm-openai:v1` is `docker.io/vllm/vllm-openai:v1`; `nvcr.io#nvidia/x:tag`
(enroot's notation) is `nvcr.io/nvidia/x:tag`; `ubuntu` is `docker.io/library/ubuntu`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

DEFAULT_REGISTRY = "docker.io"
_DOCKER_ALIASES = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io"})
_DIGEST = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[+._-][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}\Z")
_TAG = re.compile(r"[\w][\w.-]{0,127}\Z")
_SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class ImageRef:
    """One image reference, split and normalised."""

    registry: str
    repository: str
    tag: str | None
    digest: str | None
    original: str

    @property
    def name(self) -> str:
        return f"{self.registry}/{self.repository}"

    @property
    def normalized(self) -> str:
        text = self.name
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text

    @property
    def pinned(self) -> bool:
        """A digest, or a tag other than `latest`."""
        return self.digest is not None or (self.tag is not None and self.tag != "latest")

    def problems(self) -> list[str]:
        """Why this reference is not reproducible (empty when it is pinned)."""
        if self.digest:
            return []
        if self.tag is None:
            return ["no tag (means `latest`)"]
        if self.tag == "latest":
            return ["tag `latest` moves"]
        return []

    def __str__(self) -> str:
        return self.normalized


class ImageRefError(ValueError):
    """Not an image reference."""


@functools.lru_cache(maxsize=4096)  # a tree names a few dozen images thousands of times
def normalize_image(ref: str) -> ImageRef:
    """Parse and normalise `ref`; a `.sqsh` path or empty text raises ImageRefError."""
    text = ref.strip()
    # a reference is printable ASCII: a line break would split the script or plan it is
    # written to, a bidi or zero-width character show another image than the one pulled
    if not text or _SPACE.search(text) or not (ref.isascii() and ref.isprintable()):
        raise ImageRefError(f"{ref!r} is not an image reference")
    if text.startswith(("/", "./", "../")) or text.endswith(".sqsh"):
        raise ImageRefError(f"{ref!r} is a file path, not an image reference")
    text = text.removeprefix("docker://")
    if "#" in text:  # enroot/pyxis: registry#repository
        registry, _, rest = text.partition("#")
        text = f"{registry}/{rest}"
    digest = None
    if "@" in text:
        text, _, digest = text.partition("@")
        if not _DIGEST.match(digest):
            raise ImageRefError(f"{ref!r} has a malformed digest")
    name, tag = _split_tag(text)
    registry, repository = _split_registry(name)
    if not repository or repository.startswith("/") or "//" in repository:
        raise ImageRefError(f"{ref!r} has no repository")
    if tag is not None and not _TAG.match(tag):
        raise ImageRefError(f"{ref!r} has a malformed tag")
    return ImageRef(registry, repository.lower(), tag, digest, ref)


def image_problem(ref: str, owner: str) -> str | None:
    """Why `ref` (the `owner`'s image: "image", "container", ...) is no image reference, in
    the words of `check`'s IB702; None when it is one."""
    try:
        normalize_image(ref)
    except ImageRefError as exc:
        return f"{owner}: {exc}"
    return None


def same_image(a: str, b: str) -> bool:
    """True when both references name the same image (normalised); False if either is not one."""
    try:
        return normalize_image(a).normalized == normalize_image(b).normalized
    except ImageRefError:
        return a.strip() == b.strip()


def enroot_image(ref: str) -> str:
    """`ref` in enroot's notation, as pyxis's `--container-image` takes it: `registry#repo:tag`
    for a registry other than Docker Hub (`nvcr.io/nvidia/x:1` -> `nvcr.io#nvidia/x:1`; pyxis
    would read the slash form as a Docker Hub repository), `repo:tag` for Docker Hub."""
    image = normalize_image(ref)
    if image.registry == DEFAULT_REGISTRY:
        text = image.repository.removeprefix("library/")
    else:
        text = f"{image.registry}#{image.repository}"
    if image.tag:
        text += f":{image.tag}"
    if image.digest:
        text += f"@{image.digest}"
    return text


def _split_tag(text: str) -> tuple[str, str | None]:
    slash = text.rfind("/")
    colon = text.rfind(":")
    if colon > slash:
        return text[:colon], text[colon + 1 :]
    return text, None


def _split_registry(name: str) -> tuple[str, str]:
    first, sep, rest = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        registry = first.lower()
        if registry in _DOCKER_ALIASES:
            registry = DEFAULT_REGISTRY
            if "/" not in rest:
                rest = f"library/{rest}"
        return registry, rest
    if not sep:
        return DEFAULT_REGISTRY, f"library/{name}"
    return DEFAULT_REGISTRY, name
