"""The runtime context every graph node receives: chat model gateway, memories, dimensions and settings."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from typing_extensions import TypedDict

from debatrix.core.dimension import DimensionRegistry
from debatrix.core.errors import ConfigurationError, ContextWindowExceeded, require_extra
from debatrix.llm.gateway import LLMGateway
from debatrix.core.models import Debate
from debatrix.core.modes import Mode, RunPlan, get_mode
from debatrix.core.profile import ProfileUse, for_settings, resolve_cached
from debatrix.core.settings import JudgeSettings


def local_window(settings: JudgeSettings) -> tuple[int, str]:
    """The largest context a local run may use: the model's trained context, or less if ``context_window`` was set
    explicitly; with a description for messages."""
    from debatrix.llm.local import model_path, model_shape

    trained = model_shape(model_path(settings.llm.local_model)).trained_context
    if "context_window" in settings.llm.model_fields_set and settings.llm.context_window < trained:
        return settings.llm.context_window, f"--context-window {settings.llm.context_window}"
    return trained, f"the largest context {settings.llm.local_model} allows ({trained} tokens, its trained context)"


def run_settings(settings: JudgeSettings, chat_model: BaseChatModel | None = None) -> JudgeSettings:
    """The settings a run sees: where the embedded local model will serve it (no chat model given, no endpoint
    configured), with the local backend's shorter answers (:meth:`JudgeSettings.for_local_backend`). A run's plan is
    made with these (:func:`debatrix.graphs.build.plan_run`)."""
    return settings.for_local_backend() if chat_model is None and settings.llm.uses_local else settings


def local_context(settings: JudgeSettings, plans: Sequence[RunPlan]) -> int:
    """The server context for the runs ``plans`` describe: what their largest request needs, up to
    :func:`local_window`. Raises :class:`ContextWindowExceeded` (before any server starts) when one cannot fit."""
    from debatrix.llm.local import server_context

    window, what = local_window(settings)
    # a plan without a largest request is over the call budget: its run is refused, nothing sent
    sized = [(p.debate.id, p.largest) for p in plans if p.largest is not None]
    if not sized:
        return window
    for debate_id, largest in sized:
        if largest.tokens > window:
            raise ContextWindowExceeded(largest.tokens, window, f"{debate_id}: {largest.what}", limit=what)
    return server_context(max(r.tokens for _, r in sized), window)


class RunOptions(TypedDict, total=False):
    """What one run may choose (``config["configurable"]``, or a ``context`` dict), embedded or deployed: the model
    and the memory belong to the graph's context."""

    mode: str
    dimensions: list[str] | str  # names or one set name; a string may list them with commas
    orders: int
    analysis_words: int
    comment_words: int
    max_llm_calls: int


PER_RUN = tuple(RunOptions.__annotations__)


