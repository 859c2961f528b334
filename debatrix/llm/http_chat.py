"""A lean chat-completions client for OpenAI-compatible servers (vLLM, llama.cpp, Ollama, OpenAI) over aiohttp.

Why not ChatOpenAI by default: on a fast server the OpenAI SDK's request building and httpx's pool bookkeeping
cost more CPU than the request itself, and a benchmark run sends thousands (``python -m debatrix.benchmarks.perf
--cpu`` prints the CPU per call of both transports). ``transport="langchain"`` or a ``chat_model=`` argument still
use any LangChain chat model.

:class:`HTTPChatModel` is a LangChain chat model (callbacks, tracing, ``bind``, ``bind_tools``) whose
:class:`~langchain_core.messages.AIMessage` answers carry the same ``usage_metadata`` and ``response_metadata``
(``finish_reason``, ``logprobs``) ChatOpenAI gives."""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import json
import math
import os
import re
import ssl
import time
import urllib.parse
import urllib.request
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import aiohttp
from langchain_core.language_models import BaseChatModel, LanguageModelInput, LangSmithParams
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ConfigDict

from debatrix.core.settings import split_credentials

_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


class ChatHTTPError(Exception):
    """The server answered with an HTTP error status."""

    def __init__(self, status: int, message: str, retry_after: float | None = None):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.retry_after = retry_after


class ChatResponseError(Exception):
    """The server answered 200 with something that is not a chat completion."""


def _authorised(base_url: str | None, api_key: str | None) -> tuple[str | None, dict[str, str]]:
    """(the URL without user:password, the Authorization header): the API key as a bearer token, else the URL's
    user:password as basic auth, else none."""
    url, user, password = split_credentials(base_url)
    if api_key:
        return url, {"Authorization": f"Bearer {api_key}"}
    if user is not None:
        return url, {"Authorization": aiohttp.BasicAuth(user, password or "").encode()}
    return url, {}


