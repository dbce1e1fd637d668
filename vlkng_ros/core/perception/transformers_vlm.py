"""A local VLM via ``transformers`` as the world expert (AutoProcessor +
AutoModelForImageTextToText; any chat-template VLM that takes several images, e.g. Qwen2-VL,
Idefics3/SmolVLM, LLaVA). Same prompt, schema and parser as the server backends.

On CUDA the model loads in float16 by default (Turing cards such as the RTX 2060 have no
bfloat16), optionally in 4 bit when ``bitsandbytes`` is installed; images are downscaled to what
the model's processor works at before they are encoded, so no pixels are sent that the model would
throw away (and a Qwen2-VL chunk of 8 frames stays near 2-3k visual tokens).
"""

from __future__ import annotations

import io
from typing import Any, Sequence

from ..llm.base import LLMError
from ..llm.transformers_llm import LocalJSONModel
from .llm_perceiver import LLMPerceiver

DTYPES = ("auto", "float16", "bfloat16", "float32")
# Processors that tile/resize dynamically (Qwen2-VL's max_pixels): cap the longer side here so a
# chunk of 8 frames does not become tens of thousands of visual tokens on a 6 GB GPU.
DYNAMIC_RES_MAX_SIDE = 640


def torch_dtype(name: str, device: str) -> Any:
    """'auto' -> float16 on CUDA, float32 elsewhere; otherwise the named torch dtype."""
    import torch

    if name not in DTYPES:
        raise LLMError(f"perception.dtype {name!r}: choose one of {DTYPES}")
    if name == "auto":
        return torch.float16 if str(device).startswith("cuda") else torch.float32
    return getattr(torch, name)


def processor_max_side(processor: Any) -> int:
    """The longer image side the processor resizes to (0 when it does not say). ``size`` is a
    dict (transformers 4) or a SizeDict (5); dynamic-resolution processors (Qwen2-VL) give pixel
    counts (``max_pixels``, or ``longest_edge`` in the millions) and get DYNAMIC_RES_MAX_SIDE."""
    ip = getattr(processor, "image_processor", None)
    if ip is None:
        return 0
    size = getattr(ip, "size", None)

    def get(key: str) -> int:
        value = size.get(key) if isinstance(size, dict) else getattr(size, key, None)
        return int(value or 0)

    if getattr(ip, "max_pixels", None) or get("max_pixels") or get("longest_edge") > 8192:
        return DYNAMIC_RES_MAX_SIDE
    if isinstance(size, int):
        return size
    if get("longest_edge"):
        return get("longest_edge")
    if get("height"):
        return max(get("height"), get("width"))
    return get("shortest_edge")


def _dtype_kwarg() -> str:
    """transformers >= 4.56 calls it ``dtype``; older releases ``torch_dtype``."""
    import transformers

    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


class TransformersVLM(LocalJSONModel):
    """generate_json over a local image-text-to-text model (images: JPEG bytes)."""

    name = "transformers-vlm"

    def __init__(self, model: str, device: str = "auto", max_new_tokens: int = 1024,
                 temperature: float = 0.7, max_retries: int = 1, dtype: str = "auto",
                 load_in_4bit: bool = False) -> None:
        super().__init__(model, device=device, max_new_tokens=max_new_tokens,
                         temperature=temperature, max_retries=max_retries)
        self.dtype_name = dtype
        self.load_in_4bit = bool(load_in_4bit)

    def _load(self) -> None:
        from transformers import AutoModelForImageTextToText, AutoProcessor

        dtype = torch_dtype(self.dtype_name, self.device)
        kwargs: dict[str, Any] = {_dtype_kwarg(): dtype}
        if self.load_in_4bit:
            if not self.device.startswith("cuda"):
                raise LLMError("perception.load_in_4bit needs a CUDA device (bitsandbytes)")
            try:
                import bitsandbytes  # noqa: F401
                from transformers import BitsAndBytesConfig
            except ImportError as e:
                raise LLMError("perception.load_in_4bit needs bitsandbytes: pip install bitsandbytes") from e
            kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_compute_dtype=dtype, bnb_4bit_quant_type="nf4")
            kwargs["device_map"] = self.device
        self.processor = AutoProcessor.from_pretrained(self.model_name)
        model = AutoModelForImageTextToText.from_pretrained(self.model_name, **kwargs)
        self.model = (model if self.load_in_4bit else model.to(self.device)).eval()
        self.dtype = dtype

    def preferred_max_side(self) -> int:
        """The longer side images should have when sent (the processor's own working size)."""
        with self._lock:
            self._ensure_loaded()
        return processor_max_side(self.processor)

    def _chat_text(self, prompt: str, n_images: int) -> str:
        content: list[dict[str, Any]] = []
        for i in range(n_images):
            content += [{"type": "text", "text": f"Image {i}:"}, {"type": "image"}]
        content.append({"type": "text", "text": prompt})
        if getattr(self.processor, "chat_template", None):
            return self.processor.apply_chat_template([{"role": "user", "content": content}],
                                                      add_generation_prompt=True, tokenize=False)
        image_token = getattr(self.processor, "image_token", None) or "<image>"
        return "".join(f"Image {i}: {image_token}\n" for i in range(n_images)) + prompt

    def _generate_text(self, prompt: str, images: Sequence[bytes]) -> str:
        import torch
        from PIL import Image

        pil = [Image.open(io.BytesIO(b)).convert("RGB") for b in images]
        text = self._chat_text(prompt, len(pil))
        inputs = self.processor(text=[text], images=pil or None, return_tensors="pt").to(self.device)
        if "pixel_values" in inputs and inputs["pixel_values"].is_floating_point():
            inputs["pixel_values"] = inputs["pixel_values"].to(self.dtype)
        tokenizer = getattr(self.processor, "tokenizer", self.processor)
        with torch.inference_mode():
            out = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens,
                                      pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
                                      **self._sampling())
        self.last_token_counts = (int(inputs["input_ids"].shape[1]),
                                  int(out.shape[1] - inputs["input_ids"].shape[1]))
        return tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)


class TransformersPerceiver(LLMPerceiver):
    """``max_side`` 0 = the model processor's own working size (see processor_max_side)."""

    name = "transformers"

    def __init__(self, model: str, device: str = "auto", temperature: float = 0.1,
                 max_retries: int = 1, max_new_tokens: int = 1536, max_side: int = 0,
                 dtype: str = "auto", load_in_4bit: bool = False) -> None:
        super().__init__(TransformersVLM(model, device=device, max_new_tokens=max_new_tokens,
                                         temperature=temperature, max_retries=max_retries,
                                         dtype=dtype, load_in_4bit=load_in_4bit),
                         max_side=max_side)
