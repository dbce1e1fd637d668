"""A memory: the graph store, the vector store and the frame store of one memory directory.

Layout of ``memory_dir`` with the embedded defaults::

    graph.sqlite        graph store (sqlite backend; Neo4j when configured)
    qdrant/             qdrant-client local mode (a server when stores.qdrant_url is set)
    frames/<tour>/...   keyframe JPEGs
    chunks/<tour>/...   perceived chunk graphs: the durable queue between perception and STOA

One process opens a memory once and shares the instance (one writer per Qdrant folder: see
stores/qdrant_store.py).
Writes go through ``write_lock`` so ingest threads and the /ask server can share it.

Only ``build``/``run`` create a memory (``create=True``). Readers (ask, stats, export, eval's
reuse) open with ``read_only=True``: a missing memory is "no vlkng memory at PATH", a zero-byte
graph file is an error, the graph is opened read-only (several readers, and a writer in another
process, at once; a read-only copy works too) and the embedded Qdrant folder, which allows one
process at a time, is read from the points mirror a writer left at close while it matches Qdrant's
files (no qdrant-client import), else from a consistent private snapshot (stores/qdrant_store.py).

A namespace (``stores.namespace``) scopes every store: the default namespace keeps the layout
above; another one keeps its graph, frames and chunks under ``ns/<namespace>/`` (its Qdrant
collections are prefixed with it). The memory records which text embedder made its vectors;
vectors that are missing or were made by another embedder are re-indexed from the graph when the
memory is opened, so an answer never silently comes from an empty index.
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
    def open(memory_dir: str | Path, cfg: VlkngConfig | None = None, create: bool = True,
             read_only: bool = False) -> "Memory":
        """Open the memory at ``memory_dir``. ``create``: make it if absent (build/run only);
        ``read_only``: never write (readers). Raises MemoryNotFound / ValueError / StoreError
        with a one-line message."""
        from .stores._common import validate_namespace
        from .stores.registry import open_frame_store, open_graph_store, open_vector_store

        cfg = cfg or VlkngConfig()
        validate_namespace(cfg.stores.namespace)
        path = Path(memory_dir)
        if path.exists() and not path.is_dir():
            raise ValueError(f"memory path {path} is a file, not a memory directory")
        if read_only or not create:
            check_memory_exists(path, cfg)
        else:
            _create_dir(path)
        root = namespace_root(path, cfg)
        if not read_only and root != path:
            _create_dir(root, marker=False)
        graph = open_graph_store(cfg.stores, root, read_only=read_only)
        try:
            vectors = open_vector_store(cfg.stores, path, read_only=read_only)
        except BaseException:
            graph.close()
            raise
        memory = Memory(path, cfg, graph, vectors, open_frame_store(root))
        memory._root = root
        memory.read_only = read_only
        return memory

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

    def embed_cached(self, texts: list[str]) -> Any:
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
        if getattr(self, "read_only", False):
            return  # readers never write; vlkng build and the nodes fill the cache
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
        return self._root / "chunks"

    # --- do the vectors agree with the graph? ---------------------------------------------
    def check_vectors(self, reindex: bool = True) -> int:
        """Make the text vectors agree with the graph: when the collection of the configured
        embedder is missing or empty while the graph has objects, or the memory's vectors were
        made by another embedder, re-index every object from the graph (returns how many).
        With ``reindex=False`` raise StoreError saying what to run instead."""
        from .stores.base import StoreError

        emb = self.text_embedder
        key = f"text_embedder:{self.cfg.stores.namespace}"
        recorded = self.graph.get_meta(key)
        objects = self.graph.count_objects()
        try:
            have = self.vectors.count(self.text_collection)
        except Exception:  # noqa: BLE001 - a missing collection reads as empty
            have = 0
        if objects == 0 or (have > 0 and recorded in (None, emb.name)):
            if recorded is None and objects and not self.read_only:
                self.graph.set_meta(key, emb.name)
            return 0
        why = (f"made by embedder {recorded!r}, not {emb.name!r}" if recorded not in (None, emb.name)
               else "missing")
        if not reindex:
            raise StoreError(f"memory {self.dir}: the object vectors are {why}; run "
                             f"'vlkng build TOUR --memory {self.dir}' to re-index them from the graph")
        log.warning("memory %s: object vectors %s: re-indexing %d objects from the graph",
                    self.dir, why, objects)
        n = reindex_vectors(self)
        if not self.read_only:
            self.graph.set_meta(key, emb.name)
        else:
            log.warning("memory %s is opened read-only: the re-index lasts for this session only", self.dir)
        return n

    def close(self) -> None:
        for store in (self.graph, self.vectors):
            try:
                store.close()
            except Exception as e:  # closing must not hide the original error
                log.warning("closing %s failed: %s", type(store).__name__, e)

    _root: Path
    read_only: bool = False

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class MemoryNotFound(FileNotFoundError):
    """There is no vlkng memory at the path a reader was given."""


GRAPH_FILE = "graph.sqlite"
MARKER_FILE = "vlkng-memory.json"


def namespace_root(path: Path, cfg: VlkngConfig) -> Path:
    """Where a namespace keeps its graph, frames and chunks (see the module docstring)."""
    ns = cfg.stores.namespace
    return path if ns == "default" else path / "ns" / ns


def check_memory_exists(path: Path, cfg: VlkngConfig) -> None:
    """Raise MemoryNotFound unless ``path`` holds a vlkng memory; ValueError for a damaged one."""
    root = namespace_root(path, cfg)
    if cfg.stores.graph_backend.strip().lower() == "sqlite":
        graph = root / GRAPH_FILE
        if graph.is_file() and graph.stat().st_size == 0:
            raise ValueError(f"{graph} is empty (0 bytes): not a vlkng memory (a failed copy?); "
                             f"rebuild it with 'vlkng build'")
        if graph.is_file():
            return
    elif (path / MARKER_FILE).is_file() or (path / "frames").is_dir():
        return
    where = f"{path}" + ("" if root == path else f" (namespace {cfg.stores.namespace!r})")
    raise MemoryNotFound(f"no vlkng memory at {where} (make one with 'vlkng build' or 'vlkng run')")


def _create_dir(path: Path, marker: bool = True) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ValueError(f"memory path {path} (or a folder above it) is a file, not a directory") from None
    except PermissionError:
        raise ValueError(f"cannot create the memory at {path}: permission denied (read-only parent?)") from None
    except OSError as e:
        raise ValueError(f"cannot create the memory at {path}: {e.strerror or e}") from None
    if not marker or (path / MARKER_FILE).exists():
        return
    try:
        (path / MARKER_FILE).write_text('{"format": "vlkng-memory/1"}\n', encoding="utf-8")
    except OSError:
        pass  # the marker only helps non-sqlite backends recognise the folder


def reindex_vectors(memory: Memory) -> int:
    """Embed every object of the graph (its text) into the text collection: one point per object."""
    import numpy as np

    emb = memory.text_embedder
    memory.vectors.ensure_collection(memory.text_collection, emb.dim)
    batch: list = []
    n = 0

    def flush() -> None:
        vecs = emb.embed_texts([o.text() for o in batch])
        memory.vectors.upsert(memory.text_collection, [f"{o.id}|graph" for o in batch], np.asarray(vecs),
                              [{"object_id": o.id, "tour_id": (o.tours[0] if o.tours else ""),
                                "chunk_id": "", "stamp_ns": int(o.first_seen_ns), "label": o.label}
                               for o in batch])

    for obj in memory.graph.iter_objects():
        batch.append(obj)
        if len(batch) >= 256:
            flush()
            n += len(batch)
            batch = []
    if batch:
        flush()
        n += len(batch)
    return n