class Endpoint:
    """Where and how to send: URL, headers, the payload fields every request carries, one connection pool per
    event loop (an aiohttp session belongs to the loop that made it).

    Given several servers of one model (``more``: a llama.cpp or vLLM fleet), each request goes to one of them:
    to a server whose last prompt shares a long prefix with it, where that server is not busier than the least
    busy (its prompt cache then skips the shared part), else to the least busy; a server that refused a
    connection, or answered 5xx or 429, is left alone for a while, so the retry goes elsewhere."""

    AFFINITY_CHARS = 512  # a shared prefix worth keeping on one server: the system prompt and more
    RESTING = 10.0  # seconds a server that refused or failed a request is passed over (unless every one has)

    def __init__(self, base_url: str, api_key: str | None, payload: dict[str, Any], max_connections: int,
                 extra_headers: dict[str, str] | None = None, more: Sequence[str] = ()):
        servers = [_authorised(u, api_key) for u in (base_url, *more)]
        self.headers = {"Content-Type": "application/json", "Accept": "application/json", **(extra_headers or {})}
        self.urls = [(url or "").rstrip("/") + "/chat/completions" for url, _ in servers]
        self.auth = [auth for _, auth in servers]  # per server: credentials in one URL are for that server only
        self.url = self.urls[0]
        self.payload = payload
        self.refused: set[str] = set()  # request fields the server refused (a reasoning model's temperature): not sent
        self.max_connections = max_connections
        self.proxies = [_env_proxy(u) for u in self.urls]
        self.busy = [0] * len(self.urls)  # requests in flight, per server
        self.sent = [0] * len(self.urls)  # requests sent, per server
        self._last = [""] * len(self.urls)  # the start of each server's last prompt
        self._resting_until = [0.0] * len(self.urls)
        self._ssl: ssl.SSLContext | None = None
        self._sessions: dict[int, tuple[asyncio.AbstractEventLoop, aiohttp.ClientSession, Any]] = {}

    def choose(self, prompt: str) -> int:
        """The server for a request whose prompt starts with ``prompt``."""
        if len(self.urls) == 1:
            return 0
        now = time.monotonic()
        up = [i for i in range(len(self.urls)) if self._resting_until[i] <= now] or list(range(len(self.urls)))
        least = min(up, key=lambda i: (self.busy[i], self.sent[i]))
        shared = {i: len(os.path.commonprefix((self._last[i], prompt))) for i in up}
        warm = max(up, key=shared.__getitem__)
        return warm if shared[warm] >= self.AFFINITY_CHARS and self.busy[warm] <= self.busy[least] else least

    @contextmanager
    def serving(self, i: int, prompt: str) -> Iterator[None]:
        """Count a request in flight on server ``i``; a refused connection rests the server."""
        self.busy[i] += 1
        self.sent[i] += 1
        self._last[i] = prompt
        try:
            yield
        except aiohttp.ClientConnectorError:
            self._resting_until[i] = time.monotonic() + self.RESTING
            raise
        except ChatHTTPError as e:
            if e.status >= 500 or e.status == 429:  # overloaded or failing: the retry goes to another server
                self._resting_until[i] = time.monotonic() + self.RESTING
            raise
        finally:
            self.busy[i] -= 1

    def session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        state = self._sessions.get(id(loop))
        if state is None or state[0] is not loop or state[1].closed:
            for key, (old, _, _) in list(self._sessions.items()):
                if old.is_closed():
                    del self._sessions[key]
            session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.max_connections, limit_per_host=0, keepalive_timeout=15,
                                               ssl=self._ssl_context()),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=30), headers=self.headers,
                skip_auto_headers=("User-Agent",), json_serialize=json.dumps)
            state = (loop, session, _close_at_loop_shutdown(session))
            self._sessions[id(loop)] = state
        return state[1]

    def _ssl_context(self) -> ssl.SSLContext | bool:
        """certifi's CA bundle for https (what the OpenAI SDK trusts), made once; nothing to set up for http."""
        if not self.url.startswith("https://"):
            return False
        if self._ssl is None:
            import certifi

            self._ssl = ssl.create_default_context(cafile=certifi.where())
        return self._ssl

    def close(self) -> None:
        """Close every pool whose loop is still usable (pools of loops that ``asyncio.run`` ended were closed at
        its shutdown)."""
        for loop, session, _ in list(self._sessions.values()):
            if session.closed or loop.is_closed():
                continue
            if loop.is_running():
                try:
                    running = asyncio.get_running_loop()
                except RuntimeError:
                    running = None
                if running is loop:
                    task = loop.create_task(session.close())
                    _CLOSING.add(task)  # the loop holds tasks weakly
                    task.add_done_callback(_CLOSING.discard)
                else:
                    asyncio.run_coroutine_threadsafe(session.close(), loop)
            else:
                loop.run_until_complete(session.close())
        self._sessions.clear()


_CLOSING: set[asyncio.Task] = set()


def _env_proxy(url: str) -> str | None:
    """The proxy that ``HTTP(S)_PROXY`` / ``NO_PROXY`` name for ``url`` (the OpenAI SDK honours them too), looked up
    once: aiohttp's ``trust_env`` looks it up again on every request, in the request's own latency."""
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme)


def _close_at_loop_shutdown(session: aiohttp.ClientSession) -> Any:
    """``asyncio.run`` finalises suspended async generators before it closes the loop: park one that closes the
    session, so a pool never outlives its loop (no "Unclosed client session" noise, no leaked sockets)."""

    async def guard() -> Any:
        try:
            yield
        finally:
            if not session.closed:
                await session.close()

    gen = guard()
    asyncio.ensure_future(gen.__anext__())  # the loop tracks it from its first step (weakly: the caller keeps it)
    return gen


