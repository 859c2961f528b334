"""The runtime context every graph node receives: chat model gateway, memories, dimensions and settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from .dimension import DimensionRegistry
from .llm import LLMGateway
from .settings import JudgeSettings


@dataclass
class JudgeContext:
    settings: JudgeSettings
    gateway: LLMGateway
    memory: Any  # debatrix.memory.MemoryStore (imported lazily: chromadb is heavy)
    registry: DimensionRegistry = field(default_factory=DimensionRegistry)
    local_server: Any = None  # a debatrix.local.LocalServer this context started and must stop
    _graphs: dict[tuple[str, bool], Any] = field(default_factory=dict, repr=False)

    def graph(self, mode: str, merged: bool) -> Any:
        """The compiled judge graph of ``mode`` bound to this context, compiled once (a compiled graph holds no
        run state, so concurrent runs share it; compiling one costs ~15 ms). ``mode="speech"``: the single-speech
        graph."""
        key = (mode, merged)
        graph = self._graphs.get(key)
        if graph is None:
            from debatrix.graphs import build_graph, build_speech_graph

            graph = build_speech_graph(self, merged=merged) if mode == "speech" else build_graph(mode, self,
                                                                                                   merged=merged)
            self._graphs[key] = graph
        return graph

    @classmethod
    def create(cls, settings: JudgeSettings | None = None, chat_model: BaseChatModel | None = None) -> JudgeContext:
        """Build the context. With the local backend (no endpoint configured) this starts the embedded model
        server; call :meth:`close` (or use the context as a context manager) to stop it."""
        from debatrix.memory import MemoryStore

        settings = settings or JudgeSettings()
        server = None
        if chat_model is None and settings.llm.uses_local:
            from .local import LocalServer, local_llm_settings

            server = LocalServer(settings.llm.local_model, parallel=settings.llm.local_parallel).start()
            settings = settings.model_copy(update={"llm": local_llm_settings(settings.llm, server)})
        try:
            return cls(settings=settings, gateway=LLMGateway(settings.llm, chat_model),
                       memory=MemoryStore(settings.memory), registry=DimensionRegistry(settings.dimension_dirs),
                       local_server=server)
        except BaseException:
            if server is not None:
                server.stop()
            raise

    def close(self) -> None:
        self.gateway.close()
        if self.local_server is not None:
            self.local_server.stop()
            self.local_server = None

    def __enter__(self) -> JudgeContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
