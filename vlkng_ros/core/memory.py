"""A memory: the graph store, the vector store and the frame store of one memory directory.

Layout of ``memory_dir`` with the embedded defaults::

    graph.sqlite        graph store (sqlite backend; Neo4j when configured)
    qdrant/             qdrant-client local mode (a server when stores.qdrant_url is set)
    frames/<tour>/...   keyframe JPEGs
    chunks/<tour>/...   perceived chunk graphs: the durable queue between perception and STOA

One process opens a memory once and shares the instance (qdrant local mode locks its folder).
Writes go through ``write_lock`` so ingest threads and the /ask server can share it.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from .config import VlkngConfig
from .embeddings.base import ImageTextEmbedder, TextEmbedder
from .stores.base import FrameStore, GraphStore, VectorStore

log = logging.getLogger("vlkng.memory")


class Memory:
    def __init__(self, memory_dir: Path, cfg: VlkngConfig, graph: GraphStore,
                 vectors: VectorStore, frames: FrameStore) -> None:
        self.dir = memory_dir
        self.cfg = cfg
        self.graph = graph
        self.vectors = vectors
        self.frames = frames
        self.write_lock = threading.RLock()
        # Bumped after every write made through this process (merges, keyframes), so readers'
        # caches (ask vocabulary, keyframe index) know when to refresh without polling the stores.
        self.generation = 0
        self._text_embedder: TextEmbedder | None = None
        self._image_embedder: ImageTextEmbedder | None | bool = False

    @staticmethod
    def open(memory_dir: str | Path, cfg: VlkngConfig | None = None) -> "Memory":
        from .stores.registry import open_frame_store, open_graph_store, open_vector_store

        cfg = cfg or VlkngConfig()
        path = Path(memory_dir)
        path.mkdir(parents=True, exist_ok=True)
        graph = open_graph_store(cfg.stores, path)
        vectors = open_vector_store(cfg.stores, path)
        frames = open_frame_store(path)
        return Memory(path, cfg, graph, vectors, frames)

    def touch(self) -> None:
        """Record that the memory changed (see ``generation``)."""
        self.generation += 1

    # --- embeddings, loaded on first use ---------------------------------------------------
    @property
    def text_embedder(self) -> TextEmbedder:
        if self._text_embedder is None:
            from .embeddings.registry import make_text_embedder

            self._text_embedder = make_text_embedder(self.cfg.embeddings)
        return self._text_embedder

    @property
    def image_embedder(self) -> ImageTextEmbedder | None:
        if self._image_embedder is False:
            from .embeddings.registry import make_image_embedder

            self._image_embedder = make_image_embedder(self.cfg.embeddings)
        return self._image_embedder  # type: ignore[return-value]

    # --- vector collections (namespaced per site; dims come from the embedder) --------------
    @property
    def text_collection(self) -> str:
        return f"{self.cfg.stores.namespace}_objects_text_{self.text_embedder.name}"

    @property
    def image_collection(self) -> str | None:
        emb = self.image_embedder
        return None if emb is None else f"{self.cfg.stores.namespace}_objects_image_{emb.name}"

    @property
    def chunks_dir(self) -> Path:
        return self.dir / "chunks"

    def close(self) -> None:
        for store in (self.graph, self.vectors):
            try:
                store.close()
            except Exception as e:  # closing must not hide the original error
                log.warning("closing %s failed: %s", type(store).__name__, e)

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