class HTTPChatModel(BaseChatModel):
    """A LangChain chat model over an :class:`Endpoint`: ``bind``/``bind_tools`` bind request fields and
    ``ainvoke`` sends one request, with LangChain's callbacks around it, so an agent that embeds the judge traces
    every call like any other model's."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    endpoint: Endpoint
    # the gateway keeps its own answer cache, keyed by model identity and repeat: a global LangChain cache set by
    # the embedding application must not answer the judge's calls behind its back
    cache: bool | None = False
    debatrix_logprobs: bool = True

    @property
    def _llm_type(self) -> str:
        return "debatrix-openai-http"

    @property
    def model_name(self) -> str:
        return str(self.endpoint.payload.get("model"))

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "base_url": self.endpoint.url}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "openai"
        params["ls_model_name"] = self.model_name
        temperature = kwargs.get("temperature", self.endpoint.payload.get("temperature"))
        if temperature is not None:
            params["ls_temperature"] = temperature
        return params

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None,
                   **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        from langchain_core.utils.function_calling import convert_to_openai_tool  # what ChatOpenAI sends

        extra: dict[str, Any] = {"tools": [convert_to_openai_tool(t) for t in tools]}
        if tool_choice:
            extra["tool_choice"] = {"type": "function", "function": {"name": tool_choice}}
        return self.bind(**extra, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        raise NotImplementedError("the HTTP transport is asynchronous: use `await model.ainvoke(...)`")

    def _body(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        body = {k: v for k, v in {**self.endpoint.payload, **kwargs}.items() if k not in self.endpoint.refused}
        body["messages"] = [_message(m) for m in messages]
        if stop:
            body["stop"] = stop
        if "max_tokens" in body:  # the bound cap wins, under the current name (OpenAI deprecated max_tokens)
            body["max_completion_tokens"] = body.pop("max_tokens")
        return body

    async def _opened(self, body: Callable[[], dict[str, Any]]
                      ) -> tuple[contextlib.AsyncExitStack, aiohttp.ClientResponse]:
        """The server's response to the request ``body()`` builds, held open by the stack returned; a sampling
        field the server refuses (:meth:`_drops`) is left out and the request sent again (each field once)."""
        while True:
            stack, sent = contextlib.AsyncExitStack(), body()
            try:
                return stack, await stack.enter_async_context(self._post(sent))
            except ChatHTTPError as e:
                await stack.aclose()
                if not self._drops(e, sent):
                    raise

    def _drops(self, e: ChatHTTPError, sent: dict[str, Any]) -> bool:
        """Whether ``e`` is the server refusing a sampling field of ``sent`` that a reasoning model does not take
        (its temperature is its own; it gives no log probabilities): the field is then never sent to it again."""
        found = REFUSED_FIELD.search(e.message) if e.status == 400 else None
        field = found.group(1) if found else ""
        if field not in DROPPABLE or field not in sent:  # a request without it cannot be refused for it again
            return False
        self.endpoint.refused.add(field)
        return True

    @contextlib.asynccontextmanager
    async def _post(self, body: dict[str, Any]) -> AsyncIterator[aiohttp.ClientResponse]:
        """The server's response to ``body`` (an HTTP error status raised as :class:`ChatHTTPError`), on the
        endpoint's server that the prompt's start chooses."""
        endpoint = self.endpoint
        prompt = _prompt_start(body["messages"], endpoint.AFFINITY_CHARS * 4) if len(endpoint.urls) > 1 else ""
        i = endpoint.choose(prompt)
        with endpoint.serving(i, prompt):
            async with endpoint.session().post(endpoint.urls[i], data=json.dumps(body, ensure_ascii=False),
                                               headers=endpoint.auth[i], proxy=endpoint.proxies[i]) as r:
                if r.status >= 400:
                    raw = await r.read()
                    raise ChatHTTPError(r.status, _error_message(raw), retry_after(r.headers))
                yield r

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                         **kwargs: Any) -> ChatResult:
        stack, r = await self._opened(lambda: self._body(messages, stop, kwargs))
        async with stack:
            raw = await r.read()
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ChatResponseError(f"not a chat completion: {raw[:120]!r}") from None
        answer = _ai_message(data, choice, message)
        return ChatResult(generations=[ChatGeneration(message=answer, generation_info={
            "finish_reason": choice.get("finish_reason")})],
            llm_output={"token_usage": data.get("usage") or {}, "model_name": data.get("model")})

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        """The answer as the server writes it (server-sent events), for LangGraph's ``messages`` stream and
        ``astream_events``: text, tool-call pieces and log probabilities chunk by chunk; the usage, the finish
        reason and llama.cpp's timings in the last chunk, so the message they add up to is the one
        :meth:`_agenerate` returns."""
        stack, r = await self._opened(lambda: {**self._body(messages, stop, kwargs), "stream": True,
                                               "stream_options": {"include_usage": True}})
        last: dict[str, Any] = {}
        async with stack:
            async for data in _events(r):
                choices = data.get("choices") or []
                choice = choices[0] if choices and isinstance(choices[0], dict) else {}
                delta = choice.get("delta") or {}
                logprobs = choice.get("logprobs")
                tokens = logprobs.get("content") if isinstance(logprobs, dict) else None
                meta: dict[str, Any] = {"logprobs": {"content": tokens}} if tokens else {}
                if choice.get("finish_reason"):
                    last["finish_reason"] = choice["finish_reason"]
                for key in ("usage", "timings", "model"):
                    if isinstance(data.get(key), dict | str):
                        last[key] = data[key]
                calls = [{"name": (c.get("function") or {}).get("name"), "args": (c.get("function") or {})
                          .get("arguments"), "id": c.get("id"), "index": c.get("index", k)}
                         for k, c in enumerate(delta.get("tool_calls") or []) if isinstance(c, dict)]
                text = delta.get("content") or ""
                if not (text or calls or meta):
                    continue
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=text, tool_call_chunks=calls,
                                                                   response_metadata=meta))
                if run_manager is not None:
                    await run_manager.on_llm_new_token(text, chunk=chunk)
                yield chunk
        final = _ai_message({"usage": last.get("usage"), "model": last.get("model"), "timings": last.get("timings")},
                            {"finish_reason": last.get("finish_reason")}, {})
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=final.usage_metadata,
                                                         response_metadata=final.response_metadata),
                                  generation_info={"finish_reason": last.get("finish_reason")})


async def _events(r: aiohttp.ClientResponse) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of a server-sent event stream, up to ``data: [DONE]``."""
    async for line in r.content:
        text = line.decode("utf-8", "replace").strip()
        if not text.startswith("data:"):
            continue  # a comment, an event name, a keep-alive
        payload = text[5:].strip()
        if payload == "[DONE]":
            return
        try:
            data = json.loads(payload)
        except ValueError:
            raise ChatResponseError(f"not a chat completion chunk: {payload[:120]!r}") from None
        if isinstance(data, dict) and "error" in data:
            err = data["error"]
            raise ChatHTTPError(500, str(err.get("message") if isinstance(err, dict) else err)[:300])
        if isinstance(data, dict):
            yield data


