"""Open the configured stores of a memory directory (called by ``Memory.open``)."""

from __future__ import annotations

import os
from pathlib import Path

from ..config import StoreConfig
from .base import FrameStore, GraphStore, StoreError, VectorStore

GRAPH_BACKENDS = ("sqlite", "neo4j")
VECTOR_BACKENDS = ("qdrant",)


def open_graph_store(cfg: StoreConfig, memory_dir: Path) -> GraphStore:
    backend = cfg.graph_backend.strip().lower()
    if backend == "sqlite":
        from .sqlite_store import SqliteGraphStore

        return SqliteGraphStore(Path(memory_dir) / "graph.sqlite")
    if backend == "neo4j":
        from .neo4j_store import Neo4jGraphStore

        password = os.environ.get(cfg.neo4j_password_env)
        if password is None:
            raise StoreError(f"Neo4j at {cfg.neo4j_uri}: set the password in the environment "
                             f"variable {cfg.neo4j_password_env!r} (stores.neo4j_password_env)")
        return Neo4jGraphStore(cfg.neo4j_uri, cfg.neo4j_user, password, cfg.neo4j_database,
                               namespace=cfg.namespace)
    raise ValueError(f"unknown graph backend {cfg.graph_backend!r}; choose one of {list(GRAPH_BACKENDS)}")


def open_vector_store(cfg: StoreConfig, memory_dir: Path) -> VectorStore:
    backend = cfg.vector_backend.strip().lower()
    if backend == "qdrant":
        from .qdrant_store import QdrantVectorStore

        if cfg.qdrant_url:
            return QdrantVectorStore(url=cfg.qdrant_url,
                                     api_key=os.environ.get(cfg.qdrant_api_key_env) or None)
        return QdrantVectorStore(path=str(Path(memory_dir) / "qdrant"))
    raise ValueError(f"unknown vector backend {cfg.vector_backend!r}; "
                     f"choose one of {list(VECTOR_BACKENDS)}")


def open_frame_store(memory_dir: Path) -> FrameStore:
    from .frame_store import FileFrameStore

    return FileFrameStore(Path(memory_dir) / "frames")
