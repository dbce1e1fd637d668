"""Real transformers loading and inference code on tiny random-weight models built here.

Everything is created offline in a tmp dir (config -> save_pretrained, a word-level tokenizer built
with ``tokenizers``): a tiny SigLIP2, a tiny LLaVA (CLIP vision tower + Llama) as the local VLM and
a tiny Llama as the local text LLM. Random weights emit garbage, so the VLM/LLM backends must fail
cleanly (PerceptionError / LLMError after their retries), not crash.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from vlkng_ros.core.config import EmbeddingConfig, LLMConfig, VlkngConfig  # noqa: E402
from vlkng_ros.core.llm.base import LLMError, LLMUsage  # noqa: E402
from vlkng_ros.core.llm.registry import make_llm  # noqa: E402
from vlkng_ros.core.model import Keyframe  # noqa: E402
from vlkng_ros.core.perception.base import ChunkInput, PerceptionError  # noqa: E402
from vlkng_ros.core.perception.registry import make_perceiver  # noqa: E402
from vlkng_ros.core.perception.transformers_vlm import TransformersPerceiver  # noqa: E402

WORDS = ("a the red blue white mug cup sofa kettle lamp chair table on next to image objects "
         "{ } [ ] : , \" id label boxes relations").split()
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'].upper() }}: "
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}"
    "{% endif %} {% endfor %}{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}")


def tiny_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<unk>": 1, "<s>": 2, "</s>": 3, "<image>": 4}
    vocab.update({w: i + len(vocab) for i, w in enumerate(WORDS)})
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.decoder = decoders.WordPiece()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>",
                                  bos_token="<s>", eos_token="</s>",
                                  additional_special_tokens=["<image>"])
    tok.chat_template = CHAT_TEMPLATE
    return tok


def tiny_llama(vocab_size: int):
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                       max_position_embeddings=512, pad_token_id=0, bos_token_id=2, eos_token_id=3)


@pytest.fixture(scope="module")
def siglip_dir(tmp_path_factory):
    from transformers import Siglip2Config, Siglip2ImageProcessor, Siglip2Model, Siglip2Processor

    torch.manual_seed(0)
    tok = tiny_tokenizer()
    cfg = Siglip2Config(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64,
                         projection_size=32, pad_token_id=0, bos_token_id=2, eos_token_id=3),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4, num_patches=16, patch_size=8))
    path = tmp_path_factory.mktemp("siglip2")
    Siglip2Model(cfg).save_pretrained(path)
    Siglip2Processor(image_processor=Siglip2ImageProcessor(patch_size=8, max_num_patches=16),
                     tokenizer=tok).save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def llava_dir(tmp_path_factory):
    from transformers import (CLIPImageProcessor, CLIPVisionConfig, LlavaConfig,
                              LlavaForConditionalGeneration, LlavaProcessor)

    torch.manual_seed(0)
    tok = tiny_tokenizer()
    cfg = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                       num_attention_heads=4, image_size=32, patch_size=8,
                                       projection_dim=32),
        text_config=tiny_llama(len(tok)), image_token_index=tok.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default", vision_feature_layer=-1)
    path = tmp_path_factory.mktemp("llava")
    LlavaForConditionalGeneration(cfg).save_pretrained(path)
    LlavaProcessor(image_processor=CLIPImageProcessor(size={"shortest_edge": 32},
                                                      crop_size={"height": 32, "width": 32}),
                   tokenizer=tok, patch_size=8, vision_feature_select_strategy="default",
                   num_additional_image_tokens=1, chat_template=CHAT_TEMPLATE).save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    tok = tiny_tokenizer()
    path = tmp_path_factory.mktemp("llama")
    LlamaForCausalLM(tiny_llama(len(tok))).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def test_tiny_siglip2_texts_and_crops_in_one_normalised_space(siglip_dir):
    from vlkng_ros.core.embeddings.registry import make_image_embedder, make_text_embedder

    cfg = EmbeddingConfig(text_backend="siglip2", image_backend="siglip2", siglip_model=siglip_dir)
    image_embedder = make_image_embedder(cfg)
    assert make_text_embedder(cfg) is image_embedder  # one model for both
    texts = image_embedder.embed_texts(["a red mug", "sofa", "something unknown"])
    rng = np.random.default_rng(0)
    crops = [rng.integers(0, 255, (40, 30, 3), dtype=np.uint8),
             rng.integers(0, 255, (12, 90, 3), dtype=np.uint8)]
    images = image_embedder.embed_images(crops)
    assert texts.shape == (3, 32) and images.shape == (2, 32) and image_embedder.dim == 32
    for v in (texts, images):
        assert v.dtype == np.float32 and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(images[0], images[1])  # the pixels matter
    # batching does not change results
    one_by_one = np.concatenate([image_embedder.embed_texts([t]) for t in
                                 ["a red mug", "sofa", "something unknown"]])
    assert np.allclose(texts, one_by_one, atol=1e-5)
    with pytest.raises(ValueError):
        image_embedder.embed_images([np.zeros((0, 5, 3), np.uint8)])


def chunk(n: int = 3) -> ChunkInput:
    rng = np.random.default_rng(1)
    kfs = [Keyframe("t", 1000 + i, i, 64, 48) for i in range(n)]
    return ChunkInput("t", 0, kfs, [rng.integers(0, 255, (48, 64, 3), dtype=np.uint8) for _ in kfs])


def test_tiny_vlm_generates_on_a_chunk_and_fails_cleanly(llava_dir):
    perceiver = TransformersPerceiver(llava_dir, device="cpu", max_new_tokens=6, max_retries=1)
    vlm = perceiver.llm
    vlm._ensure_loaded()
    seen = []
    original = vlm.model.generate

    def spy(**kwargs):
        seen.append({k: tuple(v.shape) for k, v in kwargs.items() if hasattr(v, "shape")})
        return original(**kwargs)

    vlm.model.generate = spy
    with pytest.raises(PerceptionError, match="no valid JSON in 2 attempts"):
        perceiver.perceive(chunk(3))
    assert len(seen) == 2  # one try + one retry, each a real generate
    assert seen[0]["pixel_values"][0] == 3  # the chunk's three images in one prompt
    assert perceiver.usage.calls == 2 and perceiver.usage.output_chars > 0


def test_transformers_perceiver_through_the_registry(llava_dir):
    cfg = VlkngConfig()
    cfg.update({"perception": {"backend": "transformers", "model": llava_dir, "max_retries": 0}})
    p = make_perceiver(cfg)
    assert isinstance(p, TransformersPerceiver) and p.llm.device == "cpu"
    p.llm.max_new_tokens = 4
    with pytest.raises(PerceptionError):
        p.perceive(chunk(2))


def test_tiny_causal_lm_backend_fails_cleanly(llama_dir):
    llm = make_llm(LLMConfig(backend="transformers", model=llama_dir, max_retries=1, temperature=0.7))
    llm.max_new_tokens = 8
    usage = LLMUsage()
    with pytest.raises(LLMError, match="no valid JSON"):
        llm.generate_json("Is the mug next to the kettle?", {"type": "object"}, usage=usage)
    assert usage.calls == 2 and usage.retries == 1 and usage.prompt_chars > 0


def test_local_model_that_cannot_load_is_a_clear_error(tmp_path):
    llm = make_llm(LLMConfig(backend="transformers", model=str(tmp_path / "nothing-here")))
    with pytest.raises(LLMError, match="cannot load local model"):
        llm.generate_json("hi", {"type": "object"})


def test_images_go_at_the_models_size_in_fp16_on_cuda_and_4bit_needs_cuda(llava_dir):
    from vlkng_ros.core.llm.base import BackendUnavailable
    from vlkng_ros.core.perception.transformers_vlm import processor_max_side, torch_dtype

    assert torch_dtype("auto", "cuda:0") == torch.float16  # Turing (RTX 2060) has no bfloat16
    assert torch_dtype("auto", "cpu") == torch.float32
    perceiver = TransformersPerceiver(llava_dir, device="cpu", max_new_tokens=2, max_retries=0)
    assert perceiver.llm.preferred_max_side() == processor_max_side(perceiver.llm.processor) == 32
    seen = []
    original = perceiver.llm._generate_text
    perceiver.llm._generate_text = lambda prompt, images: seen.extend(images) or original(prompt, images)
    with pytest.raises(PerceptionError):
        perceiver.perceive(chunk(2))
    import cv2

    assert cv2.imdecode(np.frombuffer(seen[0], np.uint8), cv2.IMREAD_COLOR).shape[:2] == (24, 32)
    quant = TransformersPerceiver(llava_dir, device="cpu", load_in_4bit=True)
    with pytest.raises(PerceptionError, match="4 bit|bitsandbytes") as e:  # said once, then at once
        quant.perceive(chunk(1))
    assert isinstance(e.value.__cause__, BackendUnavailable)
