"""Local models via ``transformers``: a text LLM (AutoTokenizer + AutoModelForCausalLM).

Local models have no structured-output mode, so the schema goes into the prompt and the answer is
checked the same way as Gemini's (``json_tools``); invalid output is retried (sampling makes the
next try differ) and then raises LLMError. Models load lazily, on first use.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from abc import abstractmethod
from typing import Any, Sequence

from .base import LLM, BackendUnavailable, LLMError, LLMUsage
from .json_tools import InvalidModelOutput, parse_and_validate

log = logging.getLogger(__name__)


def resolve_device(device: str | None) -> str:
    """'auto' (or empty) -> cuda when available, else cpu."""
    if device and device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def json_instruction(prompt: str, schema: dict[str, Any] | None) -> str:
    if not schema:
        return prompt + "\nAnswer with JSON only."
    return (prompt + "\nAnswer with one JSON value only, no prose, matching this JSON schema:\n"
            + json.dumps(schema, separators=(",", ":")))


def _input_ids(encoded: Any) -> Any:
    """apply_chat_template returns a tensor (transformers 4) or a BatchEncoding (5)."""
    return encoded["input_ids"] if hasattr(encoded, "keys") else encoded


class LocalJSONModel(LLM):
    """generate_json = prompt with schema -> ``_generate_text`` -> parse/validate, with retries."""

    name = "local"

    def __init__(self, model: str, device: str = "auto", max_new_tokens: int = 1024,
                 temperature: float = 0.7, max_retries: int = 1) -> None:
        self.model_name = model
        self.device = resolve_device(device)
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = float(temperature)
        self.max_retries = max(0, int(max_retries))
        self._loaded = False
        self._load_error = ""
        self._lock = threading.Lock()  # one generate at a time per model

    def _ensure_loaded(self) -> None:
        """Load once; a model that cannot load stops the backend (every chunk would fail alike)."""
        if self._loaded:
            return
        if self._load_error:
            raise BackendUnavailable(self._load_error)
        try:
            self._load()
        except (OSError, ValueError, ImportError, LLMError) as e:
            self._load_error = (f"cannot load local model {self.model_name!r}: {str(e)[:300]} "
                                "(a Hugging Face id needs the weights downloaded once, or a local folder; "
                                "see docs/MODELS.md)")
            raise BackendUnavailable(self._load_error) from e
        self._loaded = True

    @abstractmethod
    def _load(self) -> None: ...

    @abstractmethod
    def _generate_text(self, prompt: str, images: Sequence[bytes]) -> str: ...

    def _sampling(self) -> dict[str, Any]:
        if self.temperature > 0:
            return {"do_sample": True, "temperature": self.temperature}
        return {"do_sample": False}

    def generate_json(self, prompt: str, schema: dict[str, Any],
                      images: Sequence[bytes] = (), usage: LLMUsage | None = None) -> Any:
        full_prompt = json_instruction(prompt, schema)
        started = time.monotonic()
        last = ""
        try:
            with self._lock:
                self._ensure_loaded()
                for attempt in range(self.max_retries + 1):
                    if usage is not None:
                        usage.calls += 1
                        usage.retries += 1 if attempt else 0
                        usage.prompt_chars += len(full_prompt)
                    self.last_token_counts = (0, 0)
                    text = self._generate_text(full_prompt, images)
                    if usage is not None:
                        usage.output_chars += len(text)
                        usage.input_tokens += self.last_token_counts[0]
                        usage.output_tokens += self.last_token_counts[1]
                    try:
                        return parse_and_validate(text, schema)
                    except InvalidModelOutput as e:
                        last = str(e)
                        log.warning("%s %s: attempt %d/%d gave invalid output: %s", self.name,
                                    self.model_name, attempt + 1, self.max_retries + 1, last)
        finally:
            if usage is not None:
                usage.seconds += time.monotonic() - started
        raise LLMError(f"{self.name} model {self.model_name!r} gave no valid JSON in "
                       f"{self.max_retries + 1} attempts; last error: {last}")


class TransformersLLM(LocalJSONModel):
    """A local text LLM. Images are not supported and are ignored with a warning."""

    name = "transformers"

    def _load(self) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(self.model_name)
        self.model = AutoModelForCausalLM.from_pretrained(self.model_name).to(self.device).eval()
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

    def _generate_text(self, prompt: str, images: Sequence[bytes]) -> str:
        import torch

        if images:
            log.warning("%s: text-only model; ignoring %d image(s)", self.model_name, len(images))
        if getattr(self.tokenizer, "chat_template", None):
            ids = _input_ids(self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], add_generation_prompt=True,
                return_tensors="pt"))
        else:
            ids = self.tokenizer(prompt, return_tensors="pt")["input_ids"]
        ids = ids.to(self.device)
        with torch.inference_mode():
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                      max_new_tokens=self.max_new_tokens,
                                      pad_token_id=self.tokenizer.pad_token_id, **self._sampling())
        self.last_token_counts = (int(ids.shape[1]), int(out.shape[1] - ids.shape[1]))
        return self.tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
