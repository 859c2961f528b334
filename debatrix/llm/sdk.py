"""The OpenAI SDK's side of the gateway (the ``openai`` extra): its error kinds (a stand-in class where it is not
installed, so an ``except`` clause names them either way), which errors of any transport are transient (retried),
and LangChain's ChatOpenAI made from the settings for ``transport="langchain"``. The default transport, debatrix's
own aiohttp client, needs none of it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import aiohttp
from langchain_core.language_models import BaseChatModel

from debatrix.core.errors import (ContextWindowExceeded, IncompleteJudgment, LLMError, LLMRateLimitError,
                                  require_extra)
from debatrix.core.settings import LLMSettings, split_credentials
from debatrix.llm.http_chat import DROPPABLE, REFUSED_FIELD, ChatHTTPError, retry_after

try:  # the langchain transport (ChatOpenAI) and the SDK's errors it raises: the "openai" extra
    import httpx
    import openai
except ImportError:  # pragma: no cover - exercised in a subprocess by tests/test_extras.py
    httpx = openai = None  # type: ignore[assignment]


class _NotInstalled(Exception):
    """Stands for an error class of a library that is not installed: nothing raises it."""


def sdk_error(name: str) -> type[BaseException]:
    """The SDK's error class ``name``, or a class nothing raises where the SDK is not installed."""
    return getattr(openai, name) if openai is not None else _NotInstalled


SDK_TIMEOUT, SDK_CONNECTION, SDK_STATUS, SDK_LENGTH, SDK_ERROR = (sdk_error(n) for n in (
    "APITimeoutError", "APIConnectionError", "APIStatusError", "LengthFinishReasonError", "OpenAIError"))
HTTPX_TRANSPORT = httpx.TransportError if httpx is not None else _NotInstalled
#: what the langchain transport needs (ChatOpenAI brings the SDK and httpx with it)
LANGCHAIN_EXTRA = ("langchain_openai", "--transport langchain (LangChain's ChatOpenAI)", "openai")


_TRANSIENT = (
    SDK_TIMEOUT,
    SDK_CONNECTION,
    sdk_error("RateLimitError"),
    sdk_error("InternalServerError"),
    HTTPX_TRANSPORT,
    aiohttp.ClientError,
    asyncio.TimeoutError,
    TimeoutError,
    ConnectionError,
)


_TRANSIENT_STATUS = (408, 409, 425, 429, 500, 502, 503, 504)


def is_transient(exc: BaseException) -> bool:
    """Whether a request that failed with ``exc`` is worth sending again: a timeout, a lost connection, a rate
    limit or a server error, on either transport."""
    if isinstance(exc, SDK_STATUS) and exc.status_code in _TRANSIENT_STATUS:
        return True
    if isinstance(exc, ChatHTTPError):
        return exc.status in _TRANSIENT_STATUS
    return isinstance(exc, _TRANSIENT)


def retry_after_of(exc: BaseException) -> float | None:
    """The wait a failed request's server asked for (its Retry-After), in seconds, where it asked for one."""
    if isinstance(exc, ChatHTTPError):
        return exc.retry_after
    return retry_after(getattr(getattr(exc, "response", None), "headers", None))


def chat_openai(settings: LLMSettings, key: str | None, headers: dict[str, str],
                http_async_client: httpx.AsyncClient | None = None) -> BaseChatModel:
    """LangChain's ChatOpenAI for the configured endpoint (``transport="langchain"``), with the API ``key`` and
    the OpenAI account ``headers`` the gateway read from the settings."""
    require_extra(*LANGCHAIN_EXTRA)
    from langchain_openai import ChatOpenAI

    # user:password in the URL: sent as basic auth by the HTTP client (unless an API key is given: it wins, as
    # on the default transport), never as part of the base URL, which LangChain hands every callback and trace
    url, user, password = split_credentials(settings.base_url)
    if user is not None and not key:
        http_async_client = http_async_client or httpx.AsyncClient(timeout=settings.timeout)
        http_async_client.auth = httpx.BasicAuth(user, password or "")
    return ChatOpenAI(
        model=settings.model,
        base_url=url,
        api_key=key or "not-needed",  # local OpenAI-compatible servers ignore the key
        temperature=settings.temperature,
        max_retries=0,
        timeout=settings.timeout,
        max_tokens=settings.max_output_tokens,
        http_async_client=http_async_client,
        # set from the settings, not left to the SDK reading the environment: a Python caller's settings win
        organization=settings.organization,
        default_headers={k: v for k, v in headers.items() if k == "OpenAI-Project"} or None,
    )


def status_error(status: int, message: str, attempts: int, meta: dict[str, Any], context_window: int,
                 scrub: Callable[[str], str]) -> IncompleteJudgment:
    """What a server's HTTP error status means for the run (any transport), its message ``scrub``bed of secrets."""
    node = meta.get("debatrix_node")
    if status == 429:
        return LLMRateLimitError(f"{node}: rate limited after {attempts} attempts")
    if status == 400:
        text = message.lower()
        if "context" in text and ("length" in text or "window" in text or "exceed" in text):
            return ContextWindowExceeded(-1, context_window, str(node), server=scrub(message)[:300])
        refused = REFUSED_FIELD.search(message)
        hint = (f" (the default http transport leaves out a refused {refused.group(1)} and goes on: judge without "
                "--transport langchain)" if refused and refused.group(1) in DROPPABLE else "")
        return LLMError(f"{node}: the server rejected the request (400): {scrub(message)[:200]}{hint}")
    return LLMError(f"{node}: server error {status} after {attempts} attempts")
