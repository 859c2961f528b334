"""Test doubles that ship with the package: a scripted chat model and an OpenAI-compatible server on loopback.

``ScriptedChatModel`` answers from a script keyed by the *kind* of call (the gateway's metadata: node, dimension,
speech index, target), never by reading the prompt text. ``FakeOpenAIServer`` speaks ``/v1/chat/completions`` over
real HTTP on 127.0.0.1 and answers every request with schema-valid output, optionally after a fixed latency; with
``reading=True`` it answers the flow's decisions as :mod:`debatrix.testing_reader`'s careful reader would."""

from __future__ import annotations

import itertools
import json
import math
import re
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from debatrix.testing_reader import reading_yes


@dataclass(frozen=True)
class CallInfo:
    n: int  # global call number, from 0
    node: str
    dimension: str | None
    kind: str  # "text" or the name of the requested schema
    index: int | None
    target: str | None
    messages: list[BaseMessage] = field(repr=False)
    names: tuple[str, ...] = ()  # the debaters a decision scores (from the call's metadata)
    choices: tuple[str, ...] = ()  # the winners it may name


Answer = str | dict | Callable[[CallInfo], str | dict]


def default_answer(call: CallInfo) -> str | dict:
    if call.kind == "decision" and call.choices:
        return decided(call.messages, call.choices)
    if call.kind == "text":
        where = f" speech {call.index + 1}" if call.index is not None else ""
        return f"{call.node} comment on {call.dimension}{where}{' for ' + call.target if call.target else ''}."
    comment = {"comment": f"{call.node} comment on {call.dimension}."} if call.kind.startswith("Comment") else {}
    if call.kind == "SpeechAnalysisAnswer":
        return analysis_of(call)
    if call.kind == "ScoreAnswer":
        return {**comment, "score": 7}
    if call.kind in ("DecisionAnswer", "CommentDecisionAnswer") and call.names:
        return {**comment, **{name: 7 for name in call.names}, "winner": call.choices[0]}
    if call.kind in ("WinnerAnswer", "CommentWinnerAnswer") and call.choices:
        return {**comment, "winner": call.choices[0]}
    raise KeyError(f"no scripted answer for {call.node} ({call.kind})")


def decided(messages: Sequence[Any], options: Sequence[str]) -> str:
    """A small decision's answer that depends on its question: one of ``options`` picked by a hash of the last
    message, so the decisions about different passages differ (and are the same every run)."""
    last = messages[-1]
    text = str(last.content if hasattr(last, "content") else last.get("content"))
    return options[zlib.crc32(text.encode()) % len(options)]


def asked_options(body: dict[str, Any]) -> list[str]:
    """The options of a small decision request: its grammar's alternatives (llama.cpp), else those its question
    names ("Answer yes or no.", "Answer A, B or C.") where the answer is capped at a few tokens."""
    grammar = re.findall(r'"((?:[^"\\]|\\.)*)"', body.get("grammar") or "")
    if grammar:
        return grammar
    if (body.get("max_tokens") or body.get("max_completion_tokens") or 99) > 3 or not body.get("messages"):
        return []
    asked = re.search(r"Answer ((?:\w+, )*\w+) or (\w+)\.\s*$", str(body["messages"][-1].get("content") or ""))
    return [*asked.group(1).split(", "), asked.group(2)] if asked else []


def decision_logprobs(answer: str, options: Sequence[str], top: float | None = None) -> dict[str, Any]:
    """The answer token's alternatives as an OpenAI server reports them: the answer at ``top`` (default 0.55-0.94,
    by a hash), the rest shared."""
    top = 0.55 + (zlib.crc32(answer.encode() + str(options).encode()) % 40) / 100 if top is None else top
    rest = (1 - top) / max(1, len(options) - 1)
    probs = {o: top if o == answer else rest for o in options}
    return {"token": answer, "logprob": math.log(top),
            "top_logprobs": [{"token": o, "logprob": math.log(p)} for o, p in probs.items()]}


