"""Open the configured stores of a memory directory (called by ``Memory.open``)."""

from __future__ import annotations

import os
from pathlib import Path

from ..config import StoreConfig
from .base import FrameStore, GraphStore, StoreError, VectorStore

GRAPH_BACKENDS = ("sqlite", "neo4j")
VECTOR_BACKENDS = ("qdrant",)


def open_graph_store(cfg: StoreConfig, memory_dir: Path, read_only: bool = False) -> GraphStore:
    """``memory_dir``: the namespace's folder (Memory.open). ``read_only``: a reader's opening."""
    backend = cfg.graph_backend.strip().lower()
    if backend == "sqlite":
        from .sqlite_store import SqliteGraphStore

        return SqliteGraphStore(Path(memory_dir) / "graph.sqlite", read_only=read_only)
    if backend == "neo4j":
        from .neo4j_store import Neo4jGraphStore

        password = os.environ.get(cfg.neo4j_password_env)
        if password is None:
            from ._common import redact

            raise StoreError(f"Neo4j at {redact(cfg.neo4j_uri)}: set the password in the environment "
                             f"variable {cfg.neo4j_password_env!r} (stores.neo4j_password_env)")
        return Neo4jGraphStore(cfg.neo4j_uri, cfg.neo4j_user, password, cfg.neo4j_database,
                               namespace=cfg.namespace)
    raise ValueError(f"unknown graph backend {cfg.graph_backend!r}; choose one of {list(GRAPH_BACKENDS)}")


def open_vector_store(cfg: StoreConfig, memory_dir: Path, read_only: bool = False) -> VectorStore:
    """``read_only``: the embedded Qdrant folder (one writer at a time) is read from its points
    mirrors or a private snapshot, so readers never take its lock from a writer or from each other."""
    backend = cfg.vector_backend.strip().lower()
    if backend == "qdrant":
        from .qdrant_store import QdrantVectorStore, snapshot_local

        if cfg.qdrant_url:
            api_key = os.environ.get(cfg.qdrant_api_key_env) or None
            warn_plain_http_key(cfg.qdrant_url, api_key)
            return QdrantVectorStore(url=cfg.qdrant_url, api_key=api_key)
        folder = Path(memory_dir) / "qdrant"
        if read_only:
            return snapshot_local(folder)
        return QdrantVectorStore(path=str(folder))
    raise ValueError(f"unknown vector backend {cfg.vector_backend!r}; "
                     f"choose one of {list(VECTOR_BACKENDS)}")


def open_frame_store(memory_dir: Path) -> FrameStore:
    from .frame_store import FileFrameStore

    return FileFrameStore(Path(memory_dir) / "frames")


def warn_plain_http_key(url: str, api_key: str | None) -> bool:
    """Warn (once per call) when an API key would travel in clear text to another machine."""
    import logging
    from urllib.parse import urlparse

    if not api_key:
        return False
    u = urlparse(url)
    if u.scheme != "http" or (u.hostname or "") in ("localhost", "127.0.0.1", "::1"):
        return False
    logging.getLogger("vlkng.stores").warning(
        "the Qdrant API key is sent over plain http:// to %s: anyone on the network can read it; "
        "use https://", u.hostname)
    return True
