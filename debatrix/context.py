"""The runtime context every graph node receives: chat model gateway, memories, dimensions and settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel

from .dimension import DimensionRegistry
from .llm import LLMGateway
from .settings import JudgeSettings


@dataclass
class JudgeContext:
    settings: JudgeSettings
    gateway: LLMGateway
    memory: "MemoryStore"  # noqa: F821 - imported lazily (chromadb is heavy)
    registry: DimensionRegistry = field(default_factory=DimensionRegistry)

    @classmethod
    def create(cls, settings: JudgeSettings | None = None, chat_model: BaseChatModel | None = None) -> JudgeContext:
        from debatrix.memory import MemoryStore

        settings = settings or JudgeSettings()
        return cls(
            settings=settings,
            gateway=LLMGateway(settings.llm, chat_model),
            memory=MemoryStore(settings.memory),
            registry=DimensionRegistry(settings.dimension_dirs),
        )