def sampled(answer: str, body: dict[str, Any], k: int) -> str:
    """Sample ``k`` of a request for several answers (``n``): a small decision's answer drawn from the probabilities
    :func:`decision_logprobs` reports for it (a JSON object of decisions: each value drawn so), so the shares of many
    samples approach them; any other answer as it is."""
    def draw(value: str, options: Sequence[str], salt: str) -> str:
        top = math.exp(decision_logprobs(value, options)["logprob"])
        roll = zlib.crc32(f"{salt}:{k}".encode()) % 10_000 / 10_000
        others = [o for o in options if o != value]
        return value if roll < top or not others else others[zlib.crc32(f"{salt}:{k}:o".encode()) % len(others)]

    asked = str((body.get("messages") or [{}])[-1].get("content"))
    options = asked_options(body)
    if options:
        return draw(answer, options, asked)
    props = (((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}).get("properties")
    try:
        values = json.loads(answer)
    except ValueError:
        return answer
    if not isinstance(props, dict) or not isinstance(values, dict):
        return answer
    return json.dumps({key: draw(v, props[key]["enum"], f"{asked}\n{key}") if key in props and "enum" in props[key]
                       else v for key, v in values.items()})


def json_logprobs(text: str, properties: dict[str, Any], top: float | None = None,
                  tops: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """A JSON answer's tokens as an OpenAI server reports them: each enum value one token with its options as the
    alternatives (:func:`decision_logprobs`), every other piece of the text one certain token."""
    def certain(piece: str) -> dict[str, Any]:
        return {"token": piece, "logprob": 0.0, "top_logprobs": [{"token": piece, "logprob": 0.0}]}

    out: list[dict[str, Any]] = []
    last = 0
    for m in re.finditer(r'"(\w+)"\s*:\s*"(\w+)"', text):
        if m.group(1) not in properties:
            continue
        out.append(certain(text[last:m.start(2)]))
        out.append(decision_logprobs(m.group(2), properties[m.group(1)]["enum"], (tops or {}).get(m.group(1), top)))
        last = m.end(2)
    out.append(certain(text[last:]))
    return out


def analysis_of(call: CallInfo, note: str | None = None, score: int | None = None) -> dict:
    """A valid structured analysis of the speech the call analyses: its first quotable passage (read from the
    speech block of the prompt, so the answer fits the schema's list of passages) and a note naming the speaker.
    ``score``: the merged answer's score."""
    quote = speech_passages(call)[0]
    who = call.target or "?"
    answer: dict[str, Any] = {"points": [{"quote": quote, "note": note or f"{who} {call.node} comment on "
                                                                      f"{call.dimension} speech {call.index + 1}."}]}
    if call.index:
        answer["answers"] = f"{who} answers the claims of speech {call.index}."
    if score is not None or "\"score\"" in str(call.messages[-1].content):
        answer["score"] = score or 7
    return answer


def speech_passages(call: CallInfo) -> list[str]:
    """The quotable passages of the speech an analysis call analyses, from its prompt's speech block."""
    from debatrix.core.prompting import SPEECH_MARK, quotable_passages

    text = "\n".join(str(m.content) for m in call.messages if m.type == "human")
    found = re.search(rf"<<<(DATA-\w+) speech {call.index + 1}, [^\n]*\n(.*?)\n\1>>>", text, re.S)
    if found is None:
        raise KeyError(f"no speech {call.index + 1} in the analysis prompt")
    lines = [ln[len(SPEECH_MARK):] if ln.startswith(SPEECH_MARK) else ln for ln in found.group(2).split("\n")]
    return quotable_passages("\n".join(lines))


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers ``script[node]`` (a string, a dict sent as JSON, or a function of
    :class:`CallInfo`), falling back to :func:`default_answer`. Every call is recorded in ``calls``."""

    script: dict[str, Any] = {}
    latency: float = 0.0
    _calls: list[CallInfo] = PrivateAttr(default_factory=list)
    _counter: Any = PrivateAttr(default_factory=itertools.count)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "debatrix-scripted"

    @property
    def calls(self) -> list[CallInfo]:
        return list(self._calls)

    def _answer(self, messages: list[BaseMessage], run_manager: Any) -> ChatResult:
        meta = dict(getattr(run_manager, "metadata", None) or {})
        with self._lock:
            call = CallInfo(n=next(self._counter), node=meta.get("debatrix_node", "?"),
                            dimension=meta.get("debatrix_dimension"), kind=meta.get("debatrix_kind", "text"),
                            index=meta.get("debatrix_index"), target=meta.get("debatrix_target"),
                            messages=list(messages), names=tuple(meta.get("debatrix_names") or ()),
                            choices=tuple(meta.get("debatrix_choices") or ()))
            self._calls.append(call)
        answer: Any = self.script.get(call.node, default_answer)
        if callable(answer):
            answer = answer(call)
        text = json.dumps(answer) if isinstance(answer, dict) else str(answer)
        usage = {"input_tokens": sum(len(str(m.content)) // 4 for m in messages), "output_tokens": len(text) // 4}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, usage_metadata=usage))])

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if self.latency:
            time.sleep(self.latency)
        return self._answer(messages, run_manager)

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if self.latency:
            import asyncio

            await asyncio.sleep(self.latency)
        return self._answer(messages, run_manager)


# ------------------------------------------------------------------------------------------ HTTP server


def instance_of(schema: dict[str, Any], n: int = 0, defs: dict[str, Any] | None = None) -> Any:
    """A small valid instance of a JSON schema (objects, enums, integers with bounds, strings)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return instance_of(defs[schema["$ref"].split("/")[-1]], n, defs)
    if "enum" in schema:
        return schema["enum"][n % len(schema["enum"])]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return instance_of(schema[key][0], n, defs)
    kind = schema.get("type", "object")
    if kind == "object":
        return {k: instance_of(v, n, defs) for k, v in schema.get("properties", {}).items()}
    if kind == "integer":
        lo, hi = schema.get("minimum", 0), schema.get("maximum", 100)
        return lo + (n * 3 + 4) % (hi - lo + 1)
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return n % 2 == 0
    if kind == "array":
        return [instance_of(schema.get("items", {}), n, defs)]
    return pattern_prefix(schema.get("pattern", "")) + f"A comment ({n})."


def pattern_prefix(pattern: str) -> str:
    """The literal text a string pattern such as ``^Maya\\s`` or ``^Maya [^"]{8,80}$`` requires at its start (with
    the space it asks for), so a fake answer matches it."""
    m = re.match(r"\^((?:\\[^sdwbSDWB]|[^\\\[\](){}.*+?$|])*)(\\s| )?", pattern)
    if not m:
        return ""
    return re.sub(r"\\(.)", r"\1", m.group(1)) + (" " if m.group(2) else "")


@dataclass
class Fault:
    """What a :class:`FakeOpenAIServer` responder returns to misbehave: an HTTP ``status`` with ``headers`` and a
    ``body`` (a dict is sent as JSON, a string as is), after ``delay`` seconds; or ``reset``: close the connection
    without answering."""

    status: int = 500
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    reset: bool = False


def stream_chunks(answer: dict[str, Any], size: int = 7) -> list[dict[str, Any]]:
    """A chat completion as the chunks an OpenAI server streams for it (``stream_options.include_usage``)."""
    choice = answer["choices"][0]
    message = choice.get("message") or {}
    base = {"id": answer.get("id"), "object": "chat.completion.chunk", "created": answer.get("created"),
            "model": answer.get("model")}
    text = message.get("content") or ""
    out = []
    for k in range(0, len(text), size):
        delta: dict[str, Any] = {"content": text[k:k + size]}
        if k == 0:
            delta["role"] = "assistant"
        piece: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": None}
        if k == 0 and choice.get("logprobs"):
            piece["logprobs"] = choice["logprobs"]
        out.append({**base, "choices": [piece]})
    for i, call in enumerate(message.get("tool_calls") or []):
        args = call["function"]["arguments"]
        half = len(args) // 2
        out.append({**base, "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
            {"index": i, "id": call["id"], "type": "function",
             "function": {"name": call["function"]["name"], "arguments": args[:half]}}]}}]})
        out.append({**base, "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
            {"index": i, "function": {"arguments": args[half:]}}]}}]})
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason")}]})
    if answer.get("usage"):
        out.append({**base, "choices": [], "usage": answer["usage"]})
    return out