def _prompt_start(messages: list[dict[str, Any]], chars: int) -> str:
    """The first ``chars`` characters of a request's messages, as a server's prompt cache would see them."""
    out, n = [], 0
    for m in messages:
        text = f"{m.get('role')}:{m.get('content') or ''}\n"
        out.append(text)
        n += len(text)
        if n >= chars:
            break
    return "".join(out)[:chars]


MAX_TOKENS = 10**9  # more than any context window: a larger "count" is a broken server's, not a count


def token_count(value: Any) -> int | None:
    """A token count as a server reported it: a whole non-negative number up to :data:`MAX_TOKENS`, else None
    (not reported)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if 0 <= value <= MAX_TOKENS else None


def _message(m: BaseMessage) -> dict[str, Any]:
    role = _ROLES.get(m.type)
    if role is None:
        raise ValueError(f"message type {m.type!r} is not supported by the HTTP transport")
    return {"role": role, "content": m.content}


def _ai_message(data: dict[str, Any], choice: dict[str, Any], message: dict[str, Any]) -> AIMessage:
    tool_calls, invalid = [], []
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        try:
            args = json.loads(fn.get("arguments") or "{}")
            if not isinstance(args, dict):
                raise ValueError("arguments are not a JSON object")
        except ValueError as e:
            invalid.append({"name": fn.get("name"), "args": fn.get("arguments"), "id": call.get("id"),
                            "error": str(e), "type": "invalid_tool_call"})
        else:
            tool_calls.append({"name": fn.get("name") or "", "args": args, "id": call.get("id"), "type": "tool_call"})
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    usage_metadata = None
    prompt, completion = token_count(usage.get("prompt_tokens")), token_count(usage.get("completion_tokens"))
    # counts that are not counts ("many", -3, 1e30) are taken as not reported: the gateway counts the call locally,
    # as the langchain transport does, instead of failing a call that was answered
    if prompt is not None and completion is not None:
        usage_metadata = {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion}
        details = usage.get("prompt_tokens_details")
        cached = token_count(details.get("cached_tokens")) if isinstance(details, dict) else None
        if cached is not None:  # OpenAI's prompt caching
            usage_metadata["input_token_details"] = {"cache_read": min(cached, prompt)}
    meta: dict[str, Any] = {"finish_reason": choice.get("finish_reason"), "model_name": data.get("model")}
    if choice.get("logprobs") is not None:
        meta["logprobs"] = choice["logprobs"]
    choices = data.get("choices")
    if isinstance(choices, list) and len(choices) > 1:  # several answers asked at once (n): each one's text
        meta["samples"] = [str((c.get("message") or {}).get("content") or "") if isinstance(c, dict) else ""
                           for c in choices]
    if isinstance(data.get("timings"), dict):  # llama.cpp: prompt_n processed, cache_n reused from its cache
        meta["timings"] = data["timings"]
    return AIMessage(content=message.get("content") or "", tool_calls=tool_calls, invalid_tool_calls=invalid,
                     usage_metadata=usage_metadata, response_metadata=meta)


#: request fields a server may refuse without the answer losing its meaning (OpenAI's reasoning models take no
#: temperature and give no log probabilities): dropped where refused, the answer then read without them
DROPPABLE = ("temperature", "top_p", "logprobs", "top_logprobs")
REFUSED_FIELD = re.compile(r"unsupported (?:parameter|value)\W+'?([a-z_]+)", re.I)


def _error_message(raw: bytes) -> str:
    try:
        err = json.loads(raw).get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        if isinstance(err, str):
            return err[:300]
    except (ValueError, AttributeError):
        pass
    return raw[:200].decode("utf-8", "replace")


def retry_after(headers: Any) -> float | None:
    """How long a server asked to wait, in seconds: ``retry-after-ms`` (OpenAI's), else ``Retry-After`` as
    seconds or as an HTTP date (RFC 9110 allows both; proxies and gateways send dates); None where neither is
    given or readable. Never negative (a date in the past means now)."""
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT by definition
        when = when.replace(tzinfo=dt.timezone.utc)
    return max(0.0, (when - dt.datetime.now(dt.timezone.utc)).total_seconds())


class ServedFacts(BaseModel):
    """What an OpenAI-compatible server says of itself: the models it serves and, where it tells, the context
    window (vLLM: ``max_model_len`` in ``/v1/models``; llama.cpp: ``n_ctx`` in ``/props``, else ``n_ctx_train`` in
    the model's ``meta``; LM Studio and routers: ``context_length`` / ``max_context_length``)."""

    models: tuple[str, ...] = ()
    context: int | None = None


_CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length", "context_window")


def served_facts(base_url: str, api_key: str | None = None, timeout: float = 5.0,
                 headers: dict[str, str] | None = None) -> ServedFacts:
    """Ask the server at ``base_url`` (its ``/models``, and llama.cpp's ``/props`` beside ``/v1``) what it serves.
    Raises ``OSError`` (or ``ValueError`` for an answer that is not the list) where ``/models`` cannot be read."""
    url, auth = _authorised(base_url, api_key)
    sent = {"Accept": "application/json", **(headers or {}), **auth}

    def get(address: str) -> Any:
        with urllib.request.urlopen(urllib.request.Request(address, headers=sent), timeout=timeout) as r:
            return json.loads(r.read())

    root = (url or "").rstrip("/")
    listed = get(root + "/models")
    entries = listed.get("data") if isinstance(listed, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{root}/models did not answer with a list of models")
    models = tuple(str(e["id"]) for e in entries if isinstance(e, dict) and e.get("id"))
    context = None
    for e in entries:
        if not isinstance(e, dict):
            continue
        found = [e.get(k) for k in _CONTEXT_KEYS] + [(e.get("meta") or {}).get("n_ctx_train")
                                                     if isinstance(e.get("meta"), dict) else None]
        context = next((int(v) for v in found if isinstance(v, int | float) and v > 0), None)
        if context:
            break
    try:  # llama.cpp's own settings: the context a request actually gets, which n_ctx_train only bounds
        props = get(root.removesuffix("/v1") + "/props")
        n_ctx = (props.get("default_generation_settings") or {}).get("n_ctx") if isinstance(props, dict) else None
        if isinstance(n_ctx, int) and n_ctx > 0:
            context = n_ctx
    except (OSError, ValueError):
        pass  # not llama.cpp
    return ServedFacts(models=models, context=context)


# ------------------------------------------------- what an answer carries, read the same whichever chat model sent it

def answer_text(answer: AIMessage) -> str:
    content = answer.content
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)


def raw_structured(answer: AIMessage) -> str:
    if answer.tool_calls:
        return json.dumps(answer.tool_calls[0].get("args", {}))
    return answer_text(answer)


def answer_logprobs(answer: AIMessage) -> list[dict[str, Any]]:
    """The answer's per-token log probabilities, checked where they enter: every one a finite number ≤ 0 and every
    token a string, else none at all (the answer is then read without probabilities, as from a server that gives
    none) — a hostile or broken server's 800, "NaN" or "abc" must not crash a run whose calls are paid."""
    entries = ((answer.response_metadata or {}).get("logprobs") or {})
    content = entries.get("content") if isinstance(entries, dict) else None
    if not isinstance(content, list):
        return []
    for entry in content:
        if not isinstance(entry, dict):
            return []
        tops = entry.get("top_logprobs") or []
        if not isinstance(tops, list) or not all(_sound_logprob(c) for c in (entry, *tops)):
            return []
    return content


def _sound_logprob(c: Any) -> bool:
    if not isinstance(c, dict) or not isinstance(c.get("token", ""), str):
        return False
    lp = c.get("logprob")
    return lp is None or (isinstance(lp, int | float) and not isinstance(lp, bool) and math.isfinite(lp)
                          and lp <= 1e-6)




def processed_tokens(answer: AIMessage, prompt: int) -> tuple[int | None, int | None]:
    """(prompt tokens the server computed, prompt tokens it reused from its cache), as far as it says:
    llama.cpp's ``timings`` (``prompt_n``, ``cache_n``), or OpenAI's ``cached_tokens`` usage detail."""
    timings = (answer.response_metadata or {}).get("timings")
    if isinstance(timings, dict) and token_count(timings.get("prompt_n")) is not None:
        return token_count(timings["prompt_n"]), token_count(timings.get("cache_n")) or 0
    details = (answer.usage_metadata or {}).get("input_token_details") or {}
    if token_count(details.get("cache_read")) is not None:
        reused = min(token_count(details["cache_read"]) or 0, prompt)
        return prompt - reused, reused
    return None, None
