"""`vlkng ask` for people: frame files, readable names, where each frame was taken; --json with
paths; --show; quiet library loggers; the warm-up pieces (NumPy MiniLM, the memory's vector cache)."""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from vlkng_ros.cli import main, setup_logging


@pytest.fixture(scope="module")
def mem(built_home, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("askcli") / "mem"
    shutil.copytree(built_home, out)
    shutil.rmtree(out / "cache", ignore_errors=True)
    return out


def test_ask_prints_files_names_and_where(mem, capsys, tmp_path):
    assert main(["-q", "ask", str(mem), "where did I see the fridge?", "--show", str(tmp_path / "show")]) == 0
    out = capsys.readouterr().out
    files = re.findall(r"file:\s+(\S+)", out)
    assert files and all(Path(f).is_file() and Path(f).resolve().is_relative_to((mem / "frames").resolve())
                         for f in files)
    assert "about:  " in out and "fridge" in out.split("about:")[1].splitlines()[0]
    assert re.search(r"tour \S+, \d+:\d\d into it, .*at \(-?\d+\.\d, -?\d+\.\d\) m facing -?\d+ deg", out)
    without_paths = "\n".join(line for line in out.splitlines() if "file:" not in line and "written:" not in line)
    assert not re.search(r"\bobj-[0-9a-f]+", without_paths), "opaque object ids printed"
    assert not re.search(r"\b\d{16,}\b", without_paths), "raw nanosecond stamps printed"
    shown = sorted((tmp_path / "show").glob("frame*.jpg"))
    assert len(shown) == len(files) and all(p.read_bytes()[:2] == b"\xff\xd8" for p in shown)


def test_ask_json_has_paths_and_readable_names(mem, capsys):
    assert main(["-q", "ask", str(mem), "where is the sofa?", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["found"] and "sofa" in d["target_name"]
    for f in d["frames"]:
        assert Path(f["path"]).is_file() and f["where"]["text"].startswith("tour ")
        assert all(not n.startswith("obj-") for n in f["objects"])
    assert all(o["name"] for o in d["evidence_objects"])


def test_library_loggers_stay_below_info():
    setup_logging(0, False)
    for name in ("httpx", "google_genai.models", "httpcore"):
        assert logging.getLogger(name).getEffectiveLevel() > logging.INFO, name
    assert logging.getLogger("vlkng.ask").level == logging.NOTSET  # our own loggers follow -v / -q


def test_numpy_minilm_gives_the_sentence_transformers_vectors():
    pytest.importorskip("sentence_transformers")
    from vlkng_ros.core.embeddings.minilm import MiniLMEmbedder

    texts = ["where is the red kettle?", "fridge", "a white metal fridge. used to: keep food cold", "x",
             "the quick brown fox " * 100]  # the last one is truncated at 256 tokens by both
    a = MiniLMEmbedder(runtime="numpy").embed_texts(texts)
    b = MiniLMEmbedder(runtime="torch").embed_texts(texts)
    assert a.shape == b.shape == (5, 384)
    assert np.abs(a - b).max() < 1e-5


def test_memory_caches_vocabulary_vectors(mem, monkeypatch):
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory

    labels = ["fridge", "sofa", "coffee table"]
    with Memory.open(mem, VlkngConfig()) as m:
        first = m.embed_cached(labels)
        direct = m.text_embedder.embed_texts(labels)
    assert np.allclose(first, direct, atol=1e-6)
    assert m.vector_cache_path.is_file()
    with Memory.open(mem, VlkngConfig()) as m:  # a new process would find them on disk
        monkeypatch.setattr(type(m), "text_embedder", property(lambda _s: pytest.fail("embedded again")))
        again = m.embed_cached(labels[::-1])
    assert np.array_equal(again, first[::-1])
    monkeypatch.undo()
    m.vector_cache_path.write_bytes(b"not an npz")  # a corrupt cache is ignored, not fatal
    with Memory.open(mem, VlkngConfig()) as m:
        assert np.allclose(m.embed_cached(labels), first, atol=1e-6)


def test_a_built_memory_answers_without_embedding_the_found_rules_background(built_home, sim_home, tmp_path,
                                                                            monkeypatch):
    """`vlkng build` leaves the found rule's fixed background lists in the memory's vector cache,
    so a one-shot `vlkng ask` (read-only) embeds only its question: 59 background words in one
    batch made MiniLM load torch, 10-14 s of a 16 s answer on a loaded 2-core machine."""
    from vlkng_ros.core.ask.found import ACTIVITY_BACKGROUND, BACKGROUND
    from vlkng_ros.core.embeddings.minilm import SMALL_BATCH, MiniLMEmbedder

    mem = tmp_path / "mem"
    shutil.copytree(built_home, mem)
    shutil.rmtree(mem / "cache", ignore_errors=True)
    assert main(["-q", "build", str(sim_home), "--memory", str(mem)]) == 0  # a re-run: nothing new
    batches: list[list[str]] = []
    real = MiniLMEmbedder.embed_texts
    monkeypatch.setattr(MiniLMEmbedder, "embed_texts", lambda self, texts: (batches.append(list(texts)), real(self, texts))[1])
    monkeypatch.setattr(MiniLMEmbedder, "_load_torch", lambda self: pytest.fail("torch loaded to answer"))
    assert main(["-q", "ask", str(mem), "where is the kettle?"]) == 0
    assert batches and max(map(len, batches)) <= SMALL_BATCH < len(BACKGROUND)
    assert len(set(BACKGROUND) & {t for b in batches for t in b}) < len(BACKGROUND) // 10  # a label may be one
    assert not set(ACTIVITY_BACKGROUND) & {t for b in batches for t in b}
