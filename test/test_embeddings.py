"""Text embeddings: real MiniLM weights (offline) and the hashing embedder."""

from __future__ import annotations

import numpy as np
import pytest

from vlkng_ros.core.config import EmbeddingConfig
from vlkng_ros.core.embeddings.hashing import HashingEmbedder
from vlkng_ros.core.embeddings.registry import make_image_embedder, make_text_embedder


@pytest.fixture(scope="module")
def minilm():
    return make_text_embedder(EmbeddingConfig(text_backend="minilm"))


def cos(e, a: str, b: str) -> float:
    va, vb = e.embed_texts([a, b])
    return float(va @ vb)


def test_minilm_shape_normalised_and_shared(minilm):
    vecs = minilm.embed_texts(["a red ceramic mug", "a sofa"])
    assert vecs.shape == (2, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert make_text_embedder(EmbeddingConfig(text_backend="minilm")) is minilm  # one per process
    assert minilm.embed_texts([]).shape == (0, 384)


def test_minilm_synonyms_and_affordances(minilm):
    assert cos(minilm, "cup", "mug") > cos(minilm, "cup", "sofa")
    assert cos(minilm, "something to boil water with", "electric kettle") > \
        cos(minilm, "something to boil water with", "bed")


def test_minilm_batching_equals_single_calls(minilm):
    texts = ["a red mug on the counter", "kettle", "a large grey fabric sofa next to a lamp",
             "printer", "something to sit on"] * 3
    batched = minilm.embed_texts(texts)
    singles = np.concatenate([minilm.embed_texts([t]) for t in texts])
    assert np.allclose(batched, singles, atol=1e-5)


def test_numpy_minilm_blas_threads_pinned_only_during_inference(monkeypatch):
    """``embeddings.minilm_blas_threads`` caps BLAS inside a forward pass, restores it after, and
    changes no vector (against the BLAS default)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from vlkng_ros.core.embeddings import minilm_numpy
    from vlkng_ros.core.embeddings.minilm import minilm_model_path

    texts = ["Where did I see the red kettle?", "a large grey fabric sofa next to a lamp", "loo"]
    free = minilm_numpy.NumpyMiniLM(minilm_model_path(), blas_threads=0)
    pinned = minilm_numpy.NumpyMiniLM(minilm_model_path(), blas_threads=1)

    def blas_threads() -> list[int]:
        return [c.num_threads for c in threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers]

    outside = blas_threads()
    seen: list[list[int]] = []
    forward = minilm_numpy.NumpyMiniLM._forward
    monkeypatch.setattr(minilm_numpy.NumpyMiniLM, "_forward",
                        lambda self, ids, mask: (seen.append(blas_threads()), forward(self, ids, mask))[1])
    a, b = free.embed_texts(texts), pinned.embed_texts(texts)
    assert np.allclose(a, b, atol=1e-5)
    assert seen[0] == outside and seen[-1] == [1] * len(outside) and outside
    assert blas_threads() == outside
    assert make_text_embedder(EmbeddingConfig(text_backend="minilm", minilm_blas_threads=0)) is not \
        make_text_embedder(EmbeddingConfig(text_backend="minilm"))


def test_hashing_deterministic_normalised_and_lexical():
    e = make_text_embedder(EmbeddingConfig(text_backend="hashing"))
    assert isinstance(e, HashingEmbedder) and e.dim == 256
    a = e.embed_texts(["red ceramic mug", "office chair", ""])
    assert np.array_equal(a, HashingEmbedder().embed_texts(["red ceramic mug", "office chair", ""]))
    assert np.allclose(np.linalg.norm(a[:2], axis=1), 1.0)
    assert not a[2].any()  # empty text -> zero vector, not NaN
    near, far = e.embed_texts(["red ceramic mugs", "wooden bookshelf"])
    assert a[0] @ near > a[0] @ far


def test_registry_choices():
    assert make_image_embedder(EmbeddingConfig(image_backend="none")) is None
    with pytest.raises(ValueError, match="minilm"):
        make_text_embedder(EmbeddingConfig(text_backend="word2vec"))
    with pytest.raises(ValueError, match="siglip2"):
        make_image_embedder(EmbeddingConfig(image_backend="clip"))
