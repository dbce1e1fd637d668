"""SigLIP2 image/text embeddings via ``transformers``: object crops and text queries in one space.

Loads ``AutoProcessor`` + ``AutoModel`` from a model id or a local directory (offline when
HF_HUB_OFFLINE=1), lazily on first use, on the configured torch device.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from .base import ImageTextEmbedder, normalize


def _pooled(output: Any) -> Any:
    """transformers 4.x returns a tensor from get_*_features; 5.x a ModelOutput with pooler_output."""
    if hasattr(output, "pooler_output") and output.pooler_output is not None:
        return output.pooler_output
    return output[0] if isinstance(output, (tuple, list)) else output


class SigLIP2Embedder(ImageTextEmbedder):
    name = "siglip2"

    def __init__(self, model: str, device: str = "cpu", batch_size: int = 32,
                 max_text_length: int = 64) -> None:
        self.model_name = model
        self.device = device
        self.batch_size = batch_size
        self.max_text_length = max_text_length
        self._model: Any = None
        self._processor: Any = None
        self._lock = threading.Lock()
        self._load()

    def _load(self) -> None:
        from transformers import AutoModel, AutoProcessor

        try:
            self._processor = AutoProcessor.from_pretrained(self.model_name)
            self._model = AutoModel.from_pretrained(self.model_name).to(self.device).eval()
        except (OSError, ValueError) as e:
            raise RuntimeError(f"cannot load SigLIP2 model {self.model_name!r} ({e}); without "
                               "internet set embeddings.siglip_model to a local directory") from e
        cfg = self._model.config
        # Siglip2Processor's call defaults (patch 16, 256 patches) override its image processor's
        # saved settings; pass the model's own so any SigLIP2 variant gets matching patches.
        image_processor = getattr(self._processor, "image_processor", None)
        self._image_kwargs: dict[str, Any] = {}
        if image_processor is not None and hasattr(image_processor, "max_num_patches"):
            self._image_kwargs = {"patch_size": int(cfg.vision_config.patch_size),
                                  "max_num_patches": int(image_processor.max_num_patches)}
        text_dim = getattr(cfg.text_config, "projection_size", None) or cfg.text_config.hidden_size
        self.dim = int(cfg.vision_config.hidden_size)
        if int(text_dim) != self.dim:
            raise RuntimeError(f"{self.model_name}: text ({text_dim}) and image ({self.dim}) "
                               "features differ in size; not a joint SigLIP2 model")

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        texts = [str(t) for t in texts]
        chunks = []
        with self._lock, torch.inference_mode():
            for i in range(0, len(texts), self.batch_size):
                inputs = self._processor(text=texts[i:i + self.batch_size], padding="max_length",
                                         max_length=self.max_text_length, truncation=True,
                                         return_tensors="pt").to(self.device)
                feats = _pooled(self._model.get_text_features(**inputs))
                chunks.append(feats.float().cpu().numpy())
        return normalize(np.concatenate(chunks)) if chunks else np.zeros((0, self.dim), np.float32)

    def embed_images(self, images: Sequence[np.ndarray]) -> np.ndarray:
        import torch
        from PIL import Image

        pil = []
        for img in images:
            arr = np.asarray(img)
            if arr.dtype != np.uint8 or arr.ndim not in (2, 3) or min(arr.shape[:2]) < 1:
                raise ValueError(f"expected a non-empty uint8 RGB crop, got {arr.dtype} {arr.shape}")
            pil.append(Image.fromarray(arr).convert("RGB"))
        chunks = []
        with self._lock, torch.inference_mode():
            for i in range(0, len(pil), self.batch_size):
                inputs = self._processor(images=pil[i:i + self.batch_size], return_tensors="pt",
                                         **self._image_kwargs).to(self.device)
                feats = _pooled(self._model.get_image_features(**inputs))
                chunks.append(feats.float().cpu().numpy())
        return normalize(np.concatenate(chunks)) if chunks else np.zeros((0, self.dim), np.float32)
