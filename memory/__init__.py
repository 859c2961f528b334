"""Context memory and analysis memory on chromadb, with offline embedding functions."""

from .embeddings import HashEmbedding, MiniLMEmbedding, make_embedding
from .store import ColumnMemory, MemoryStore, RunMemory

__all__ = ["ColumnMemory", "HashEmbedding", "MemoryStore", "MiniLMEmbedding", "RunMemory", "make_embedding"]
