"""A local VLM via ``transformers`` as the world expert (AutoProcessor +
AutoModelForImageTextToText; any chat-template VLM that takes several images, e.g. Qwen2-VL,
Idefics3/SmolVLM, LLaVA). Same prompt, schema and parser as Gemini."""

from __future__ import annotations

import io
from typing import Any, Sequence

from ..llm.transformers_llm import LocalJSONModel
from .llm_perceiver import LLMPerceiver


class TransformersVLM(LocalJSONModel):
    """generate_json over a local image-text-to-text model (images: JPEG bytes)."""

    name = "transformers-vlm"

    def _load(self) -> None:
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.processor = AutoProcessor.from_pretrained(self.model_name)
        self.model = AutoModelForImageTextToText.from_pretrained(self.model_name).to(self.device).eval()

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
        tokenizer = getattr(self.processor, "tokenizer", self.processor)
        with torch.inference_mode():
            out = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens,
                                      pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
                                      **self._sampling())
        return tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)


class TransformersPerceiver(LLMPerceiver):
    name = "transformers"

    def __init__(self, model: str, device: str = "auto", temperature: float = 0.1,
                 max_retries: int = 1, max_new_tokens: int = 1536, max_side: int = 768) -> None:
        super().__init__(TransformersVLM(model, device=device, max_new_tokens=max_new_tokens,
                                         temperature=temperature, max_retries=max_retries),
                         max_side=max_side)
