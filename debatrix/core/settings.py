"""Run settings: frozen, serialisable, secrets kept out of dumps, and what of an endpoint's URL is secret (shown
redacted, sent apart, never logged)."""

from __future__ import annotations

import base64
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from urllib.parse import urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"  # the embedded model a run uses when no endpoint is configured


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Environment(BaseSettings):
    """The environment variables the judge reads (also from a ``.env`` file in the working directory, the
    variable winning): the OpenAI SDK's own (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``OPENAI_ORG_ID``,
    ``OPENAI_PROJECT_ID``), ``DEBATRIX_MODEL`` (``OPENAI_MODEL``, not an SDK variable, is read where it is not
    set) and ``DEBATRIX_LOCAL_MODEL``. Empty variables count as unset."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore",
                                      env_ignore_empty=True, frozen=True)

    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    openai_org_id: str | None = None
    openai_project_id: str | None = None
    debatrix_model: str | None = None
    openai_model: str | None = None
    debatrix_local_model: str | None = None


def _cache_location(value: Any) -> Any:
    """A postgresql:// URL stays a URL (a path would fold its "//"); anything else is a file's path."""
    if isinstance(value, str) and re.match(r"^postgres(ql)?(\+\w+)?://", value, re.IGNORECASE):
        return value
    return Path(value) if isinstance(value, str) else value


