"""all-MiniLM-L6-v2 inference in NumPy: the same weights and tokenizer as the sentence-transformers
model, the same vectors (to float rounding; test_embeddings checks), without importing torch or
transformers, which costs seconds per process. A one-shot ``vlkng ask`` or a restarted node
answers its first question without that start-up (bench/bench_warmup.py measures it).

The model is BERT (6 layers, 384 wide, 12 heads, GELU, post-LayerNorm) + mean pooling over the
attention mask + L2 normalisation, as the model folder's modules.json says.
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from .base import TextEmbedder, normalize

MAX_SEQ_LENGTH = 256  # sentence_bert_config.json


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to ~1e-7 absolute (Abramowitz & Stegun 7.1.26 is 1.5e-7; float32 GELU needs no more)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * np.exp(-a * a)
    return sign * y


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


class NumpyMiniLM(TextEmbedder):
    name = "minilm"
    dim = 384

    def __init__(self, model_path: str, batch_size: int = 64, blas_threads: int = 1) -> None:
        """``blas_threads``: BLAS threads during inference (``embeddings.minilm_blas_threads``;
        0 leaves the BLAS default)."""
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(model_path)
        cfg = json.loads((folder / "config.json").read_text())
        if cfg.get("model_type") != "bert" or cfg.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{folder}: not a BERT model with absolute positions")
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg["layer_norm_eps"])
        self.dim = int(cfg["hidden_size"])
        self.w = load_file(str(folder / "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        self.tokenizer.enable_padding(pad_id=int(cfg.get("pad_token_id", 0)))
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._blas = _blas_controller() if blas_threads > 0 else None
        self.blas_threads = blas_threads

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        n, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        head = self.dim // self.heads
        bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(t: np.ndarray, name: str) -> np.ndarray:
                return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(n, length, self.heads, head).transpose(0, 2, 1, 3)

            q, k, v = (split(lin(x, f"attention.self.{m}")) for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head) + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            probs = scores / scores.sum(axis=-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(n, length, self.dim)
            x = _layer_norm(lin(ctx, "attention.output.dense") + x, w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"], self.eps)
            h = _gelu(lin(x, "intermediate.dense"))
            x = _layer_norm(lin(h, "output.dense") + x, w[p + "output.LayerNorm.weight"],
                            w[p + "output.LayerNorm.bias"], self.eps)
        m = mask[:, :, None].astype(np.float32)
        return (x * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)

    def _blas_limit(self):
        """BLAS capped at ``blas_threads`` for this forward pass (restored after). BERT-small's
        products are tiny for a question: extra BLAS threads only wait and spin, and on a busy
        CPU they cost the most (see the config key)."""
        if self._blas is None:
            return contextlib.nullcontext()
        return _limited(self._blas, self.blas_threads)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = []
        with self._lock:
            # similar lengths together: less padding per batch
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            for b in range(0, len(order), self.batch_size):
                idx = order[b:b + self.batch_size]
                enc = self.tokenizer.encode_batch([texts[i] for i in idx])
                ids = np.array([e.ids for e in enc], dtype=np.int64)
                mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
                with self._blas_limit():
                    out.append((idx, self._forward(ids, mask)))
        vecs = np.zeros((len(texts), self.dim), dtype=np.float32)
        for idx, v in out:
            vecs[idx] = v
        return normalize(vecs)


_BLAS_LOCK = threading.Lock()  # BLAS thread counts are process-wide: one limit at a time


@contextlib.contextmanager
def _limited(controller, threads: int):
    with _BLAS_LOCK, controller.limit(limits=threads, user_api="blas"):
        yield


def _blas_controller():
    """threadpoolctl's view of the loaded BLAS (installed with scikit-learn, which
    sentence-transformers needs); None without it (then BLAS keeps its default)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    try:
        return ThreadpoolController()
    except Exception:  # noqa: BLE001 - only a speed-up
        return None