@dataclass(frozen=True)
class ServerProfile:
    """What a real OpenAI-compatible server does with the parameters the judge sends, as the fake server plays it
    (docs/researchers.md, "Endpoints" has each server's command and what each mode does there). ``logprobs``:
    whether it returns token log probabilities when asked; ``max_top_logprobs``: the most alternatives it gives
    (more is refused, 400); ``n``: how it takes several answers in one request ("yes", "ignored": one answer
    whatever is asked, "refused": 400 unless 1); ``refuses``: body keys it refuses (400)."""

    name: str
    logprobs: bool = True
    max_top_logprobs: int = 20
    n: str = "yes"
    refuses: tuple[str, ...] = ()

    def refusal(self, body: dict[str, Any]) -> str | None:
        """Why this server refuses ``body`` (None: it takes it)."""
        for key in self.refuses:
            if key in body:
                return f"Unsupported parameter: '{key}'"
        tops = body.get("top_logprobs")
        if isinstance(tops, int) and tops > self.max_top_logprobs:
            return f"top_logprobs must be at most {self.max_top_logprobs}"
        many = body.get("n")
        if self.n == "refused" and isinstance(many, int) and many != 1:
            return "Only one completion choice is allowed"
        return None


#: the servers the docs give recipes for, as they answer (each measured against its documentation: OpenAI's chat
#: completions refuse max_tokens for its reasoning models and cap top_logprobs at 20; vLLM caps them at its
#: --max-logprobs, 20 by default; Ollama's /v1 gives no log probabilities and one choice whatever n asks; the
#: llama.cpp server gives log probabilities and refuses n other than 1)
SERVER_PROFILES = {p.name: p for p in (
    ServerProfile("openai", refuses=("max_tokens",)),
    ServerProfile("vllm"),
    ServerProfile("ollama", logprobs=False, n="ignored"),
    ServerProfile("llama.cpp", n="refused"),
    # an OpenAI reasoning model (o-series, gpt-5): no temperature but its own, no log probabilities, no max_tokens
    ServerProfile("reasoning", logprobs=False, refuses=("max_tokens", "temperature", "logprobs", "top_logprobs")),
)}