def chosen_options(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The :data:`PER_RUN` options set in ``given`` (other keys, such as a thread id, ignored), a dimensions string
    split at its commas."""
    chosen = {k: given[k] for k in PER_RUN if given and given.get(k) is not None}
    if isinstance(chosen.get("dimensions"), str):
        chosen["dimensions"] = [d.strip() for d in chosen["dimensions"].split(",") if d.strip()]
    return chosen


_variants_lock = threading.Lock()


@dataclass
class JudgeContext:
    settings: JudgeSettings
    gateway: LLMGateway
    memory: Any  # debatrix.memory.MemoryStore with retrieval, else None (chromadb is an extra, and heavy)
    registry: DimensionRegistry = field(default_factory=DimensionRegistry)
    local_server: Any = None  # a debatrix.llm.local.LocalServer this context (or the one it varies) started
    # the plans of the runs this context was made for (debatrix.graphs.build.plan_run): each run's first step
    # takes its own instead of working it out again
    plans: tuple[RunPlan, ...] = ()
    # compiled judge graphs bound to this context, by mode: filled through :meth:`graph` by debatrix.graphs.compiled
    # (the context knows nothing of the graphs it serves)
    _graphs: dict[str, Any] = field(default_factory=dict, repr=False)
    _variants: dict[tuple[tuple[str, Any], ...], JudgeContext] = field(default_factory=dict, repr=False)
    # False in a variant (with_options): the context it varies owns the model connection and server, and closes them
    owner: bool = field(default=True, repr=False)
    #: the mode its runs judge in, resolved once from its settings (an unknown mode is refused here, before any call);
    #: a graph of another mode runs its nodes with :meth:`for_mode`
    mode: Mode = field(init=False)

    def graph(self, mode: str, build: Callable[[], Any]) -> Any:
        """The graph of ``mode`` compiled for this context: built by ``build`` the first time, then kept."""
        graph = self._graphs.get(mode)
        if graph is None:
            graph = self._graphs[mode] = build()
        return graph

    def __post_init__(self) -> None:
        self.mode = get_mode(self.settings.mode)

    @property
    def profile(self) -> ProfileUse:
        """The judge profile of the model this context judges with (:mod:`debatrix.core.profile`): a LangChain
        model given by the caller is known by its own name, not by the settings' local model."""
        if self.gateway.chat_model_given:
            return resolve_cached(self.settings.profile, self.gateway.model_name, "langchain")
        return for_settings(self.settings)

    @classmethod
    def create(cls, settings: JudgeSettings | None = None, chat_model: BaseChatModel | None = None,
               plans: Sequence[RunPlan] = (), on_start: Callable[[JudgeSettings], None] | None = None
               ) -> JudgeContext:
        """Build the context for the runs ``plans`` describe (:func:`debatrix.graphs.build.plan_run` with these
        settings; none: any run). With the local backend (no endpoint configured) this starts the embedded model
        server, with the context their largest request needs (no plan: all the model allows);
        a debate that cannot fit raises :class:`ContextWindowExceeded` before the server starts, and ``on_start``
        (given the local settings) is called only once the debates fit, just before it starts. Call
        :meth:`close` (or use the context as a context manager) to stop it."""
        settings = settings or JudgeSettings()
        memory = None  # the context memory serves retrieval only: without it no run opens chromadb
        if settings.memory.retrieval:
            require_extra("chromadb", "--retrieval (the context memory)", "retrieval")
            from debatrix.memory import MemoryStore

            memory = MemoryStore(settings.memory)
            if settings.memory.backend != "ephemeral":
                memory.check()  # a folder that cannot be used or a server that is down: found before any call
        server = None
        if chat_model is None and settings.llm.uses_local:
            require_extra("xllamacpp", "the embedded local model (no --base-url or $OPENAI_BASE_URL given)", "local")
            from debatrix.llm.local import LocalServer, local_llm_settings

            settings = run_settings(settings)
            context = local_context(settings, plans)
            if on_start is not None:
                on_start(settings)
            server = LocalServer(settings.llm.local_model, parallel=settings.llm.local_parallel,
                                 context=context).start()
            settings = settings.model_copy(update={"llm": local_llm_settings(settings.llm, server)})
        try:
            return cls(settings=settings, gateway=LLMGateway(settings.llm, chat_model),
                       memory=memory, registry=DimensionRegistry(settings.dimension_dirs),
                       local_server=server, plans=tuple(plans))
        except BaseException:
            if server is not None:
                server.stop()
            raise

    def with_options(self, given: Mapping[str, Any] | None) -> JudgeContext:
        """The context of a run choosing ``given``'s :data:`PER_RUN` options: this context's model connection,
        memory and dimensions, with those settings (validated as :class:`JudgeSettings` fields); itself when none
        is chosen. One per choice, kept (its compiled graphs with it)."""
        chosen = chosen_options(given)
        if not chosen:
            return self
        key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in chosen.items()))
        with _variants_lock:
            ctx = self._variants.get(key)
            if ctx is None:
                data = {**self.settings.model_dump(exclude={"llm", "memory"}), **chosen}
                try:
                    settings = JudgeSettings.model_validate({**data, "llm": self.settings.llm,
                                                             "memory": self.settings.memory})
                except ValueError as e:
                    raise ConfigurationError(f"invalid run settings {chosen}: {e}") from None
                ctx = self._variants[key] = JudgeContext(settings=settings, gateway=self.gateway,
                                                         memory=self.memory, registry=self.registry,
                                                         local_server=self.local_server, plans=self.plans,
                                                         owner=False)
        return ctx

    def for_mode(self, name: str) -> JudgeContext:
        """This context judging in mode ``name``: itself if that is its mode, else its kept variant (the same model
        connection, memory and plans). The graph of a mode runs its nodes with it, so a node reads its mode here,
        whichever context the run was started with."""
        return self if name == self.mode.name else self.with_options({"mode": name})

    def plan_for(self, debate: Debate, mode: str) -> RunPlan | None:
        """The plan this context was made with for this very debate object in ``mode``, if any."""
        return next((p for p in self.plans if p.debate is debate and p.mode == mode), None)

    def close(self) -> None:
        if not self.owner:
            return
        self.gateway.close()
        if self.local_server is not None:
            self.local_server.stop()
            self.local_server = None

    def __enter__(self) -> JudgeContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
