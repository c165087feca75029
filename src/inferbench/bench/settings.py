"""Where to send and how: the endpoint and the client settings (all serialisable).

The API key is never a field: `Endpoint.api_key_env` names the environment
variable that holds it, and the key is read only when headers are built, so it
cannot reach a result file or a log.
"""

from __future__ import annotations

import os
from enum import StrEnum
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    field_serializer,
    field_validator,
    model_validator,
)

from inferbench.bench.preset import SA_BENCH
from inferbench.core.errors import InputError, Location
from inferbench.core.limits import MAX_SEED
from inferbench.core.model import FrozenModel
from inferbench.core.redact import (
    API_KEY_VARS,
    Redactor,
    basic_auth,
    query_secrets,
    redact_tree,
    split_userinfo,
)


class ApiKind(StrEnum):
    COMPLETIONS = "completions"
    CHAT = "chat"


class Endpoint(FrozenModel):
    """An OpenAI-compatible server and the model to ask."""

    base_url: str
    model: str = Field(min_length=1)
    api: ApiKind = ApiKind.COMPLETIONS
    api_key_env: str | None = Field(
        default=None, description="environment variable holding the API key (never the key)"
    )

    _userinfo: str | None = PrivateAttr(default=None)  # `user:password@` of the URL given
    _query: str | None = PrivateAttr(default=None)  # `?...` of the URL given (a signed URL)

    @model_validator(mode="wrap")
    @classmethod
    def _credentials_out_of_the_url(
        cls, data: Any, handler: ModelWrapValidatorHandler[Endpoint]
    ) -> Endpoint:
        """`http://user:pw@host` is stored as `http://host`; the credentials only become the
        Basic Authorization header (and a secret to redact). A query (`?token=...`, a signed
        URL's `sig=`) is kept off the stored URL too: it goes only into the requests."""
        userinfo = query = None
        if isinstance(data, dict) and isinstance(data.get("base_url"), str):
            url, userinfo = split_userinfo(data["base_url"])
            url, sep, query = url.partition("?")
            data = {**data, "base_url": url.partition("#")[0]}
            query = query.partition("#")[0] if sep else None
            if query and any(c.isspace() or not c.isprintable() for c in query):
                # it goes into the request line as written: a line break would add headers
                raise ValueError("the base URL's query holds a space or control character")
        endpoint = handler(data)
        if userinfo:
            endpoint._userinfo = userinfo
        if query:
            endpoint._query = query
        return endpoint

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("base URL must start with http:// or https://")
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 (raises on a port that is not a number in range)
        except ValueError as exc:
            raise ValueError(f"base URL {value!r} is not a URL ({exc})") from None
        if not parts.hostname:
            raise ValueError(f"base URL {value!r} names no host, e.g. http://127.0.0.1:8000")
        return value.rstrip("/")

    @property
    def url(self) -> str:
        """The streaming endpoint; accepts a base URL with or without `/v1`."""
        root = self.base_url if self.base_url.endswith("/v1") else self.base_url + "/v1"
        path = "/completions" if self.api is ApiKind.COMPLETIONS else "/chat/completions"
        return root + path + (f"?{self._query}" if self._query else "")

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        key = self._api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        elif self._userinfo:
            headers["Authorization"] = basic_auth(self._userinfo)
        return headers

    def redactor(self) -> Redactor:
        """The secrets this endpoint sends: its key, its URL's password."""
        password = self._userinfo.partition(":")[2] if self._userinfo else None
        in_query = query_secrets(f"http://x/?{self._query}")[1] if self._query else ()
        return Redactor.of(
            [*Redactor.for_headers(self.headers()).secrets, self._userinfo, password, *in_query]
        )

    def _api_key(self) -> str | None:
        names = [self.api_key_env] if self.api_key_env else list(API_KEY_VARS)
        for name in names:
            value = os.environ.get(name)
            if value:
                return value
        return None


def require_api_key(name: str | None, option: str = "--api-key-env") -> None:
    """A variable named for the key must hold one: a typo or an unexported variable would
    otherwise send no key, and a server that allows anonymous requests would be measured
    as if it were the keyed one (or fail every request with 401, blamed on the server)."""
    if name is None:
        return
    if not name.isidentifier():
        raise InputError(
            f"{name!r} is no environment variable name",
            location=Location(key=option),
            hint="name the variable that holds the key, e.g. --api-key-env OPENAI_API_KEY",
        )
    if not os.environ.get(name):
        raise InputError(
            f"the environment variable {name} is unset or empty: no API key would be sent",
            location=Location(key=option),
            hint=f"export {name}=<key> first, or leave {option} out",
        )


class RequestOptions(FrozenModel):
    """Body fields every request carries (the lengths come from the workload)."""

    ignore_eos: bool = True
    temperature: float = Field(default=0.0, ge=0.0)
    continuous_usage: bool = Field(
        default=True, description="ask for per-chunk usage (continuous_usage_stats)"
    )
    extra_body: dict[str, Any] = Field(default_factory=dict)

    @field_validator("extra_body")
    @classmethod
    def _client_owns(cls, value: dict[str, Any]) -> dict[str, Any]:
        """The client measures streamed responses of the length the workload asks: a body
        that turns streaming off (no TTFT, no ITL; the whole answer arrives at once, after
        up to the request timeout) or sets another length would measure something else."""
        if value.get("stream", True) is not True:
            raise ValueError(
                "stream: the client measures streamed responses (TTFT and ITL need one);"
                " leave stream out of --extra-body"
            )
        for key in ("max_tokens", "max_completion_tokens"):
            if key in value:
                raise ValueError(f"{key}: set the output length with --osl (it is recorded)")
        return value

    @field_serializer("extra_body")
    def _redacted(self, value: dict[str, Any]) -> object:
        # a key (api_key, token, ...) sent to the server is never written down
        return redact_tree(value)[0]

    def secrets(self) -> tuple[str, ...]:
        """The secret texts of the extra body (a server may echo them back)."""
        return redact_tree(self.extra_body)[1]


class ClientOptions(FrozenModel):
    """How the client behaves; recorded in every result file."""

    request_timeout_s: float = Field(default=600.0, gt=0)
    connect_timeout_s: float = Field(default=30.0, gt=0)
    workers: int | None = Field(default=None, gt=0, description="client processes; None = auto")
    read_bufsize: int = Field(default=4 * 1024 * 1024, gt=0, description="aiohttp read buffer")
    http_client: Literal["fast", "aiohttp"] = "fast"
    receive_stamps: Literal["kernel", "user"] = Field(
        default="kernel",
        description="kernel: when each read's bytes arrived (SO_TIMESTAMPNS, plain HTTP on"
        " Linux, fast client); user: when the event loop handled the read",
    )
    prompt_tolerance: float = Field(
        default=0.05, ge=0, description="relative prompt-length mismatch that fails a request"
    )
    max_failure_rate: float = Field(default=SA_BENCH.max_failure_rate, ge=0, le=1)
    detail: bool = Field(default=False, description="keep per-request ttfts/itls/texts")
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
