"""The gateway's prose calls, which the flow never makes: free text (an analysis, a comment) capped to the length
asked and cut back to its last full sentence, and a schema-valid structured answer, read through the best method the
model supports (json_schema response format, tool calling, or a validated parse) with at most one repair request.
:class:`ProseCalls` is a part of :class:`debatrix.llm.gateway.LLMGateway`, which sends, retries and records."""

from __future__ import annotations

import json
import re
import time
from typing import Any, Literal, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.utils.json import parse_json_markdown
from pydantic import BaseModel, ValidationError

from debatrix.core.errors import IncompleteJudgment, StructuredOutputError
from debatrix.core.models import CallRecord, where_called
from debatrix.core.prompting import json_instruction, repair_request, response_format, schema_text
from debatrix.core.settings import LLMSettings
from debatrix.core.prompting import structured_answer_tokens, token_cap
from debatrix.llm.http_chat import answer_logprobs, answer_text, raw_structured
from debatrix.llm.sdk import SDK_LENGTH

T = TypeVar("T", bound=BaseModel)
#: how a structured answer is read: the server's json_schema response format, a tool call, or a parse of the text
Method = Literal["json_schema", "tool", "parse"]


class ProseCalls:
    """Free text and structured answers, on the gateway's machinery: its settings, its bound ``model`` and
    ``method``, :meth:`check_messages_fit`, :meth:`_send_probed`, :meth:`_meta`, :meth:`_record` and
    :meth:`_beyond_openai` (all :class:`~debatrix.llm.gateway.LLMGateway`'s)."""

    settings: LLMSettings
    method: Method
    model: Any
    check_messages_fit: Any
    _send_probed: Any
    _meta: Any
    _record: Any
    _beyond_openai: Any

    # ------------------------------------------------------------------ public

    async def text_with_logprobs(self, messages: list[BaseMessage], *, node: str, max_tokens: int,
                                 dimension: str | None = None, meta: dict[str, Any] | None = None,
                                 json_schema: type[BaseModel] | None = None
                                 ) -> tuple[str, list[dict[str, Any]], CallRecord]:
        """The answer text plus the per-token log probabilities (``[{token, logprob, top_logprobs: [...]}, ...]``;
        empty when the server returns none), for probability-weighted scores. With ``json_schema`` the answer is
        constrained to that schema (raw JSON text; the caller parses it)."""
        text, logprobs, record, _ = await self._text_with_logprobs(messages, node=node, max_tokens=max_tokens,
                                                                   dimension=dimension, meta=meta,
                                                                   json_schema=json_schema)
        return text, logprobs, record

    async def text(self, messages: list[BaseMessage], *, node: str, dimension: str | None = None,
                   meta: dict[str, Any] | None = None, words: int | None = None) -> tuple[str, CallRecord]:
        """Free text. ``words``: the length the prompt asked for; the answer is capped at
        :func:`token_cap` tokens (small models ignore word limits) and a capped answer is cut back to its last
        full sentence and recorded as ``truncated``."""
        text, _, record = await self._text(messages, node, dimension, meta, words, probe=False)
        return text, record

    async def text_probed(self, messages: list[BaseMessage], *, node: str, dimension: str | None = None,
                          meta: dict[str, Any] | None = None, words: int | None = None
                          ) -> tuple[str, list[dict[str, Any]], CallRecord]:
        """:meth:`text`, plus the answer's per-token log probabilities where the server gives them (``[]``
        elsewhere): what :mod:`debatrix.core.probabilities` reads a winner's probability from."""
        return await self._text(messages, node, dimension, meta, words, probe=True)

    async def _text(self, messages: list[BaseMessage], node: str, dimension: str | None,
                    meta: dict[str, Any] | None, words: int | None, probe: bool
                    ) -> tuple[str, list[dict[str, Any]], CallRecord]:
        self.check_messages_fit(messages, where_called(node, dimension), token_cap(words) if words else None)
        model = self.model
        if words is not None and self.settings.cap_text_answers:
            model = model.bind(max_tokens=min(token_cap(words), self.settings.max_output_tokens))
        started = time.perf_counter()
        answer, attempts = await self._send_probed(model, messages, self._meta(node, dimension, "text", meta), probe)
        text = answer_text(answer).strip()
        truncated = (answer.response_metadata or {}).get("finish_reason") == "length"
        # a server that ignores the token cap (or a proxy that pads) must not hand the next prompt megabytes: what
        # is kept is held to the cap (a token is rarely more than 8 characters)
        most = 8 * min(token_cap(words) if words and self.settings.cap_text_answers else
                       self.settings.max_output_tokens, self.settings.max_output_tokens)
        if len(text) > most:
            text, truncated = text[:most], True
        if truncated:
            text = last_full_sentence(text)
        record = self._record(node, dimension, messages, answer, started, attempts, False, meta)
        record = record.model_copy(update={"truncated": truncated}) if truncated else record
        if not text:  # answered, so paid: the failure carries the call
            err = StructuredOutputError(node, "", "the model returned an empty answer")
            err.calls = [record]
            raise err
        return text, answer_logprobs(answer), record

    async def structured(self, messages: list[BaseMessage], schema: type[T], *, node: str,
                         dimension: str | None = None, meta: dict[str, Any] | None = None,
                         words: int | None = None) -> tuple[T, list[CallRecord]]:
        """A schema-valid answer, with at most one repair request. Returns the records of every request made.
        ``words``: the length asked of a ``comment`` field; on servers that enforce the schema as a grammar
        (``schema_length_limits``) it becomes the field's ``maxLength``, so a small model cannot ramble forever."""
        parsed, _, records = await self._structured(messages, schema, node, dimension, meta, words, probe=False)
        return parsed, records

    async def structured_probed(self, messages: list[BaseMessage], schema: type[T], *, node: str,
                                dimension: str | None = None, meta: dict[str, Any] | None = None,
                                words: int | None = None, sampling: dict[str, Any] | None = None
                                ) -> tuple[T, list[dict[str, Any]], list[CallRecord]]:
        """:meth:`structured`, plus the accepted answer's per-token log probabilities (``[]`` where the server
        gives none, or the answer came through a tool call, whose arguments carry none). ``sampling``: extra
        request fields the server understands (llama.cpp's DRY sampler)."""
        return await self._structured(messages, schema, node, dimension, meta, words, probe=True,
                                      sampling=sampling)

    def as_sent(self, messages: list[BaseMessage], schema: type[BaseModel]) -> list[BaseMessage]:
        """The messages of a structured request as the model receives them: where the answer is read by parsing,
        the schema is appended to the last message (a conversation continued later must start with exactly this,
        for a server's prompt cache to reuse it)."""
        if self.method != "parse":
            return messages
        return _append_to_last(messages, json_instruction(schema_text(schema)))

    async def _structured(self, messages: list[BaseMessage], schema: type[T], node: str, dimension: str | None,
                          meta: dict[str, Any] | None, words: int | None, probe: bool,
                          sampling: dict[str, Any] | None = None
                          ) -> tuple[T, list[dict[str, Any]], list[CallRecord]]:
        json_schema = schema_text(schema)
        messages = self.as_sent(messages, schema)
        limit = (words * 12 if words and self.settings.schema_length_limits and "comment" in schema.model_fields
                 else None)
        model = self._bound(schema, limit)
        if sampling:
            model = self._beyond_openai(model, sampling)
        records: list[CallRecord] = []
        problem = ""
        raw = ""
        for repair in (False, True):
            self.check_messages_fit(messages, where_called(node, dimension), structured_answer_tokens(words))
            started = time.perf_counter()
            try:
                answer, attempts = await self._send_probed(model, messages,
                                                           self._meta(node, dimension, schema.__name__, meta),
                                                           probe and self.method != "tool")
            except IncompleteJudgment as e:  # the repair request failed: the first answer still counts
                e.calls = [*records, *getattr(e, "calls", [])]
                raise
            except SDK_LENGTH as e:  # the SDK's parse helper refuses a cut-off answer
                usage = e.completion.usage
                records.append(CallRecord(node=node, dimension=dimension, repaired=repair, truncated=True,
                                          prompt_tokens=usage.prompt_tokens if usage else 0,
                                          completion_tokens=usage.completion_tokens if usage else 0,
                                          seconds=round(time.perf_counter() - started, 4)))
                raw = (e.completion.choices[0].message.content or "")[-200:] if e.completion.choices else ""
                problem = _CUT_OFF
            else:
                records.append(self._record(node, dimension, messages, answer, started, attempts, repair, meta))
                raw = raw_structured(answer)
                try:
                    parsed = self._parse(answer, schema)
                except (ValueError, ValidationError) as e:
                    problem = _problem(e)
                    if (answer.response_metadata or {}).get("finish_reason") == "length":
                        problem = _CUT_OFF
                        records[-1] = records[-1].model_copy(update={"truncated": True})
                else:
                    comment = getattr(parsed, "comment", None)
                    if limit and isinstance(comment, str) and len(comment) >= limit - 1:
                        # the grammar stopped the comment at maxLength, maybe mid-word: keep whole sentences
                        parsed = parsed.model_copy(update={"comment": last_full_sentence(comment)})
                        records[-1] = records[-1].model_copy(update={"truncated": True})
                    if "_raw" in getattr(type(parsed), "__private_attributes__", {}):
                        parsed._raw = raw  # type: ignore[attr-defined]  # what a continued conversation repeats
                    return parsed, answer_logprobs(answer), records
            messages = [*messages, AIMessage(content=raw),
                        HumanMessage(content=repair_request(problem, json_schema))]
        err = getattr(schema, "parse_error", StructuredOutputError)  # the schema says what its failure means
        failure = err(where_called(node, dimension), raw, problem)
        failure.calls = records  # the answers it was made of, the repair included, are counted
        raise failure

    def _bound(self, schema: type[BaseModel], comment_max_chars: int | None = None) -> Any:
        if self.method == "json_schema":
            return self.model.bind(response_format=json.loads(
                response_format(schema, comment_max_chars, self.settings.schema_length_limits)))
        if self.method == "tool":
            return self.model.bind_tools([schema], tool_choice=schema.__name__)
        return self.model

    def _parse(self, answer: AIMessage, schema: type[T]) -> T:
        if self.method == "tool":
            calls = answer.tool_calls or []
            if not calls:
                bad = answer.invalid_tool_calls
                raise ValueError(f"the answer tool's arguments are not valid JSON ({bad[0].get('error')})" if bad
                                 else "the model did not call the answer tool")
            return schema.model_validate(calls[0]["args"])
        text = answer_text(answer)
        if not text.strip():
            raise ValueError("the model returned an empty answer")
        try:
            data = _extract_json(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"not valid JSON ({e.msg})") from None
        return schema.model_validate(data)