class FakeOpenAIServer:
    """``with FakeOpenAIServer(latency=0.2) as server: ChatOpenAI(base_url=server.base_url, ...)``.

    Answers text requests with a short comment and json_schema / tool requests with a valid instance. Records every
    request body in ``requests``."""

    def __init__(self, latency: float = 0.0, host: str = "127.0.0.1", port: int = 0,
                 responder: Callable[[dict[str, Any], int], dict[str, Any] | None] | None = None,
                 exact_usage: bool = True, profile: str | ServerProfile | None = None,
                 sure: float | None = None, reading: bool = False):
        self.latency = latency
        # a model that reads its prompt and answers small decisions from what the text shows (reading_yes)
        self.reading = reading
        # a model that says yes to every small decision with this probability (None: a hash of the question picks
        # the answer, at 0.55-0.94): a sure model, for what the judge does when a model's answers are all sharp
        self.sure = sure
        # answer as that server does (None: everything the OpenAI API allows, probabilities included)
        self.profile = SERVER_PROFILES[profile] if isinstance(profile, str) else profile
        self.exact_usage = exact_usage  # count tokens with tiktoken (else characters / 4: no work per request)
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []  # each request's Authorization header (None: none sent)
        self.headers: list[dict[str, str]] = []  # each request's headers (names lower-cased)
        self.arrivals: list[float] = []  # time.monotonic() of each request, in arrival order
        self.responder = responder
        self._counter = itertools.count()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out as separate writes: without TCP_NODELAY, Nagle's algorithm and the
            # client's delayed ACK hold every answer back by ~40 ms, which is the server's time, not the judge's
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # /health, /stats (requests answered so far) and /v1/models
                if self.path == "/stats":
                    body: dict[str, Any] = {"requests": len(server.requests)}
                else:
                    body = {"status": "ok"} if self.path == "/health" else {
                        "object": "list", "data": [{"id": "fake-model", "object": "model"}]}
                self._send(200, body)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    n = next(server._counter)
                    server.requests.append(body)
                    server.authorizations.append(self.headers.get("authorization"))
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server.arrivals.append(time.monotonic())
                if server.latency:
                    time.sleep(server.latency)
                refused = server.profile.refusal(body) if server.profile else None
                if refused:
                    self._send(400, {"error": {"message": refused, "type": "invalid_request_error"}})
                    return
                custom = server.responder(body, n) if server.responder else None
                if isinstance(custom, Fault):
                    if custom.delay:
                        time.sleep(custom.delay)
                    if custom.reset:
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    payload = custom.body if custom.body is not None else {"error": {"message": "injected fault"}}
                    self._send(custom.status, payload, custom.headers)
                    return
                answer = custom or server.completion(body, n)
                if body.get("stream") and isinstance(answer, dict) and answer.get("choices"):
                    self._send_events(answer)
                else:
                    self._send(200, answer)

            def _send_events(self, answer: dict[str, Any]) -> None:
                """The answer as an OpenAI server streams it: server-sent chunks of a few characters (the log
                probabilities with the first), tool calls in two pieces, then the usage, then ``[DONE]``."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                for chunk in stream_chunks(answer):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # the default listen backlog of 5 drops bursts of new connections

        self._httpd = Server((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def completion(self, body: dict[str, Any], n: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        fmt = body.get("response_format") or {}
        options = asked_options(body)
        choice: dict[str, Any] = {}
        asked_text = "\n".join(str(m.get("content") or "") for m in body.get("messages") or [])
        if options:  # a small decision: one of its options, by the question, with probabilities where asked
            top = self.sure
            if self.reading and "yes" in options:
                yes = reading_yes(asked_text, asked_text.strip().splitlines()[-1])
                message["content"], top = ("yes", yes) if yes >= 0.5 else ("no", 1 - yes)
            else:
                message["content"] = ("yes" if self.sure is not None and "yes" in options
                                      else decided(body.get("messages") or [{}], options))
            if body.get("logprobs"):
                choice["logprobs"] = {"content": [decision_logprobs(message["content"], options, top)]}
        elif fmt.get("type") == "json_schema":
            schema = fmt["json_schema"]["schema"]
            props = schema.get("properties", {})
            if props and all("enum" in v for v in props.values()):  # several small decisions in one answer
                asked = str((body.get("messages") or [{}])[-1].get("content"))
                answer = {k: "yes" if self.sure is not None and "yes" in v["enum"] else
                          decided([{"content": f"{asked}\n{k}"}], v["enum"]) for k, v in props.items()}
                tops: dict[str, float] = {}
                if self.reading:  # each key's question is its line of the request
                    for k in props:
                        line = next((x for x in asked_text.splitlines() if x.startswith(f'"{k}":')), "")
                        yes = reading_yes(asked_text, line)
                        answer[k], tops[k] = ("yes", yes) if yes >= 0.5 else ("no", 1 - yes)
                message["content"] = json.dumps(answer)
                if body.get("logprobs"):
                    choice["logprobs"] = {"content": json_logprobs(message["content"], props, self.sure, tops)}
            else:
                message["content"] = json.dumps(instance_of(schema, n))
        elif body.get("tools"):
            fn = body["tools"][0]["function"]
            message["tool_calls"] = [{"id": f"call_{n}", "type": "function", "function": {
                "name": fn["name"], "arguments": json.dumps(instance_of(fn.get("parameters", {}), n))}}]
        else:
            message["content"] = f"Comment number {n}: the speaker's case was assessed on its merits."
        if self.profile is not None and not self.profile.logprobs:
            choice = {}  # asked or not, this server gives none
        choices = [{"index": 0, "message": message, "finish_reason": "stop", **choice}]
        many = body.get("n") if isinstance(body.get("n"), int) else 1
        if self.profile is not None and self.profile.n == "ignored":
            many = 1
        if many > 1 and message.get("content") is not None:  # n answers sampled from the decisions' probabilities
            choices = [{"index": k, "message": {"role": "assistant", "content": sampled(message["content"], body, k)},
                        "finish_reason": "stop"} for k in range(many)]
        from debatrix.core.prompting import count_tokens  # o200k_base, offline: the counts an OpenAI model would report

        count = count_tokens if self.exact_usage else (lambda text: len(text) // 4)
        prompt = sum(count(str(m.get("content") or "")) + 4 for m in body.get("messages", []))
        completion = count(str(message.get("content") or json.dumps(message.get("tool_calls")))) + 1
        return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "fake-model"),
                "choices": choices,
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion}}

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def serve_fake(argv: list[str] | None = None) -> None:
    """``python -m debatrix.testing --port 8099``: serve the fake OpenAI-compatible model until Ctrl-C (for trying
    the CLI without a model, and for measuring the framework's own overhead)."""
    import argparse

    ap = argparse.ArgumentParser(description=serve_fake.__doc__)
    ap.add_argument("--port", type=int, default=8099)
    ap.add_argument("--latency", type=float, default=0.0, help="seconds before every answer")
    ap.add_argument("--rough-usage", action="store_true", help="report characters / 4 as tokens (no tokenizer work)")
    ap.add_argument("--profile", choices=sorted(SERVER_PROFILES), help="answer as that server does (log probabilities "
                    "or none, what it does with n, what it refuses)")
    ap.add_argument("--judge", choices=("hash", "reading", "sure"), default="hash", help="how it answers small "
                    "decisions: hash, by a hash of the question (blind to the text); reading, from what the text "
                    "shows (a test model that sees); sure, yes at P 0.97 to everything")
    args = ap.parse_args(argv)
    with FakeOpenAIServer(latency=args.latency, port=args.port, exact_usage=not args.rough_usage,
                          profile=args.profile, sure=0.97 if args.judge == "sure" else None,
                          reading=args.judge == "reading") as server:
        print(f"fake OpenAI-compatible server at {server.base_url} (Ctrl-C stops it)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    serve_fake()
