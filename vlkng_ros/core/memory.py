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
        self._vector_cache: dict[str, Any] | None = None
        self._cache_lock = threading.Lock()

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

    # --- cached text vectors (the ask vocabulary: labels, affordances) ---------------------------
    @property
    def vector_cache_path(self) -> Path:
        return self.dir / "cache" / f"text-vectors-{self.cfg.embeddings.text_backend}.npz"

    def embed_cached(self, texts: list[str]) -> "np.ndarray":
        """Embeddings of ``texts``, from the memory's on-disk cache where it has them: a process
        that opens the memory builds its label vocabulary without embedding every label again
        (the cache is keyed by the embedding backend; a corrupt or foreign file is ignored)."""
        import numpy as np

        with self._cache_lock:
            cache = self._load_vector_cache()
            missing = sorted({t for t in texts if t not in cache})
            if missing:
                for text, vec in zip(missing, self.text_embedder.embed_texts(missing)):
                    cache[text] = np.asarray(vec, dtype=np.float32)
                self._save_vector_cache(cache)
            return np.stack([cache[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)

    def _load_vector_cache(self) -> dict[str, Any]:
        import numpy as np

        if self._vector_cache is None:
            self._vector_cache = {}
            path = self.vector_cache_path
            if path.is_file():
                try:
                    with np.load(path, allow_pickle=False) as data:
                        self._vector_cache = dict(zip(data["texts"].tolist(), data["vectors"]))
                except (OSError, ValueError, KeyError) as e:
                    log.warning("ignoring the vector cache %s: %s", path, e)
        return self._vector_cache

    def _save_vector_cache(self, cache: dict[str, Any]) -> None:
        import os
        import tempfile

        import numpy as np

        path = self.vector_cache_path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz")
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, texts=np.array(list(cache), dtype=str), vectors=np.stack(list(cache.values())))
            os.replace(tmp, path)
        except OSError as e:  # a read-only memory still answers; it just does not cache
            log.warning("could not write the vector cache %s: %s", path, e)

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
