"""Image references: normalisation, notations, pinning."""

from __future__ import annotations

import pytest

from inferbench.config.images import ImageRefError, normalize_image, same_image


def test_docker_hub_defaults() -> None:
    ref = normalize_image("vllm/vllm-openai:v0.10.2")
    assert ref.normalized == "docker.io/vllm/vllm-openai:v0.10.2"
    assert normalize_image("ubuntu:22.04").normalized == "docker.io/library/ubuntu:22.04"
    assert normalize_image("docker.io/ubuntu:22.04").normalized == "docker.io/library/ubuntu:22.04"


def test_enroot_notation_equals_registry_notation() -> None:
    assert same_image(
        "nvcr.io#nvidia/tensorrt-llm/release:1.1.0", "nvcr.io/nvidia/tensorrt-llm/release:1.1.0"
    )
    assert not same_image("vllm/vllm-openai:v1", "vllm/vllm-openai:v2")


def test_tag_digest_and_port() -> None:
    digest = "sha256:" + "a" * 64
    ref = normalize_image(f"localhost:5000/team/img:1.0@{digest}")
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (
        "localhost:5000",
        "team/img",
        "1.0",
        digest,
    )
    assert ref.pinned and ref.problems() == []


def test_unpinned_references_are_reported() -> None:
    assert normalize_image("vllm/vllm-openai").problems() == ["no tag (means `latest`)"]
    assert normalize_image("vllm/vllm-openai:latest").problems() == ["tag `latest` moves"]
    assert not normalize_image("vllm/vllm-openai:latest").pinned


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "a b",
        "/images/x.sqsh",
        "img@sha256:xyz",
        "reg.io/",
        # a line break splits the script or plan it is written to; bidi and zero-width
        # characters show another image than the one pulled (issue 40)
        "vllm/vllm-openai:v1\n",
        "vllm/vllm-openai:v1\r",
        "vllm\u202e/vllm-openai:v1",
        "vllm\u200b/vllm-openai:v1",
    ],
)
def test_not_image_references(bad: str) -> None:
    with pytest.raises(ImageRefError):
        normalize_image(bad)