class LLMSettings(_Frozen):
    """An OpenAI-compatible chat endpoint (or, via the API, any LangChain chat model)."""

    backend: Literal["auto", "openai", "local"] = Field(
        default="auto", description="auto: an OpenAI-compatible endpoint if one is configured, else the local model")
    local_model: str = Field(default=DEFAULT_LOCAL_MODEL, description="local model: catalogue name or .gguf path "
                             f"(default {DEFAULT_LOCAL_MODEL})")
    local_parallel: int = Field(default=1, ge=1, le=16, description="requests the local server runs at once; one "
                                "slot reuses its prompt cache best (a second slot re-reads shared prefixes)")
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible base URL (default $OPENAI_BASE_URL); without one (and without "
        "$OPENAI_API_KEY) the local model runs")
    base_urls: tuple[str, ...] = Field(
        default=(), description="more OpenAI-compatible servers of the same model (a llama.cpp or vLLM fleet): "
        "requests are spread over base_url and these, each to the least busy or the one whose prompt cache holds "
        "most of it, and away from one that cannot be reached (the http transport)")
    model: str = Field(default="gpt-4o-mini", description="model name (default $DEBATRIX_MODEL, else the model "
                       "the base URL's server serves, else gpt-4o-mini)")
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    # the OpenAI account's organization and project ($OPENAI_ORG_ID, $OPENAI_PROJECT_ID, as the OpenAI SDK reads
    # them), sent as headers on both transports; account identifiers, so never written into results or logs
    organization: str | None = Field(default=None, exclude=True, repr=False)
    project: str | None = Field(default=None, exclude=True, repr=False)
    @field_validator("base_url", "base_urls")
    @classmethod
    def _http_urls(cls, v: str | tuple[str, ...] | None) -> str | tuple[str, ...] | None:
        return tuple(cls.http_url(u) for u in v) if isinstance(v, tuple) else cls.http_url(v)

    @staticmethod
    def http_url(v: str | None) -> str | None:
        """An endpoint is an http(s) address: 'not a url' or file:// is a wrong option, not an unreachable server."""
        if v is None:
            return v
        try:
            parts = urlsplit(v.strip())
            parts.port  # noqa: B018 (raises on a port that is not a number)
        except ValueError:
            raise ValueError(f"base URL {redact_url(v)!r} is not a valid URL") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("the base URL must be an http:// or https:// address, e.g. http://127.0.0.1:8000/v1")
        return v.strip()

    temperature: float = Field(default=0.0, ge=0, le=2, allow_inf_nan=False, description="sampling temperature (default 0; the OpenAI API's "
                               "range, 0-2)")
    timeout: float = Field(default=120.0, gt=0, allow_inf_nan=False, description="seconds for one request")
    max_retries: int = Field(default=4, ge=0, description="retries of transient errors (tenacity)")
    retry_max_wait: float = Field(default=30.0, gt=0)
    context_window: int = Field(default=128_000, gt=256, description="the model's context window in tokens "
                                "(default: what the server says it serves, else 128,000)")
    max_output_tokens: int = Field(default=1024, gt=16, description="answer budget per call in tokens")
    structured_output: Literal["auto", "json_schema", "tool", "parse"] = Field(
        default="auto", description="how structured answers are asked for (auto: by what the server supports)")
    transport: Literal["http", "langchain"] = Field(
        default="http", description="how to reach an OpenAI-compatible endpoint: debatrix's lean aiohttp client "
        "(http, the least CPU per request) or LangChain's ChatOpenAI (langchain); both are LangChain chat models, so "
        "callbacks and tracing see every call")
    log_calls: bool = Field(
        default=True, description="keep every call's prompt and answer in the result (its call_log, which the "
        "report shows per speech and dimension), prompts up to call_log_chars per result; off, a result keeps no "
        "call's text (its usage figures stay)")
    call_log_chars: int = Field(
        default=1_000_000, ge=0, description="the characters of prompts a result's call log keeps, calls in the "
        "order answered: a call past them keeps its answer and figures, and says its prompt was left out (a long "
        "debate's result stays readable in size)")
    prompt_cache: bool = Field(
        default=False, description="the server reuses cached prompt prefixes (llama.cpp; set for the local backend): "
        "scores are asked by continuing the analysis or judgment conversation, of which only the answer and the "
        "question are new to the model, instead of in a short separate prompt (fewer tokens sent elsewhere)")
    dry_sampling: bool = Field(
        default=False, description="the server has llama.cpp's DRY sampler: a speech analysis is kept from repeating "
        "the earlier analyses it reads (set for the local backend; small models copy their last answer otherwise)")
    decision_samples: int = Field(
        default=0, ge=0, le=64, description="where the server gives no log probabilities: ask each small decision "
        "this many times in one request (n, at temperature 1) and take the options' shares as its probabilities "
        "(0: each answer counts as certain); a server that gives log probabilities is never asked n")
    grammar: bool = Field(
        default=False, description="the server takes a GBNF grammar (llama.cpp; set for the local backend): a "
        "small decision's answer is held to its options")
    served_locally: bool = Field(
        default=False, description="base_url is an embedded model server started for this run (set by the run)")
    cache_path: Annotated[Path | str | None, BeforeValidator(_cache_location)] = Field(
        default=None, description="where LLM answers are cached (opt-in): a SQLite file, or a postgresql:// URL that "
        "processes on several machines share; a rerun pays for no answered call, and each call is sent once")
    cap_text_answers: bool = Field(
        default=True, description="cap free-text answers at about 1.6 tokens per word asked (cut at a sentence end)")
    schema_length_limits: bool = Field(
        default=False, description="put the asked length into JSON schemas as maxLength (grammar-enforcing servers)")
    requests_per_second: float | None = Field(
        default=None, gt=0, description="cap on requests started per second (shared by every debate of the run)")
    max_concurrency: int = Field(default=24, ge=1, description="LLM requests in flight at once (the default is "
                                 "the widest round of any mode with up to 8 dimensions judged in 2 orders, so it "
                                 "never lengthens a run's critical path)")
    tokenizer: Literal["o200k_base", "cl100k_base"] = "o200k_base"

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMSettings:
        """Read the standard ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``OPENAI_MODEL`` variables."""
        env = cls.env_fields()
        env.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**env)

    @staticmethod
    def env_fields(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The fields the environment sets (:class:`Environment`: the variables, and a ``.env`` file in the
        working directory); ``environ``: read that mapping instead (no ``.env``)."""
        if environ is None:
            env = Environment()
        else:  # every variable given, so none is read from the process's own environment
            env = Environment(_env_file=None, **{n: environ.get(n.upper()) for n in Environment.model_fields})
        fields = {"base_url": env.openai_base_url, "api_key": env.openai_api_key,
                  "model": env.debatrix_model or env.openai_model, "local_model": env.debatrix_local_model,
                  "organization": env.openai_org_id, "project": env.openai_project_id}
        return {k: v for k, v in fields.items() if v}

    @model_validator(mode="after")
    def _fleet(self) -> LLMSettings:
        if self.base_urls and not self.base_url:
            raise ValueError("base_urls are servers beside base_url: give base_url too")
        if self.base_urls and self.transport != "http":
            raise ValueError("several servers (base_urls) are reached by the http transport, not 'langchain'")
        return self

    @property
    def endpoints(self) -> tuple[str, ...]:
        """Every server of the model: base_url, then base_urls (none for the embedded model)."""
        return (self.base_url, *self.base_urls) if self.base_url else ()

    @property
    def uses_local(self) -> bool:
        if self.backend == "auto":
            return self.base_url is None and self.api_key is None
        return self.backend == "local"


class MemorySettings(_Frozen):
    backend: Literal["ephemeral", "persistent", "http"] = Field(
        default="ephemeral", description="where the memories live (http: a chromadb server)")
    path: Path | None = Field(default=None, description="directory for the persistent backend")
    host: str = Field(default="127.0.0.1", description="chromadb server host for the http backend")
    port: int = Field(default=8000, description="chromadb server port for the http backend")
    embedding: Literal["minilm", "hash"] = Field(
        default="minilm", description="embedder of the context memory, for retrieval (minilm: offline ONNX)")
    retrieval: bool = Field(default=False, description="give the analyzer the most relevant earlier speech chunks "
                            "(the context memory, MiniLM embeddings; off in the paper); the context memory exists "
                            "only then (the analysis memory is the graph state)")
    top_k: int = Field(default=3, ge=1)
    chunk_tokens: int = Field(default=256, ge=32)
    keep: bool = Field(default=False, description="keep the run's context memory (retrieval) after judging")

    @model_validator(mode="after")
    def _complete(self) -> MemorySettings:
        if self.backend == "persistent" and self.path is None:
            raise ValueError("memory backend 'persistent' needs a folder (--memory-path / memory.path)")
        if self.backend == "persistent" and self.path is not None and self.path.exists() and not self.path.is_dir():
            raise ValueError(f"the memory path {self.path} is a file: give a folder (it is created if missing)")
        return self


LOCAL_LENGTHS = {"analysis_words": 40, "comment_words": 20}


class EscalationSettings(_Frozen):
    """A second, stronger judge for the verdicts the first cannot vouch for (Jung et al., ICLR 2025, "trust or
    escalate"): the debate goes up when the first judge's orders split on the winner, or its calibrated confidence
    in the winner is below ``below`` (where a calibration map exists for its model and mode; without one, order
    agreement alone decides). The second judge judges the whole debate again, in the same mode."""

    llm: LLMSettings = Field(description="the second judge: a local catalogue name or .gguf path, or an endpoint's "
                             "model (its key: $OPENAI_API_KEY)")
    below: float = Field(default=0.7, gt=0.5, le=1.0, description="calibrated winner probability under which a "
                         "verdict goes to the second judge (default 0.7)")


#: the mode a judgment runs in unless told: the flow (small decisions, verdicts computed from them), which sees the
#: known-answer suite's changes where the prose modes do not (docs/researchers.md, "The flow")
DEFAULT_MODE = "flow"


class JudgeSettings(_Frozen):
    mode: str = DEFAULT_MODE
    dimensions: tuple[str, ...] | None = Field(
        default=None, description="dimension names, or one set's name (debateart, bp, general); default: the set "
        "for the debate's format"
    )
    dimension_dirs: tuple[Path, ...] = Field(default=(), description="extra folders of dimension YAML files")
    analysis_words: int = Field(default=250, ge=20, description="length asked of each speech analysis (default "
                                "40 on the local backend)")
    comment_words: int = Field(default=100, ge=10, description="length asked of each comment, per debater (default "
                               "20 on the local backend)")
    orders: int = Field(default=2, ge=1, le=4, description="orders the debaters are listed in for the judgments "
                        "that compare them (1v1: both orders; British Parliamentary: rotations, every team in every "
                        "place at 4); winner probabilities are averaged over them so a preference for whoever is "
                        "listed first cancels out. 1: the order of the debate file only")
    order_layout: Literal["auto", "grouped", "shared"] = Field(
        default="auto", description="how each order reads the material of a judgment: grouped, debater by debater "
        "in its own order (cancels a lean toward whoever comes first; each order reads it all); shared, every order "
        "the same material in speaking order with only the task in its order after it (a prompt cache reads it "
        "once), the lean taken out by the place prior measured for the model and mode where there is one "
        "(debatrix.core.probabilities.PlacePrior); auto: shared where such a prior exists, else grouped")
    flow_questions: Literal["auto", "apart", "together"] = Field(
        default="auto", description="how the flow asks a passage's questions: apart, each a one-token answer read at "
        "its first token (as the decisions were measured; a prompt cache reads the passage once); together, one "
        "JSON answer per passage, each value's probabilities read at its token (the passage is sent once: fewer "
        "prompt tokens billed); auto: together for an OpenAI-compatible endpoint without a prompt cache, else apart")
    flow_ask: Literal["judged", "all"] = Field(
        default="judged", description="which decisions the flow asks: judged, only those a judged dimension rests on "
        "(a decision the model's profile marks blind decides nothing and is not paid for); all, every kind (argues, "
        "evidence, clear, answers), to measure them against gold (debatrix bench signals)")
    review: bool = Field(
        default=False, description="pause a flow judgment for a person's review: the judge graph interrupts after "
        "the flow with its sheet and the decisions to review first, and Command(resume=corrections) finishes the "
        "verdict from them (needs a LangGraph checkpointer: an agent's own, or build_judge_graph(checkpointer=...))")
    profile: str = Field(
        default="auto", description="the judge profile of the model (what it was measured to see, written by "
        "`debatrix profile`): a profile file's path; none, judge unprofiled (every dimension on the model's own "
        "probabilities); auto: the profile shipped for the model's name, if any")
    max_llm_calls: int = Field(default=2000, ge=1, description="a debate needing more calls is refused before "
                                                                "any is sent (500 speeches would take thousands)")
    # the shape of the graph (which steps it takes), not of a request: read where the graph is built and by its nodes
    merge_score_call: bool = Field(
        default=False, description="one structured call for comment + score instead of the paper's two calls, for "
        "the debate's judgments as for its speeches"
    )
    score_in_analysis: bool = Field(
        default=True, description="a debate's speech score is asked in its analysis's answer, not by a call of its "
        "own that re-reads the analysis (the speech scores are shown, no verdict is drawn from them); the "
        "single-speech judge always asks the score apart, since there the score is what is judged")
    llm: LLMSettings = Field(default_factory=LLMSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    escalate: EscalationSettings | None = None

    def speech_score_merged(self, mode: str) -> bool:
        """Whether a speech's score comes in its analysis's answer in ``mode``'s graph."""
        return self.merge_score_call or (self.score_in_analysis and mode != "speech")

    def for_local_backend(self) -> JudgeSettings:
        """These settings for a run on the embedded local model: the answer lengths not set explicitly become the
        short local ones (on a CPU a generated token costs several prompt tokens' time). Applied wherever
        the local server is started or sized: the API, the CLI and the benchmarks alike."""
        update = {k: v for k, v in LOCAL_LENGTHS.items() if k not in self.model_fields_set}
        return self.model_copy(update=update) if update else self

    def public_dict(self) -> dict[str, Any]:
        """Everything needed to rerun, never the API key nor a password in the endpoint's URL."""
        data = self.model_dump(mode="json")
        for llm in (data.get("llm") or {}, (data.get("escalate") or {}).get("llm") or {}):
            for key in ("base_url", "cache_path"):
                if llm.get(key):
                    llm[key] = redact_url(llm[key])
            if llm.get("base_urls"):
                llm["base_urls"] = [redact_url(u) for u in llm["base_urls"]]
        return data


def redact_url(url: str | None) -> str | None:
    """``url`` with any user:password part replaced by ``***`` (what is shown or stored of an endpoint)."""
    if not url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))


def split_credentials(url: str | None) -> tuple[str | None, str | None, str | None]:
    """(the URL without user:password, the user, the password); user None where the URL names none."""
    if not url or "@" not in url:
        return url, None, None
    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return url, None, None
    return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl(), parts.username, parts.password


def secrets_of(api_key: str | None, urls: Sequence[str]) -> tuple[str, ...]:
    """What a server's message or a logged call must never show: the API key, and for every server's URL the
    password as written and decoded, and the basic-auth token made of it (a server that echoes the Authorization
    header shows ``Basic <base64 of user:password>``). Longest first, so a shorter one inside it is not left half."""
    found = {api_key} if api_key else set()
    for url in urls:
        try:
            _, user, password = split_credentials(url)
        except ValueError:
            continue
        if password:
            found |= {password, urllib.parse.unquote(password)}
        if user is not None:
            found.add(base64.b64encode(f"{user}:{password or ''}".encode()).decode())
    return tuple(sorted((s for s in found if s), key=len, reverse=True))
