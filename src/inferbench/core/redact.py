"""Secrets never written: redact known secret values from text, strip credentials from URLs,
and tell secret-looking variable names.

A server may echo what it was sent (an error page quoting the request headers, a test
server returning them as the completion); anything it sends back is passed through a
`Redactor` holding the request's secrets before it is stored or printed.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

REDACTED = "[redacted]"
# Variable or header names whose values are secrets, whatever an allow-list says.
SECRET_NAME = re.compile(
    r"(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|HEADERS|COOKIE)", re.IGNORECASE
)
_SCHEMES = ("Bearer ", "Basic ", "Token ")
API_KEY_VARS = ("INFERBENCH_API_KEY", "OPENAI_API_KEY")  # where the load generator reads a key


def looks_secret(name: str) -> bool:
    return SECRET_NAME.search(name) is not None


@dataclass(frozen=True)
class Redactor:
    """Replaces every occurrence of its secrets (longest first) with `[redacted]`."""

    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Iterable[str | None]) -> Redactor:
        found = {v for v in values if v}
        for value in list(found):
            for scheme in _SCHEMES:  # the bare token of `Bearer <token>` too
                if value.startswith(scheme) and len(value) > len(scheme):
                    found.add(value[len(scheme) :])
        return cls(tuple(sorted(found, key=len, reverse=True)))

    @classmethod
    def for_headers(cls, headers: Mapping[str, str]) -> Redactor:
        """The secrets of request headers: Authorization and any secret-looking header."""
        return cls.of(v for k, v in headers.items() if looks_secret(k))

    @classmethod
    def from_env(cls, env: Mapping[str, str], extra: Iterable[str] = ()) -> Redactor:
        """The API keys configured in `env` (the standard variables and `extra` names)."""
        return cls.of(env.get(name) for name in (*API_KEY_VARS, *extra))

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def optional(self, text: str | None) -> str | None:
        return None if text is None else self(text)

    def plus(self, values: Iterable[str]) -> Redactor:
        """This redactor with `values` as secrets too."""
        return Redactor.of([*self.secrets, *values])


def redact_tree(value: object) -> tuple[object, tuple[str, ...]]:
    """(`value`, a JSON-like tree such as a request's extra body, with every text, list or
    map under a secret-looking key replaced by `[redacted]`; the secret texts found). A
    number or flag stays: `max_tokens: 16` is no secret, `api_key: "sk-..."` is."""
    found: list[str] = []

    def walk(node: object) -> object:
        if isinstance(node, dict):
            out: dict[object, object] = {}
            for key, item in node.items():
                if looks_secret(str(key)) and not _plain(item):
                    found.extend(_texts(item))
                    out[key] = REDACTED
                else:
                    out[key] = walk(item)
            return out
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    return walk(value), tuple(dict.fromkeys(t for t in found if t))


def _plain(value: object) -> bool:
    return value is None or isinstance(value, bool | int | float)


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _texts(item)]
    if isinstance(value, list):
        return [t for item in value for t in _texts(item)]
    return []


def split_userinfo(url: str) -> tuple[str, str | None]:
    """(`url` without `user:password@`, the decoded `user:password` or None)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, None
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=host)), unquote(userinfo)


def strip_userinfo(url: str) -> str:
    return split_userinfo(url)[0]


# Query parameters that carry a credential: the names `looks_secret` knows and those of
# signed URLs (S3's X-Amz-Signature, Azure's sig, GCS's X-Goog-Signature, an OAuth code).
_SECRET_PARAM = re.compile(
    r"(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|SIG|CODE|SESSION|COOKIE)",
    re.IGNORECASE,
)


def query_secrets(url: str) -> tuple[str, tuple[str, ...]]:
    """(`url` with the values of its secret-looking query parameters replaced by
    `[redacted]`, those values). `?token=abc&n=1` -> `?token=[redacted]&n=1`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, ()
    if not parts.query:
        return url, ()
    secrets: list[str] = []
    kept: list[str] = []
    for pair in parts.query.split("&"):
        name, sep, value = pair.partition("=")
        if sep and value and _SECRET_PARAM.search(unquote(name)):
            secrets += [value, unquote(value)]
            kept.append(f"{name}={REDACTED}")
        else:
            kept.append(pair)
    return urlunsplit(parts._replace(query="&".join(kept))), tuple(dict.fromkeys(secrets))


def redact_url(url: str) -> str:
    """`url` as it may be written down: no `user:password@`, no query secret."""
    return query_secrets(strip_userinfo(url))[0]


def basic_auth(userinfo: str) -> str:
    return "Basic " + base64.b64encode(userinfo.encode()).decode()
