"""The LLM gateway: one place that talks to chat models.

It knows no debate; it sends messages, enforces the context window, retries transient errors with tenacity (the
SDK's own retries are off so the two never multiply), applies a real timeout, caches answers, puts requests on a
server's slots, reads one-token decisions from log probabilities (or the shares of sampled answers) and reports
one :class:`CallRecord` per request. Its prose calls (free text, structured answers) are
:mod:`debatrix.llm.prose_calls`; the OpenAI SDK's error kinds and LangChain's transport, :mod:`debatrix.llm.sdk`."""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import aiohttp
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel, ConfigDict, create_model
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from debatrix.core.errors import (ContextWindowExceeded, IncompleteJudgment, LLMError,
                                  LLMTimeoutError, RunStopped, ServiceLost, require_extra)
from debatrix.core.models import CallRecord, where_called
from debatrix.core.probabilities import answered_option, json_choice, json_object, option_distribution, option_shares
from debatrix.core.prompting import response_format
from debatrix.core.settings import LLMSettings, secrets_of
from debatrix.core.prompting import count_message_tokens, count_tokens
from debatrix.llm.cache import AnswerCache, CacheUnavailable, open_cache
from debatrix.llm.http_chat import (ChatHTTPError, ChatResponseError, Endpoint, HTTPChatModel, answer_logprobs,
                                    answer_text, processed_tokens, raw_structured, token_count)
from debatrix.llm.prose_calls import Method, ProseCalls
from debatrix.llm.scheduling import AffinityScheduler
from debatrix.llm.sdk import (HTTPX_TRANSPORT, LANGCHAIN_EXTRA, SDK_CONNECTION, SDK_ERROR, SDK_LENGTH, SDK_STATUS,
                              SDK_TIMEOUT, chat_openai, httpx, is_transient, retry_after_of, status_error)


def _openai_kinds() -> tuple[type, ...]:
    """The chat models that speak OpenAI's API: ours, and ChatOpenAI where it is installed."""
    try:
        from langchain_openai import ChatOpenAI
    except ImportError:
        return (HTTPChatModel,)
    return (ChatOpenAI, HTTPChatModel)


class _ToolProbe(BaseModel):
    """A schema to ask a chat model whether it binds tools at all."""

    value: int


# The sample a request belongs to (a benchmark repeat). From 1 on it becomes the request's ``seed`` and so part of
# the answer cache's key: repeat k is a new sample, never a replay of repeat 0's cached answers.
SAMPLE: ContextVar[int | None] = ContextVar("debatrix_sample", default=None)


def _api_key(settings: LLMSettings) -> str | None:
    key = settings.api_key.get_secret_value() if settings.api_key else None
    if key is None and settings.base_url is None:
        raise LLMError(
            "no LLM configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for other OpenAI-compatible servers), "
            "or pass --base-url / a chat model"
        )
    return key


def make_http_model(settings: LLMSettings) -> HTTPChatModel:
    """The lean aiohttp client (``transport="http"``) for the configured endpoint."""
    key = _api_key(settings)
    payload = {"model": settings.model, "temperature": settings.temperature,
               "max_completion_tokens": settings.max_output_tokens}
    return HTTPChatModel(endpoint=Endpoint(settings.base_url or "https://api.openai.com/v1", key, payload,
                                           max_connections=settings.max_concurrency,
                                           extra_headers=account_headers(settings), more=settings.base_urls))


def account_headers(settings: LLMSettings) -> dict[str, str]:
    """The OpenAI account headers the SDK sends for ``organization`` / ``project`` (both transports send them)."""
    return {k: v for k, v in (("OpenAI-Organization", settings.organization),
                              ("OpenAI-Project", settings.project)) if v}


def make_chat_model(settings: LLMSettings, http_async_client: httpx.AsyncClient | None = None) -> BaseChatModel:
    """LangChain's ChatOpenAI for the configured endpoint (``transport="langchain"``)."""
    return chat_openai(settings, _api_key(settings), account_headers(settings), http_async_client)


@functools.lru_cache(maxsize=32)
def _answers_schema(keys: tuple[str, ...], options: tuple[str, ...]) -> type[BaseModel]:
    """The JSON answer of several small decisions: one of ``options`` under each key (built once per shape: a
    flow asks with a handful of shapes, one request a passage)."""
    return create_model("FlowAnswers", __config__=ConfigDict(extra="forbid"),
                        **{k: (Literal[options], ...) for k in keys})  # type: ignore[call-overload,valid-type]


