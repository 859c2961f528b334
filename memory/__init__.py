"""The context memory on chromadb (the analysis memory is the graph state: see .store), with offline embeddings."""

from .embeddings import HashEmbedding, MiniLMEmbedding, make_embedding
from .store import ContextMemory, MemoryStore

__all__ = ["ContextMemory", "HashEmbedding", "MemoryStore", "MiniLMEmbedding", "make_embedding"]