_CUT_OFF = "the answer was cut off at the token limit before the JSON object was complete"


def _extract_json(text: str) -> Any:
    """The JSON of an answer, fenced or bare (langchain-core's reader, strict: a cut-off object is not
    completed into one that validates, it goes to the repair call); an object with prose around it ("Sure!
    {...}", which that reader refuses and small models write) is cut out of it."""
    try:
        return parse_json_markdown(text, parser=_loads)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start != -1 and end > start:
            return _loads(text[start : end + 1])
        raise


def _loads(text: str) -> Any:
    """JSON that may hold raw line breaks inside its strings (small models write them there, and a grammar's
    "any character but a quote" lets them through): the text is the same, only unescaped."""
    return json.loads(text, strict=False)


_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s|$)")


def last_full_sentence(text: str) -> str:
    """``text``, which was cut at its length cap, cut back after its last sentence end; where it has none, the
    fragment says it was cut (" […]") rather than pass for a whole thought."""
    ends = list(_SENTENCE_END.finditer(text))
    return text[: ends[-1].end()].strip() if ends else f"{text.strip()} […]"


def _problem(e: Exception) -> str:
    if isinstance(e, ValidationError):
        return "; ".join(f"{'.'.join(map(str, x['loc'])) or 'answer'}: {x['msg']}" for x in e.errors())
    return str(e)


def _append_to_last(messages: list[BaseMessage], text: str) -> list[BaseMessage]:
    last = messages[-1]
    return [*messages[:-1], HumanMessage(content=f"{last.content}\n{text}")]
