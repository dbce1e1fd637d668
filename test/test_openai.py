"""The OpenAI-compatible backends (Ollama, vLLM, llama.cpp, LM Studio) through the real ``openai``
client against a local fake server; failing well (circuit breaker, queued chunks, exit codes);
the perception backend default (auto) and per-backend default models."""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from helpers_openai import FakeOpenAI, Reply
from helpers import write_tour
from vlkng_ros.cli import main as cli_main
from vlkng_ros.core.config import LLMConfig, PerceptionConfig, VlkngConfig
from vlkng_ros.core.llm.base import LLMError, LLMUsage
from vlkng_ros.core.llm.registry import make_llm
from vlkng_ros.core.memory import Memory
from vlkng_ros.core.model import Keyframe
from vlkng_ros.core.perception.base import ChunkInput, PerceptionError, PerceptionNotConfigured, PerceptionUnavailable
from vlkng_ros.core.perception.registry import make_perceiver

KEY = "sk-test-9d1e-never-log-me"
ENV = "VLKNG_TEST_OPENAI_KEY"
W, H = 200, 100
T0 = 1_700_000_000_000_000_000

GOOD = {
    "objects": [
        {"id": "a", "label": "mug", "color": "red", "boxes": [{"image": 0, "box_2d": [100, 250, 500, 750]}]},
        {"id": "b", "label": "table", "boxes": [{"image": 1, "box_2d": [500, 0, 1000, 500]}]},
    ],
    "relations": [{"subject": "a", "predicate": "on", "object": "b", "images": [0]}],
    "places": [{"image": 0, "place": "Kitchen"}],
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pcfg(url: str, **kw) -> PerceptionConfig:
    cfg = PerceptionConfig(backend="openai", model="qwen2.5vl:3b", api_key_env=ENV, base_url=url,
                           timeout_s=5.0, connect_timeout_s=1.0, max_retries=2, retry_backoff_s=0.001)
    for k, v in kw.items():
        setattr(cfg, k, v)
    return cfg


def perceiver(url: str, **kw):
    cfg = VlkngConfig()
    cfg.perception = pcfg(url, **kw)
    return make_perceiver(cfg)


def chunk(n: int = 3) -> ChunkInput:
    rng = np.random.default_rng(0)
    kfs = [Keyframe("t1", T0 + i * 10**9, i, W, H) for i in range(n)]
    return ChunkInput("t1", 0, kfs, [rng.integers(0, 255, (H, W, 3), dtype=np.uint8) for _ in kfs])


@pytest.fixture()
def fake(monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    with FakeOpenAI(api_key=KEY) as server:
        yield server


def test_request_shape_structured_output_and_parsed_graph(fake):
    fake.script = [fake.ok(GOOD, prompt_tokens=2345, completion_tokens=111)]
    g = perceiver(fake.url).perceive(chunk())
    req = fake.requests[0]
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.body["model"] == "qwen2.5vl:3b" and req.body["temperature"] == pytest.approx(0.1)
    assert req.body["response_format"]["type"] == "json_schema"
    assert req.body["response_format"]["json_schema"]["schema"]["required"] == ["objects"]
    assert len(req.images) == 3 and all(i[:2] == b"\xff\xd8" for i in req.images)
    assert req.texts[:2] == ["Image 0:", "Image 1:"] and "box_2d" in req.texts[-1]
    assert [o.label for o in g.objects] == ["mug", "table"]
    assert g.objects[0].boxes[T0] == pytest.approx((50.0, 10.0, 150.0, 50.0))
    assert g.places[T0] == "kitchen" and g.relations[0].predicate == "on"
    cost = g.perception
    assert cost["backend"] == "openai" and cost["model"] == "qwen2.5vl:3b"
    assert (cost["input_tokens"], cost["output_tokens"], cost["calls"]) == (2345, 111, 1)


def test_big_frames_are_downscaled_before_sending(fake):
    fake.script = [fake.ok(GOOD)]
    big = ChunkInput("t1", 0, [Keyframe("t1", T0, 0, 1920, 1080), Keyframe("t1", T0 + 1, 1, 1920, 1080)],
                     [np.zeros((1080, 1920, 3), np.uint8)] * 2)
    perceiver(fake.url, image_max_side=640).perceive(big)
    import cv2

    img = cv2.imdecode(np.frombuffer(fake.requests[0].images[0], np.uint8), cv2.IMREAD_COLOR)
    assert img.shape[:2] == (360, 640)


@pytest.mark.parametrize("bad", [
    FakeOpenAI.ok('{"objects": [{"id": "a", "label": "mug", "boxes": [{"image": 0, "box_2d": [1, 2',
                  finish_reason="length"),
    FakeOpenAI.ok("I see a mug on a table."),
    FakeOpenAI.ok({"things": []}),
    FakeOpenAI.error(500), FakeOpenAI.error(429, "slow down"),
])
def test_bad_answers_are_retried_then_the_good_one_is_used(fake, bad):
    fake.script = [bad, fake.ok("Here you go:\n```json\n" + __import__("json").dumps(GOOD) + "\n```")]
    g = perceiver(fake.url).perceive(chunk())
    assert len(fake.requests) == 2 and [o.label for o in g.objects] == ["mug", "table"]
    assert g.perception["retries"] == 1


def test_persistent_garbage_is_a_perception_error_naming_the_last_problem(fake):
    fake.script = [fake.ok("{\"objects\": [", finish_reason="length")] * 3
    with pytest.raises(PerceptionError, match="max_output_tokens") as e:
        perceiver(fake.url).perceive(chunk())
    assert not isinstance(e.value, PerceptionUnavailable)  # the server works: next chunk may too
    assert len(fake.requests) == 3


def test_timeout_is_retried_then_a_clear_error(fake):
    fake.script = [Reply(200, {}, delay_s=1.5)] * 2
    t = time.monotonic()
    with pytest.raises(PerceptionError, match="timed out"):
        perceiver(fake.url, timeout_s=0.4, max_retries=1).perceive(chunk())
    assert time.monotonic() - t < 3.0


def test_server_without_structured_output_falls_back_to_json_object_then_prompt(monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    with FakeOpenAI(api_key=KEY, json_schema=False, json_object=False) as fake:
        fake.script = [fake.ok(GOOD), fake.ok(GOOD)]
        p = perceiver(fake.url)
        g = p.perceive(chunk())
        p.perceive(chunk())  # the next chunk goes straight to the mode that works
    fmts = [(r.body.get("response_format") or {}).get("type") for r in fake.requests]
    assert fmts == ["json_schema", "json_object", None, None]
    assert '"required":["objects"]' in fake.requests[2].texts[-1]  # the schema went into the prompt
    assert len(g.objects) == 2 and g.perception["retries"] == 0


def test_unreachable_server_opens_the_breaker_within_seconds(caplog):
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    p = perceiver(url, retry_backoff_s=0.05)
    t = time.monotonic()
    with caplog.at_level(logging.ERROR), pytest.raises(PerceptionUnavailable, match="cannot connect") as e:
        p.perceive(chunk())
    assert time.monotonic() - t < 3.0
    assert url in str(e.value) and "ollama serve" in str(e.value)
    t = time.monotonic()
    for _ in range(5):  # every further chunk fails at once, and the reason is logged once
        with pytest.raises(PerceptionUnavailable):
            p.perceive(chunk())
    assert time.monotonic() - t < 0.5
    assert sum("cannot connect" in r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR) == 1


def test_breaker_half_opens_and_closes_when_the_server_comes_back(monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    port = free_port()
    p = perceiver(f"http://127.0.0.1:{port}/v1", breaker_reset_s=0.2, breaker_failures=1)
    with pytest.raises(PerceptionUnavailable):
        p.perceive(chunk())
    with FakeOpenAI(api_key=KEY, port=port) as fake:  # the server comes up
        fake.script = [fake.ok(GOOD)]
        with pytest.raises(PerceptionUnavailable):
            p.perceive(chunk())  # still open: not yet time to try again
        time.sleep(0.25)
        assert len(p.perceive(chunk()).objects) == 2  # the probe got through and closed it
        assert not p.llm.client.breaker.is_open


@pytest.mark.parametrize("status,needle", [(401, ENV), (404, "ollama pull qwen2.5vl:3b")])
def test_rejected_key_or_unknown_model_stops_at_once_and_never_leaks_the_key(fake, caplog, status, needle):
    fake.script = [fake.error(status, "nope")]
    with caplog.at_level(logging.DEBUG), pytest.raises(PerceptionUnavailable, match=needle) as e:
        perceiver(fake.url).perceive(chunk())
    assert len(fake.requests) == 1  # not retried
    assert KEY not in str(e.value) and all(KEY not in r.getMessage() for r in caplog.records)


def test_llm_role_counts_tokens_and_uses_the_schema(fake):
    fake.script = [fake.ok({"answer": "yes"}, prompt_tokens=50, completion_tokens=5)]
    llm = make_llm(LLMConfig(backend="openai", base_url=fake.url, api_key_env=ENV, model="qwen2.5:3b"))
    usage = LLMUsage()
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    assert llm.generate_json("Is the mug on the table?", schema, usage=usage) == {"answer": "yes"}
    assert (usage.input_tokens, usage.output_tokens, usage.calls) == (50, 5, 1)
    assert fake.requests[0].body["messages"][0]["content"] == "Is the mug on the table?"  # plain text
    with pytest.raises(LLMError):
        fake.script = [fake.error(400, "bad request")]
        llm.generate_json("x", schema)


def test_backend_defaults_never_cross_backends(monkeypatch):
    cfg = VlkngConfig()
    cfg.perception.backend = "transformers"
    p = make_perceiver(cfg)  # nothing is loaded until the first chunk
    assert p.llm.model_name == "Qwen/Qwen2-VL-2B-Instruct" and "gemini" not in p.llm.model_name
    cfg.perception.backend = "openai"
    p = make_perceiver(cfg)
    assert p.llm.client.model == "qwen2.5vl:3b" and p.llm.client.base_url == "http://localhost:11434/v1"
    monkeypatch.setenv("GEMINI_API_KEY", "x")
    cfg.perception.backend = "gemini"
    assert make_perceiver(cfg).llm.client.model == "gemini-2.5-flash"
    assert make_llm(LLMConfig(backend="transformers")).model_name == "Qwen/Qwen2.5-1.5B-Instruct"


def test_auto_backend_picks_annotations_then_a_configured_server_else_explains():
    cfg = VlkngConfig()
    assert cfg.perception.backend == "auto"
    assert make_perceiver(cfg, annotations={1: {"objects": []}}).name == "annotations"
    with pytest.raises(PerceptionNotConfigured, match="ollama pull .*--backend gemini.*--backend transformers"):
        make_perceiver(cfg, annotations=None)
    cfg.perception.base_url = "http://robot-gpu:8000/v1"
    assert make_perceiver(cfg).name == "openai"


# --- builds -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bare_tour(tmp_path_factory) -> Path:
    """What a robot records: 40 textured camera frames and no annotations.jsonl."""
    rng = np.random.default_rng(3)
    frames = [(T0 + i * 500_000_000, cv2.resize(rng.integers(0, 255, (12, 16, 3), dtype=np.uint8), (320, 240),
                                               interpolation=cv2.INTER_NEAREST)) for i in range(40)]
    return write_tour(tmp_path_factory.mktemp("bare") / "bare", frames)


def stand_in_vlm(req) -> Reply:
    """Whatever it is shown: one chair in the first image, one table in the last."""
    n = len(req.images)
    return FakeOpenAI.ok({"objects": [
        {"id": "c", "label": "chair", "boxes": [{"image": 0, "box_2d": [400, 100, 900, 300]}]},
        {"id": "t", "label": "table", "boxes": [{"image": n - 1, "box_2d": [500, 400, 900, 900]}]}]},
        prompt_tokens=300 * n + 900, completion_tokens=80)


def test_build_without_annotations_or_model_stops_at_once_with_exit_2(bare_tour, tmp_path, caplog):
    t = time.monotonic()
    with caplog.at_level(logging.ERROR):
        rc = cli_main(["-q", "build", str(bare_tour), "--memory", str(tmp_path / "mem")])
    assert rc == 2 and time.monotonic() - t < 10
    assert not (tmp_path / "mem").exists()  # nothing written, no empty memory
    assert any("--backend" in r.getMessage() and "docs/MODELS.md" in r.getMessage() for r in caplog.records)


def test_build_with_a_dead_server_queues_chunks_then_a_rebuild_finishes(bare_tour, tmp_path, capsys):
    port = free_port()
    mem = tmp_path / "mem"
    args = ["-q", "build", str(bare_tour), "--memory", str(mem), "--backend", "openai",
            "--base-url", f"http://127.0.0.1:{port}/v1", "--set", "perception.retry_backoff_s=0.05"]
    t = time.monotonic()
    assert cli_main(args) == 3  # nothing lost: keyframes stored, every chunk queued
    took = time.monotonic() - t
    cfg = VlkngConfig()
    with Memory.open(mem, cfg) as m:
        kfs = m.graph.count_keyframes()
        assert kfs >= 16 and m.graph.count_objects() == 0 and not m.graph.merged_chunks()
    assert took < 60  # capture of the whole tour + a few seconds of connection attempts
    # the server is up now (same port): the rebuild perceives the queued chunks
    with FakeOpenAI(responder=stand_in_vlm, port=port) as fake:
        capsys.readouterr()
        assert cli_main(args[1:] + ["--json"]) == 0
    import json

    rep = json.loads(capsys.readouterr().out)["tours"][0]
    assert rep["chunks_merged"] == rep["chunks"] == len(rep["chunk_latency_s"]) == len(fake.requests)
    assert rep["input_tokens"] == sum(300 * len(r.images) + 900 for r in fake.requests)
    assert rep["perception_backend"] == "openai" and rep["perception_model"] == "qwen2.5vl:3b"
    with Memory.open(mem, cfg) as m:
        assert m.graph.count_objects() > 0
