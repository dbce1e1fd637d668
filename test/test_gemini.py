"""Gemini backends through the real google-genai client against a local fake Gemini server."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from helpers_gemini import FakeGemini
from vlkng_ros.core.config import LLMConfig, PerceptionConfig, VlkngConfig
from vlkng_ros.core.llm.base import LLMError, LLMUsage
from vlkng_ros.core.llm.gemini import GeminiLLM
from vlkng_ros.core.llm.gemini_client import ModelBlockedError
from vlkng_ros.core.llm.registry import make_llm
from vlkng_ros.core.model import Keyframe
from vlkng_ros.core.perception.base import ChunkInput, PerceptionError
from vlkng_ros.core.perception.gemini import GeminiPerceiver
from vlkng_ros.core.perception.registry import make_perceiver

KEY = "test-key-5f3c9a-never-log-me"
ENV = "VLKNG_TEST_GEMINI_KEY"
W, H = 200, 100
T0 = 1_700_000_000_000_000_000
B = 4


@pytest.fixture()
def fake(monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    with FakeGemini(api_key=KEY) as server:
        yield server


def pcfg(fake: FakeGemini, **kw) -> PerceptionConfig:
    cfg = PerceptionConfig(backend="gemini", model="gemini-test", api_key_env=ENV,
                           base_url=fake.url, timeout_s=5.0, max_retries=2, temperature=0.1)
    for k, v in kw.items():
        setattr(cfg, k, v)
    return cfg


def chunk(n: int = B, missing: tuple[int, ...] = ()) -> ChunkInput:
    rng = np.random.default_rng(0)
    kfs = [Keyframe("t1", T0 + i * 10**9, i, W, H) for i in range(n)]
    imgs = [None if i in missing else rng.integers(0, 255, (H, W, 3), dtype=np.uint8) for i in range(n)]
    return ChunkInput("t1", 3, kfs, imgs)


GOOD = {
    "objects": [
        {"id": "mug_a", "label": "mug", "color": "red", "material": "ceramic", "size": "small",
         "affordances": ["drink from"], "description": "a red mug",
         "boxes": [{"image": 0, "box_2d": [100, 250, 500, 750]},
                   {"image": 2, "box_2d": [0, 0, 1000, 1000]}]},
        {"id": "table_b", "label": "table", "boxes": [{"image": 1, "box_2d": [500, 0, 1000, 500]}]},
    ],
    "relations": [{"subject": "mug_a", "predicate": "on", "object": "table_b", "images": [0, 1]}],
    "places": [{"image": 0, "place": "Kitchen"}],
}


def perceiver(fake, **kw) -> GeminiPerceiver:
    return GeminiPerceiver(pcfg(fake, **kw), backoff_base_s=0.001)


def test_success_request_shape_and_parsed_graph(fake):
    fake.script = [fake.ok(GOOD)]
    cfg = VlkngConfig()
    cfg.perception = pcfg(fake)
    g = make_perceiver(cfg).perceive(chunk())
    assert len(fake.requests) == 1
    req = fake.requests[0]
    assert req.model == "gemini-test"
    assert req.headers["x-goog-api-key"] == KEY
    assert len(req.images) == B and all(img[:2] == b"\xff\xd8" for img in req.images)
    assert "box_2d" in req.texts[-1] and "Image 0:" in req.texts
    gen = req.body["generationConfig"]
    assert gen["responseMimeType"] == "application/json"
    assert gen["temperature"] == pytest.approx(0.1)
    assert "objects" in gen["responseJsonSchema"]["properties"]
    # boxes: [ymin, xmin, ymax, xmax] / 1000 -> pixel (x1, y1, x2, y2)
    mug, table = g.objects
    assert (mug.local_id, mug.label, table.local_id) == ("o1", "mug", "o2")
    assert mug.boxes[T0] == (50.0, 10.0, 150.0, 50.0)
    assert mug.boxes[T0 + 2 * 10**9] == (0.0, 0.0, 200.0, 100.0)
    assert mug.attributes == {"color": "red", "material": "ceramic", "size": "small"}
    assert [(r.subject, r.predicate, r.object, r.stamps) for r in g.relations] == \
        [("o1", "on", "o2", [T0, T0 + 10**9])]
    assert g.places == {T0: "kitchen"} and g.warnings == []


def test_missing_image_is_skipped_and_indices_map_to_the_sent_frames(fake):
    fake.script = [fake.ok({"objects": [{"id": "x", "label": "lamp",
                                         "boxes": [{"image": 1, "box_2d": [0, 0, 500, 500]}]}]})]
    g = perceiver(fake).perceive(chunk(missing=(1,)))
    assert len(fake.requests[0].images) == B - 1
    assert list(g.objects[0].boxes) == [T0 + 2 * 10**9]  # image 1 of the sent = keyframe 2
    assert any("no image" in w for w in g.warnings)


def test_429_then_success_is_retried(fake):
    fake.script = [fake.error(429, "quota"), fake.ok(GOOD)]
    p = perceiver(fake)
    g = p.perceive(chunk())
    assert len(g.objects) == 2 and len(fake.requests) == 2
    assert p.usage.retries == 1 and p.usage.calls == 2


def test_500_retries_then_perception_error(fake):
    fake.script = [fake.error(500)] * 3
    with pytest.raises(PerceptionError, match="500"):
        perceiver(fake, max_retries=2).perceive(chunk())
    assert len(fake.requests) == 3


def test_timeout_is_retried_then_clear_error(fake):
    fake.script = [fake.ok(GOOD, delay_s=1.5), fake.ok(GOOD)]
    g = perceiver(fake, timeout_s=0.4).perceive(chunk())
    assert len(g.objects) == 2 and len(fake.requests) == 2
    fake.script = [fake.ok(GOOD, delay_s=1.5)] * 2
    with pytest.raises(PerceptionError, match="timed out"):
        perceiver(fake, timeout_s=0.4, max_retries=1).perceive(chunk())


def test_truncated_json_is_retried_then_error(fake):
    truncated = '{"objects": [{"id": "o1", "label": "mu'
    fake.script = [fake.ok(truncated, finish_reason="MAX_TOKENS"), fake.ok(GOOD)]
    assert len(perceiver(fake).perceive(chunk()).objects) == 2
    fake.script = [fake.ok(truncated, finish_reason="MAX_TOKENS")] * 3
    with pytest.raises(PerceptionError, match="not valid JSON.*token limit"):
        perceiver(fake).perceive(chunk())


def test_wrong_schema_is_retried_then_error(fake):
    fake.script = [fake.ok({"objects": "a mug and a table"}), fake.ok({"things": []}),
                   fake.ok({"objects": [{"label": "mug"}]})]
    with pytest.raises(PerceptionError, match="does not match the schema"):
        perceiver(fake).perceive(chunk())
    assert len(fake.requests) == 3


@pytest.mark.parametrize("reply", [FakeGemini.safety_stop(), FakeGemini.prompt_blocked()])
def test_safety_block_is_a_clear_error_and_not_retried(fake, reply):
    fake.script = [reply, fake.ok(GOOD)]
    with pytest.raises(PerceptionError, match="SAFETY.*not retried"):
        perceiver(fake).perceive(chunk())
    assert len(fake.requests) == 1


def test_invalid_items_are_dropped_with_warnings(fake):
    bad = {"objects": [
        {"id": "a", "label": "mug", "boxes": [{"image": 0, "box_2d": [0, 0, 100, 100]},
                                             {"image": 9, "box_2d": [0, 0, 100, 100]}]},
        {"id": "b", "label": "", "boxes": [{"image": 0, "box_2d": [0, 0, 100, 100]}]},
        {"id": "c", "label": "ghost", "boxes": [{"image": 1, "box_2d": [1200, 1200, 1500, 1500]}]},
        {"id": "d", "label": "sofa", "boxes": [{"image": 1, "box_2d": [900, 900, 1100, 1100]}]},
    ], "relations": [{"subject": "a", "predicate": "next to", "object": "zzz"},
                     {"subject": "a", "predicate": "next to", "object": "d", "images": [7]}]}
    fake.script = [fake.ok(bad)]
    g = perceiver(fake).perceive(chunk())
    assert [o.label for o in g.objects] == ["mug", "sofa"]
    assert g.objects[1].boxes[T0 + 10**9] == (180.0, 90.0, 200.0, 100.0)  # clipped
    assert [(r.subject, r.object) for r in g.relations] == [("o1", "o2")]
    text = "\n".join(g.warnings)
    for needle in ("image index 9", "missing label", "outside the image", "clipped",
                   "unknown object id(s) ['zzz']", "image index 7"):
        assert needle in text


def test_malformed_top_level_is_an_error(fake):
    fake.script = [fake.ok([1, 2, 3])] * 3
    with pytest.raises(PerceptionError):
        perceiver(fake).perceive(chunk())


def test_missing_api_key_names_the_variable(monkeypatch, fake):
    monkeypatch.delenv(ENV)
    with pytest.raises(PerceptionError, match=ENV):
        perceiver(fake)
    with pytest.raises(LLMError, match=ENV):
        make_llm(LLMConfig(backend="gemini", api_key_env=ENV, base_url=fake.url))


def test_api_key_never_reaches_logs_or_errors(fake, caplog):
    caplog.set_level(logging.DEBUG)
    fake.script = [fake.error(429), fake.error(503), fake.ok("not json")]
    with pytest.raises(PerceptionError) as err:
        perceiver(fake).perceive(chunk())
    fake.script = [fake.error(500), fake.ok(GOOD)]
    perceiver(fake).perceive(chunk())
    assert all(r.headers["x-goog-api-key"] == KEY for r in fake.requests)
    assert "retrying" in caplog.text
    assert KEY not in caplog.text and KEY not in str(err.value)


def test_llm_generate_json_counts_usage(fake):
    fake.script = [fake.error(503), fake.ok({"answer": "the kettle", "frames": [1, 2]})]
    cfg = LLMConfig(backend="gemini", model="gemini-test", api_key_env=ENV, base_url=fake.url,
                    temperature=0.7)
    llm = GeminiLLM(cfg, backoff_base_s=0.001)
    usage = LLMUsage()
    schema = {"type": "object", "properties": {"answer": {"type": "string"},
                                               "frames": {"type": "array", "items": {"type": "integer"}}},
              "required": ["answer"]}
    out = llm.generate_json("Where is the kettle?", schema, usage=usage)
    assert out == {"answer": "the kettle", "frames": [1, 2]}
    assert usage.calls == 2 and usage.retries == 1
    assert usage.prompt_chars == 2 * len("Where is the kettle?")
    assert usage.output_chars == len('{"answer": "the kettle", "frames": [1, 2]}')
    assert fake.requests[-1].body["generationConfig"]["temperature"] == pytest.approx(0.7)
    fake.script = [fake.safety_stop()]
    with pytest.raises(ModelBlockedError):
        llm.generate_json("x", schema)


def test_llm_factory_replaces_the_model_behind_the_perceiver():
    class Scripted:
        def __init__(self):
            self.seen = []

        def generate_json(self, prompt, schema, images=(), usage=None):
            self.seen.append((prompt, len(images)))
            return GOOD

    model = Scripted()
    cfg = VlkngConfig()
    cfg.perception.backend = "gemini"  # no key needed: the factory's model is used instead
    p = make_perceiver(cfg, llm_factory=lambda perception_cfg: model)
    g = p.perceive(chunk())
    assert [o.label for o in g.objects] == ["mug", "table"]
    assert model.seen[0][1] == B and "box_2d" in model.seen[0][0]


def test_unreachable_gemini_stops_within_seconds_not_per_chunk_retries(monkeypatch):
    import socket
    import time

    from vlkng_ros.core.perception.base import PerceptionUnavailable

    monkeypatch.setenv(ENV, KEY)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    cfg = PerceptionConfig(backend="gemini", model="gemini-test", api_key_env=ENV,
                           base_url=f"http://127.0.0.1:{port}/", timeout_s=5.0, max_retries=4)
    p = GeminiPerceiver(cfg, backoff_base_s=0.05)
    t = time.monotonic()
    with pytest.raises(PerceptionUnavailable, match="cannot connect"):
        p.perceive(chunk())
    with pytest.raises(PerceptionUnavailable):
        p.perceive(chunk())  # the next chunk: at once
    assert time.monotonic() - t < 5.0