def _samples(answer: AIMessage) -> list[str]:
    """Every answer a request for several (``n``) brought back, as text (one answer: its own text)."""
    texts = answer.response_metadata.get("samples")
    return [str(t) for t in texts] if isinstance(texts, list) and texts else [answer_text(answer)]


class LLMGateway(ProseCalls):
    def __init__(self, settings: LLMSettings, chat_model: BaseChatModel | None = None,
                 cache: AnswerCache | None = None):
        self.settings = settings
        self._own_cache = cache is None and settings.cache_path is not None
        self.cache = cache if cache is not None else (
            open_cache(settings.cache_path, settings.max_concurrency) if settings.cache_path else None)
        self._own_model = chat_model is None
        self._limiter = None
        if settings.requests_per_second:
            from langchain_core.rate_limiters import InMemoryRateLimiter

            self._limiter = InMemoryRateLimiter(requests_per_second=settings.requests_per_second,
                                                check_every_n_seconds=0.01, max_bucket_size=1)
        # an HTTP client belongs to one event loop: models we build get one client per loop, so the same gateway
        # works across several asyncio.run() calls (LangChain's shared default client does not)
        self._per_loop: dict[int, tuple[asyncio.AbstractEventLoop, Any, Any]] = {}
        self._http = chat_model is None and settings.transport == "http"
        if chat_model is not None:
            self._model: Any = chat_model
        else:
            self._model = make_http_model(settings) if self._http else make_chat_model(settings)
        self.method: Method = self._choose_method()
        self.completed_requests = 0  # for progress estimates
        self.stopped: str | None = None  # why the run was stopped (stop()): no request is sent after it
        self.cache_lost: str | None = None  # the answer cache's store stopped answering: nothing more is sent
        self.unsaved: Path | None = None  # where answers paid for after that wait for the store to come back
        self._in_flight: set[asyncio.Task] = set()
        # log probabilities are asked of OpenAI-compatible servers (until one refuses them); other LangChain chat
        # models may reject the unknown request fields, unless they say they take them (``debatrix_logprobs``)
        self.logprobs_supported = self._speaks_openai() or bool(getattr(self._model, "debatrix_logprobs", False))
        # whether the server's answers carry the log probabilities asked (None: not seen yet): --decision-samples
        # samples only where they do not, since n answers cost n times the tokens and estimate what they give exactly
        self.gives_logprobs: bool | None = None
        self._turn = 0  # round robin over the per-loop connection pools
        self._identity = self._model_identity()

    def close(self) -> None:
        if self._http:
            self._model.endpoint.close()
        if self._own_cache and self.cache is not None:
            self.cache.close()
            self.cache = None

    def _model_identity(self) -> dict[str, Any]:
        """What makes two answers interchangeable: the endpoint, the model and its sampling settings (never the API
        key). The cache key is a hash of this and of the request (messages and request options). The endpoint is
        keyed as :func:`endpoint_key` spells it, so a resume under another spelling of the same address reuses the
        answers; the embedded model by its name (its port changes from run to run)."""
        if self._own_model:
            s = self.settings
            if s.served_locally:
                where = f"local:{s.local_model}"
            elif s.base_urls:  # a fleet of one model's servers: the set (any of them gives the same answers)
                where = " + ".join(sorted(endpoint_key(u) for u in s.endpoints))
            else:
                where = endpoint_key(s.base_url)
            return {"base_url": where, "model": s.model, "temperature": s.temperature,
                    "max_tokens": s.max_output_tokens}
        try:
            params = dict(self._model._identifying_params)
        except Exception:
            params = {}
        return {"type": type(self._model).__name__,
                **{k: v for k, v in params.items() if "key" not in k.lower() and "token" != k.lower()}}

    @property
    def model(self) -> BaseChatModel:
        if not _running_loop():
            return self._model
        models = self._loop_state()[1]
        self._turn += 1
        return models[self._turn % len(models)]

    def _loop_state(self) -> tuple[asyncio.AbstractEventLoop, list[BaseChatModel], Any]:
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(id(loop))
        if state is None or state[0] is not loop:
            for key, (old, _, _) in list(self._per_loop.items()):
                if old.is_closed():
                    del self._per_loop[key]
            models = [self._model]
            if self._own_model and not self._http:  # the HTTP transport keeps one aiohttp pool per loop itself
                plain_http = (self.settings.base_url or "").startswith("http://")
                # httpcore scans every pooled connection on each request event, so one big pool costs
                # O(connections) per request: several small pools (one per 16 requests in flight) keep it flat.
                # No TLS to set up for a plain-HTTP server (loading the CA bundle is the costliest part of a new client).
                shards = max(1, -(-self.settings.max_concurrency // 16))
                require_extra(*LANGCHAIN_EXTRA)
                models = [make_chat_model(self.settings, httpx.AsyncClient(
                    timeout=self.settings.timeout, verify=not plain_http,
                    limits=httpx.Limits(max_connections=16, max_keepalive_connections=16)))
                    for _ in range(shards)]
            # a server that caches prompts serves best the request that shares most with what it just served
            gate = (AffinityScheduler(self.settings.max_concurrency) if self.settings.prompt_cache
                    else asyncio.Semaphore(self.settings.max_concurrency))
            state = (loop, models, gate)
            self._per_loop[id(loop)] = state
        return state

    @property
    def chat_model_given(self) -> bool:
        """Whether the caller gave the chat model (a LangChain model of their own), not the settings."""
        return not self._own_model

    @property
    def model_name(self) -> str:
        m = self._model
        return str(getattr(m, "model_name", None) or getattr(m, "model", None) or type(m).__name__)

    @property
    def description(self) -> str:
        return f"{self.model_name} ({self.method} structured output)"

    def _speaks_openai(self) -> bool:
        return isinstance(self._model, _openai_kinds())

    def _choose_method(self) -> Method:
        wanted = self.settings.structured_output
        if wanted != "auto":
            return wanted
        if isinstance(self._model, _openai_kinds()):
            return "json_schema"
        try:
            self._model.bind_tools([_ToolProbe])
        except NotImplementedError:
            return "parse"
        return "tool"

    @asynccontextmanager
    async def _gate(self, messages: list[BaseMessage]) -> AsyncIterator[dict[str, str] | None]:
        """A place among the requests in flight: in arrival order, or by shared prefix where the server caches
        prompts (:mod:`debatrix.llm.scheduling`)."""
        gate = self._loop_state()[2]
        if isinstance(gate, AffinityScheduler):
            async with gate.slot(_prompt_text(messages)) as served:
                yield served
        else:
            async with gate:
                yield None

    async def _abandonable(self, request: Any, meta: dict[str, Any]) -> Any:
        """Await a request that :meth:`stop` can abandon (a cancellation of the run itself still propagates)."""
        task = asyncio.ensure_future(request)
        self._in_flight.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self.stopped and task.cancelled() and not (current and current.cancelling()):
                raise RunStopped(f"{meta.get('debatrix_node')}: {self.stopped}") from None
            raise
        finally:
            self._in_flight.discard(task)

    # ------------------------------------------------------------------ token budget

    def prompt_tokens(self, messages: list[BaseMessage]) -> int:
        return count_message_tokens([(m.type, str(m.content)) for m in messages], self.settings.tokenizer)

    def check_messages_fit(self, messages: list[BaseMessage], what: str, answer: int | None = None) -> None:
        """Raise :class:`ContextWindowExceeded` when the prompt and the room for the answer (``answer`` tokens, at
        most ``max_output_tokens``) exceed the context window. A token is at least one UTF-8 byte, so prompts whose
        bytes fit are not tokenised at all."""
        room = min(answer or self.settings.max_output_tokens, self.settings.max_output_tokens)
        budget = self.settings.context_window - room
        if sum(len(str(m.content).encode()) + 8 for m in messages) + 3 <= budget:
            return
        tokens = self.prompt_tokens(messages)
        if tokens > budget:
            raise ContextWindowExceeded(tokens + room, self.settings.context_window, what)

    # ------------------------------------------------------------------ one request

    def stop(self, reason: str) -> None:
        """End the run early (the page's Stop): requests in flight are abandoned, later ones are not sent; each
        fails as :class:`RunStopped`, so the run ends incomplete with every answered call still in its result."""
        self.stopped = reason
        for task in list(self._in_flight):
            task.cancel()

    async def _send(self, model: Any, messages: list[BaseMessage], meta: dict[str, Any]) -> tuple[AIMessage, int]:
        """Send with retries; returns the answer and the number of attempts (0: answered from the cache)."""
        if self.stopped:
            raise RunStopped(f"{meta.get('debatrix_node')}: {self.stopped}")
        sample = SAMPLE.get()
        if sample:  # repeat 0 is the plain request (its answers are those of `debatrix judge --cache`)
            model = model.bind(seed=sample)
        if self.cache is None:
            return await self._send_uncached(model, messages, meta)
        if self.cache_lost:  # nothing more is sent once the cache is gone: another process may be sending it
            raise ServiceLost(f"{meta.get('debatrix_node')}: {self.cache_lost}")
        cache = self.cache
        key = cache.key(self._identity, dict(getattr(model, "kwargs", None) or {}), messages)
        try:
            hit = await asyncio.to_thread(cache.get, key)
            if hit is None:
                # sent once: a caller (of this process, or of another sharing the cache) already sending this call
                # is waited for, and its answer taken
                async with cache.claimed(key):
                    hit = await asyncio.to_thread(cache.get, key)
                    if hit is None:
                        answer, attempts = await self._send_uncached(model, messages, meta)
                        try:
                            await asyncio.to_thread(cache.put, key, str(meta.get("debatrix_node")), answer)
                        except CacheUnavailable as e:  # the answer is paid for: it is kept, the run stops after
                            self.cache_lost = str(e)
                            self.unsaved = cache.keep(key, str(meta.get("debatrix_node")), answer) or self.unsaved
                        return answer, attempts
        except CacheUnavailable as e:
            self.cache_lost = str(e)
            raise ServiceLost(f"{meta.get('debatrix_node')}: {e}") from None
        self.completed_requests += 1
        return hit, 0

    async def _send_uncached(self, model: Any, messages: list[BaseMessage], meta: dict[str, Any]
                             ) -> tuple[AIMessage, int]:
        attempts = 0

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            after = retry_after_of(exc) if exc else None
            if after is not None:
                return min(after, self.settings.retry_max_wait)
            return min(0.5 * 2 ** (state.attempt_number - 1), self.settings.retry_max_wait)

        try:
            try:
                async for attempt in AsyncRetrying(
                    stop=stop_after_attempt(self.settings.max_retries + 1),
                    wait=wait,
                    retry=retry_if_exception(is_transient),
                    reraise=True,
                ):
                    with attempt:
                        if self.stopped:  # stopped while waiting to retry
                            raise RunStopped(f"{meta.get('debatrix_node')}: {self.stopped}")
                        if self._limiter is not None:
                            await self._limiter.aacquire()
                        async with self._gate(messages) as served:
                            if self.stopped:  # stopped while it waited for its turn: never sent, costs nothing
                                raise RunStopped(f"{meta.get('debatrix_node')}: {self.stopped}")
                            attempts += 1  # sent from here on: counted, even if abandoned on the way
                            answer = await self._abandonable(asyncio.wait_for(
                                model.ainvoke(messages, config={"metadata": meta, "tags": ["debatrix"]}),
                                timeout=self.settings.timeout,
                            ), meta)
                            if served is not None:  # the affinity scheduler compares prompts with what was served
                                served["answer"] = _ROLE_TEXT["ai"] + answer_text(answer)
            except RunStopped:
                raise
            except (asyncio.TimeoutError, TimeoutError, SDK_TIMEOUT) as e:
                raise LLMTimeoutError(
                    f"{meta.get('debatrix_node')}: no answer within {self.settings.timeout:g} s after {attempts} attempts"
                ) from e
            except ChatHTTPError as e:
                raise status_error(e.status, e.message, attempts, meta, self.settings.context_window, self.scrub) from e
            except SDK_STATUS as e:
                raise status_error(e.status_code, str(e), attempts, meta, self.settings.context_window,
                                   self.scrub) from e
            except (SDK_CONNECTION, HTTPX_TRANSPORT, aiohttp.ClientError, ConnectionError) as e:
                raise LLMError(f"{meta.get('debatrix_node')}: cannot reach the model server after {attempts} attempts "
                               f"({type(e).__name__})") from e
            except SDK_LENGTH:
                raise  # structured() turns it into a repair request
            except (SDK_ERROR, ChatResponseError) as e:
                raise LLMError(f"{meta.get('debatrix_node')}: {type(e).__name__}: {self.scrub(str(e))}") from e
            except Exception as e:  # a chat model or proxy answering something that is not a chat completion
                raise LLMError(f"{meta.get('debatrix_node')}: the model call failed: {type(e).__name__}: "
                               f"{self.scrub(str(e))[:200]}") from e
        except IncompleteJudgment as err:  # the failed request still counts, with its retries
            # a request Stop abandoned in flight was sent, and a server usually finishes it: it counts as a call (no
            # answer, no reported usage), so the calls a stopped run shows are the requests the server received
            sent = attempts if isinstance(err, RunStopped) else max(attempts, 1)
            if sent > 0:
                err.calls = [*getattr(err, "calls", []), CallRecord(
                    node=str(meta.get("debatrix_node")), dimension=meta.get("debatrix_dimension"),
                    attempts=sent, failed=True)]
            raise
        self.completed_requests += 1
        if not isinstance(answer, AIMessage):
            raise LLMError(f"{meta.get('debatrix_node')}: chat model returned {type(answer).__name__}, not a message")
        return answer, attempts

    def scrub(self, text: str) -> str:
        """A server's message without the secrets it may echo: the API key, and for every server of the fleet the
        password of its URL as written and decoded, and the basic-auth token made of it (a server that echoes the
        Authorization header shows ``Basic <base64 of user:password>``)."""
        for secret in self._secrets():
            text = text.replace(secret, "***")
        return text

    @functools.cache  # noqa: B019 (one gateway per run: its settings never change)
    def _secrets(self) -> tuple[str, ...]:
        key = self.settings.api_key.get_secret_value() if self.settings.api_key else None
        return secrets_of(key, self.settings.endpoints)

    def _record(self, node: str, dimension: str | None, messages: list[BaseMessage], answer: AIMessage,
                started: float, attempts: int, repaired: bool, meta: dict[str, Any] | None = None) -> CallRecord:
        usage = answer.usage_metadata or {}
        prompt = token_count(usage.get("input_tokens")) or self.prompt_tokens(messages)
        completion = token_count(usage.get("output_tokens"))
        if completion is None:  # not reported (or nonsense, e.g. negative): counted here
            completion = count_tokens(answer_text(answer), self.settings.tokenizer)
        processed, reused = processed_tokens(answer, prompt)
        if attempts == 0:  # answered from the response cache: the model read nothing
            processed, reused = 0, None
        logged: dict[str, Any] = {}
        if self.settings.log_calls:  # the prompt as sent and the answer as written (scrubbed of the key)
            logged = {"index": (meta or {}).get("debatrix_index"),
                      "messages": tuple((m.type, self.scrub(str(m.content))) for m in messages),
                      "answer": self.scrub(raw_structured(answer))}
        return CallRecord(node=node, dimension=dimension, prompt_tokens=prompt, completion_tokens=completion,
                          seconds=round(time.perf_counter() - started, 4), attempts=max(attempts, 1),
                          repaired=repaired, cached=attempts == 0, prompt_tokens_processed=processed,
                          cached_prompt_tokens=reused, **logged)

    # ------------------------------------------------------------------ public

    async def _send_probed(self, model: Any, messages: list[BaseMessage], meta: dict[str, Any], probe: bool
                           ) -> tuple[AIMessage, int]:
        """Send, asking for log probabilities when ``probe`` (and the server has not refused them before)."""
        if not (probe and self.logprobs_supported):
            return await self._send(model, messages, meta)
        try:
            return await self._send(model.bind(logprobs=True, top_logprobs=TOP_LOGPROBS), messages, meta)
        except LLMError as e:
            if "logprob" not in str(e).lower():
                raise
            self.logprobs_supported = False  # e.g. reasoning models: judge by the answers alone from now on
            return await self._send(model, messages, meta)

    async def _text_with_logprobs(self, messages: list[BaseMessage], *, node: str, max_tokens: int,
                                  dimension: str | None = None, meta: dict[str, Any] | None = None,
                                  json_schema: type[BaseModel] | None = None, sampling: dict[str, Any] | None = None
                                  ) -> tuple[str, list[dict[str, Any]], CallRecord, list[str]]:
        """:meth:`text_with_logprobs`, and with ``sampling`` (``n``, ``temperature``) every sampled answer's text
        (no log probabilities asked: the shares of the answers stand in for them)."""
        self.check_messages_fit(messages, where_called(node, dimension))
        extra: dict[str, Any] = dict(sampling or {})
        if json_schema is not None:
            extra["response_format"] = json.loads(response_format(json_schema, None))
        model = self.model.bind(max_tokens=min(max_tokens, self.settings.max_output_tokens), **extra)
        started = time.perf_counter()
        answer, attempts = await self._send_probed(model, messages, self._meta(node, dimension, "text", meta),
                                                   sampling is None)
        record = self._record(node, dimension, messages, answer, started, attempts, False, meta)
        return answer_text(answer).strip(), answer_logprobs(answer), record, _samples(answer)

    async def decision(self, messages: list[BaseMessage], options: Sequence[str], *, node: str,
                       dimension: str | None = None, meta: dict[str, Any] | None = None
                       ) -> tuple[dict[str, float] | None, CallRecord]:
        """A small decision: the probability of each of ``options`` (short answers: "yes"/"no", a letter, a digit)
        as the first token of the answer, read from the server's log probabilities; where it gives none, the
        answer itself counts as certain where it is one of the options as a whole word (:func:`answered_option`;
        the record says ``from_answer``). None: the answer was none of the options (the caller records the
        decision as missing; the call is paid and counted). Where the server takes a grammar (llama.cpp) and gives
        no probabilities, the answer is held to the options, so the one token written is always one of them."""
        self.check_messages_fit(messages, where_called(node, dimension), 8)
        # one token: the probabilities are read from the first token's alternatives, and the server's writing of
        # an end token after it is a second decoding step paid for nothing
        model = self.model.bind(max_tokens=1)
        # the alternatives a server reports are the model's own, before any grammar (llama.cpp's are): where it
        # reports them, a grammar would change only the token written, which is not read, and llama.cpp checks
        # it against the whole vocabulary on every call
        if self.settings.grammar and not self.logprobs_supported:
            model = self._beyond_openai(model, {"grammar": "root ::= " + " | ".join(json.dumps(o) for o in options)})
        started = time.perf_counter()
        samples = self._sample_count()
        if samples > 1:  # no probabilities to read: the options' shares among several answers estimate them
            model = model.bind(n=samples, temperature=1.0)
        answer, attempts = await self._send_probed(
            model, messages, self._meta(node, dimension, "decision", {"debatrix_choices": list(options), **(meta or {})}),
            samples <= 1)
        record = self._record(node, dimension, messages, answer, started, attempts, False, meta)
        if self._learnt_no_logprobs(samples, bool(answer_logprobs(answer))):  # ask this one again, sampled
            dist, again = await self.decision(messages, options, node=node, dimension=dimension, meta=meta)
            return dist, again.after(record)
        texts = _samples(answer) if samples > 1 else []
        if len(texts) > 1:  # a server that ignores n (Ollama's /v1) answers once: that answer counts as below
            shares = option_shares([answered_option(t, options) for t in texts], options)
            return shares, record.model_copy(update={"sampled": len(texts) if shares is not None else 0})
        dist = option_distribution(answer_logprobs(answer), options)
        if dist is None:  # no probabilities: the answer itself, taken as certain, where it is one of the options
            hit = answered_option(answer_text(answer), options)
            dist = {o: float(o == hit) for o in options} if hit is not None else None
            record = record.model_copy(update={"from_answer": True}) if hit is not None else record
        return dist, record

    def _sample_count(self) -> int:
        """How many answers a decision asks (``--decision-samples``): that many only where the server gives no log
        probabilities (known once one answer came back without them, or no probabilities can be asked of this
        model); else one, its probabilities read exactly."""
        want = self.settings.decision_samples
        return want if want > 1 and (self.gives_logprobs is False or not self.logprobs_supported) else 0

    def _learnt_no_logprobs(self, samples: int, carried: bool) -> bool:
        """After a decision asked with log probabilities: note whether the server gave them. True where it gave
        none and answers are to be sampled instead: the decision is asked again, sampled, as every later one is."""
        if samples > 1 or self.settings.decision_samples <= 1:
            return False
        if carried:
            self.gives_logprobs = True
            return False
        if self.gives_logprobs is None:
            self.gives_logprobs = False
        return not self.gives_logprobs

    @property
    def openai_compatible(self) -> bool:
        """The model is reached as an OpenAI-compatible endpoint (JSON schemas, per-token log probabilities)."""
        return self._speaks_openai()

    async def decisions(self, messages: list[BaseMessage], keys: Sequence[str], options: Sequence[str], *,
                        node: str, meta: dict[str, Any] | None = None
                        ) -> tuple[dict[str, dict[str, float] | None], CallRecord]:
        """Several small decisions in one request: a JSON object whose value under each of ``keys`` is one of
        ``options``, each value's probabilities read at its first token from the server's log probabilities
        (:func:`json_choice`). Where the server gives none, each answered value counts as certain (the record says
        ``from_answer``); a value that is missing or none of the options is a missing decision (None). One prompt
        instead of one a question: what an endpoint billed per prompt token wants."""
        schema = _answers_schema(tuple(keys), tuple(options))
        samples = self._sample_count()
        text, logprobs, record, texts = await self._text_with_logprobs(
            messages, node=node, max_tokens=12 + 8 * len(keys), meta=meta, json_schema=schema,
            sampling={"n": samples, "temperature": 1.0} if samples > 1 else None)
        if self._learnt_no_logprobs(samples, bool(logprobs)):  # ask these again, sampled
            out, again = await self.decisions(messages, keys, options, node=node, meta=meta)
            return out, again.after(record)
        out: dict[str, dict[str, float] | None] = {}
        if samples > 1 and len(texts) > 1:  # each key's options' shares among the answers that give it one (a
            parsed = [json_object(t) for t in texts]  # server that ignores n answers once: counted as below)
            for k in keys:
                out[k] = option_shares([answered_option(str(a.get(k, "")), options) for a in parsed], options)
            if any(v is not None for v in out.values()):
                record = record.model_copy(update={"sampled": len(texts)})
            return out, record
        if logprobs:
            for k in keys:
                out[k] = json_choice(logprobs, k, options)
            return out, record
        answer = json_object(text)
        for k in keys:
            hit = answered_option(str(answer.get(k, "")), options)
            out[k] = None if hit is None else {o: float(o == hit) for o in options}
        if any(v is not None for v in out.values()):
            record = record.model_copy(update={"from_answer": True})
        return out, record

    def _beyond_openai(self, model: Any, fields: dict[str, Any]) -> Any:
        """``model`` sending request fields outside the OpenAI API (llama.cpp's grammar, its DRY sampler): the
        lean client puts them in the body, the SDK's client only as ``extra_body``."""
        return model.bind(**(fields if self.settings.transport == "http" else {"extra_body": fields}))

    def _meta(self, node: str, dimension: str | None, kind: str, extra: dict[str, Any] | None) -> dict[str, Any]:
        return {"debatrix_node": node, "debatrix_dimension": dimension, "debatrix_kind": kind, **(extra or {})}

TOP_LOGPROBS = 10  # alternatives per token: enough for ten score values or a few debaters' names


_LOOPBACK = {"localhost", "127.0.0.1", "::1", "0:0:0:0:0:0:0:1"}


def endpoint_key(url: str | None) -> str | None:
    """A base URL as the answer cache keys it: scheme and host in lower case, the loopback names as one, the
    default port written out, no credentials, no trailing slash (``http://LOCALHOST:80/v1/`` is
    ``http://loopback:80/v1``)."""
    if not url:
        return url
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    host = "loopback" if host in _LOOPBACK or host.startswith("127.") else host
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}:{port}{parts.path.rstrip('/')}"


def _running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


_ROLE_TEXT = {"system": "\x00system\x00", "human": "\x00user\x00", "ai": "\x00assistant\x00"}


def _prompt_text(messages: list[BaseMessage]) -> str:
    """The prompt as one string, roles marked, so shared prefixes of conversations compare as strings."""
    return "".join(_ROLE_TEXT.get(m.type, m.type) + str(m.content) for m in messages)
