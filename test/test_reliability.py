"""Nothing lost, nothing invented (issue 11): tour identity, read-only readers, stores that agree,
honest exit codes and one-line errors. Tiny generated tours keep this module quick."""

from __future__ import annotations

import errno
import json
import logging
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vlkng_ros.cli import error_line
from vlkng_ros.cli import main as cli_main
from vlkng_ros.core.config import VlkngConfig
from vlkng_ros.core.memory import Memory, MemoryNotFound
from vlkng_ros.core.pipeline import build_tour
from vlkng_ros.core.stores.base import StoreError
from vlkng_ros.eval.sim import generate_tour


def _tiny(out: Path, seed: int) -> Path:
    generate_tour(out, minutes=0.2, seed=seed, width=320, height=240, log_progress=False)
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, Path]:
    """Two different tiny tours in folders of the same name, and one built memory (A)."""
    root = tmp_path_factory.mktemp("rel")
    a, b = _tiny(root / "A" / "home", 1), _tiny(root / "B" / "home", 2)
    mem = root / "memA"
    cfg = VlkngConfig()
    with Memory.open(mem, cfg) as m:
        build_tour(a, m, cfg, progress=False)
    return {"A": a, "B": b, "memA": mem, "root": root}


def _copy_mem(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".lock"))
    return dst


def _stats(mem: Path, capsys, *extra: str) -> dict:
    capsys.readouterr()
    assert cli_main(["-q", "stats", str(mem), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


# --- 1. tour identity ---------------------------------------------------------------------------
def test_same_named_folder_with_another_tour_is_built_not_skipped(tiny, tmp_path, capsys):
    mem = _copy_mem(tiny["memA"], tmp_path / "mem")
    before = _stats(mem, capsys)
    assert cli_main(["-q", "build", str(tiny["B"]), "--memory", str(mem), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)["tours"][0]
    assert rep["chunks_merged"] == rep["chunks"] > 0 and rep["tour_id"] != "home"
    after = _stats(mem, capsys)  # stats on two same-named tours: no crash (was a TypeError)
    assert after["tours"] == 2 and after["keyframes"] > before["keyframes"]
    # the same tour again, even copied to a folder with another name: a no-op
    renamed = tmp_path / "elsewhere" / "renamed tour"
    shutil.copytree(tiny["A"], renamed)
    for tour in (tiny["A"], renamed, tiny["B"]):
        assert cli_main(["-q", "build", str(tour), "--memory", str(mem), "--json"]) == 0
        rep = json.loads(capsys.readouterr().out)["tours"][0]
        assert rep["chunks_merged"] == 0 and rep["keyframes"] > 0
    assert _stats(mem, capsys)["keyframes"] == after["keyframes"]


def test_tour_id_option_names_validates_and_refuses_other_content(tiny, tmp_path, capsys):
    mem = tmp_path / "mem"
    assert cli_main(["-q", "build", str(tiny["A"]), "--memory", str(mem), "--tour-id", "kitchen_run.1"]) == 0
    assert _stats(mem, capsys)["tour_ids"] == ["kitchen_run.1"]
    # another tour under that name is refused, nothing added
    assert cli_main(["-q", "build", str(tiny["B"]), "--memory", str(mem), "--tour-id", "kitchen_run.1"]) == 1
    assert _stats(mem, capsys)["tours"] == 1
    # an invalid name is refused before any work: no memory is created
    fresh = tmp_path / "fresh"
    assert cli_main(["-q", "build", str(tiny["A"]), "--memory", str(fresh), "--tour-id", "../x"]) == 1
    assert not fresh.exists()
    # so is an invalid namespace
    assert cli_main(["-q", "build", str(tiny["A"]), "--memory", str(fresh), "--set",
                     "stores.namespace=bad name"]) == 1
    assert not fresh.exists()


def test_tour_path_with_spaces_and_unicode_builds(tiny, tmp_path, capsys):
    odd = tmp_path / "tours é" / "Küche tour #2"
    shutil.copytree(tiny["A"], odd)
    mem = tmp_path / "mém ory"
    assert cli_main(["-q", "build", str(odd), "--memory", str(mem)]) == 0
    stats = _stats(mem, capsys)
    assert stats["tour_ids"] == ["Kuche_tour_2"] and stats["keyframes"] > 0
    assert stats["association"]["f1"] is not None  # the remembered path is found again


# --- 4. readers never create a memory ---------------------------------------------------------
@pytest.mark.parametrize("command", [["stats"], ["export"], ["ask", "where is the sofa?"]])
def test_read_commands_never_create_a_memory(tiny, tmp_path, command, caplog):
    target = tmp_path / "tour-folder"
    shutil.copytree(tiny["A"], target)
    listing = sorted(p.name for p in target.iterdir())
    with caplog.at_level(logging.ERROR):
        assert cli_main(["-q", command[0], str(target), *command[1:]]) == 1
    assert "no vlkng memory at" in caplog.text
    assert sorted(p.name for p in target.iterdir()) == listing
    assert cli_main(["-q", command[0], str(tmp_path / "typo"), *command[1:]]) == 1
    assert not (tmp_path / "typo").exists()


def test_zero_byte_graph_is_an_error_not_an_empty_memory(tmp_path, caplog):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "graph.sqlite").write_bytes(b"")
    with caplog.at_level(logging.ERROR):
        assert cli_main(["-q", "stats", str(tmp_path / "m")]) == 1
    assert "empty (0 bytes)" in caplog.text
    with pytest.raises(MemoryNotFound):
        Memory.open(tmp_path / "nothing", VlkngConfig(), read_only=True)


def test_memory_path_that_is_a_file_is_one_line(tiny, tmp_path, caplog):
    f = tmp_path / "file"
    f.write_text("x")
    with caplog.at_level(logging.ERROR):
        assert cli_main(["-q", "build", str(tiny["A"]), "--memory", str(f)]) == 1
        assert cli_main(["-q", "stats", str(f)]) == 1
    assert "is a file" in caplog.text and "Traceback" not in caplog.text


# --- 3. stores agree ----------------------------------------------------------------------------
def test_namespace_scopes_the_graph_too(tiny, tmp_path, capsys):
    mem = _copy_mem(tiny["memA"], tmp_path / "mem")
    alone = _stats(mem, capsys)
    assert cli_main(["-q", "build", str(tiny["B"]), "--memory", str(mem), "--set", "stores.namespace=site2"]) == 0
    default = _stats(mem, capsys)
    site2 = _stats(mem, capsys, "--set", "stores.namespace=site2")
    assert (default["objects"], default["keyframes"], default["tours"]) == \
        (alone["objects"], alone["keyframes"], alone["tours"])
    assert site2["tours"] == 1 and site2["keyframes"] > 0 and site2["tour_ids"] == ["home"]
    assert cli_main(["-q", "stats", str(mem), "--set", "stores.namespace=site3"]) == 1  # no such memory


def _ask(mem: Path, question: str, capsys, *extra: str) -> dict:
    capsys.readouterr()
    assert cli_main(["-q", "ask", str(mem), question, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _present_label(mem: Path) -> str:
    with Memory.open(mem, VlkngConfig(), read_only=True) as m:
        return max(m.graph.iter_objects(), key=lambda o: len(o.observations)).label


def test_lost_or_foreign_vectors_are_reindexed_not_silently_degraded(tiny, tmp_path, capsys):
    mem = _copy_mem(tiny["memA"], tmp_path / "mem")
    label = _present_label(mem)
    good = _ask(mem, f"where is the {label}?", capsys)
    assert good["found"]
    shutil.rmtree(mem / "qdrant")
    lost = _ask(mem, f"where is the {label}?", capsys)  # read-only: re-indexed for the session
    assert lost["found"] and lost["target_object_id"] == good["target_object_id"]
    # a writer (build) re-indexes for good; another embedder gets its own vectors
    assert cli_main(["-q", "build", str(tiny["A"]), "--memory", str(mem)]) == 0
    cfg = VlkngConfig()
    with Memory.open(mem, cfg) as m:
        assert m.vectors.count(m.text_collection) == m.graph.count_objects() > 0
        assert m.graph.get_meta("text_embedder:default") == m.text_embedder.name
    other = _ask(mem, f"where is the {label}?", capsys, "--set", "embeddings.text_backend=hashing")
    assert other["evidence_objects"]


def test_older_memory_without_spatial_index_gets_it_backfilled(tiny, tmp_path):
    mem = _copy_mem(tiny["memA"], tmp_path / "mem")
    con = sqlite3.connect(mem / "graph.sqlite")
    con.execute("DROP TABLE objects_rtree")
    con.execute("DELETE FROM store_info WHERE key = 'spatial_index'")
    con.commit()
    con.close()
    with Memory.open(mem, VlkngConfig()) as m:
        placed = [o for o in m.graph.iter_objects() if o.position is not None]
        assert placed
        o = placed[0]
        assert o.id in {n.id for n in m.graph.objects_near(o.position[0], o.position[1], 0.01)}
        plan = " | ".join(m.graph.explain_objects_near())
        assert ("VIRTUAL TABLE INDEX" if m.graph.spatial == "rtree" else "objects_by_xy") in plan, plan


# --- 6. concurrent and read-only use ------------------------------------------------------------
def test_readers_share_a_memory_with_a_writer_and_each_other(tiny, tmp_path):
    mem = _copy_mem(tiny["memA"], tmp_path / "mem")
    cfg = VlkngConfig()
    with Memory.open(mem, cfg) as writer:  # build/run holds the memory (and Qdrant's folder lock)
        readers = [Memory.open(mem, cfg, read_only=True) for _ in range(3)]
        try:
            for r in readers:
                assert r.graph.count_objects() == writer.graph.count_objects() > 0
                assert r.vectors.count(r.text_collection) > 0
        finally:
            for r in readers:
                r.close()


def _cli(*args: str) -> subprocess.Popen:
    """A real ``vlkng`` process (its own Python, its own store clients and locks)."""
    return subprocess.Popen([sys.executable, "-m", "vlkng_ros.cli", "-q", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _answers(procs: list[subprocess.Popen]) -> list[dict]:
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        assert p.returncode == 0, stderr[-2000:]
        out.append(json.loads(stdout))
    return out


def test_concurrent_ask_processes_and_an_ask_during_a_build(tiny, tmp_path):
    """Several ``vlkng ask`` processes on one memory all answer (today's main: 3 of 4 failed on
    the Qdrant folder lock), and they answer while a ``vlkng build`` process writes into it."""
    mem = _copy_mem(tiny["memA"], tmp_path / "mem")
    label = _present_label(mem)
    question = f"where is the {label}?"
    for res in _answers([_cli("ask", str(mem), question, "--json") for _ in range(4)]):
        assert res["success"] and res["found"] and res["goal"] is not None

    longer = tmp_path / "long" / "home"  # a tour whose build outlasts the asks
    generate_tour(longer, minutes=2.5, seed=3, width=320, height=240, log_progress=False)
    build = _cli("build", str(longer), "--memory", str(mem), "--json")
    try:
        lock = mem / "qdrant" / ".lock"  # the build holds the vector store
        deadline = time.monotonic() + 120
        while build.poll() is None and not lock.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        asks = [_cli("ask", str(mem), question, "--json") for _ in range(2)]
        answers = _answers(asks)
        during = build.poll() is None
        stdout, stderr = build.communicate(timeout=600)
    finally:
        if build.poll() is None:
            build.kill()
    assert build.returncode == 0, stderr[-2000:]
    assert during, "the build ended before the asks did: the tour is too short to test this"
    for res in answers:
        assert res["success"] and res["found"], res["message"]


def test_read_only_memory_can_be_asked_and_exported(tiny, tmp_path, capsys):
    mem = _copy_mem(tiny["memA"], tmp_path / "mem")
    for p in [mem, *mem.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        if os.access(mem, os.W_OK):
            pytest.skip("running as root: permissions do not make a folder read-only")
        label = _present_label(mem)
        assert _ask(mem, f"where is the {label}?", capsys)["found"]
        assert cli_main(["-q", "export", str(mem), "-o", str(tmp_path / "g.json")]) == 0
    finally:
        for p in [mem, *mem.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)


def test_read_only_graph_opening_on_a_read_only_folder(tiny, tmp_path, monkeypatch):
    """Root ignores permissions; the read-only folder is simulated for the graph's opening."""
    mem = _copy_mem(tiny["memA"], tmp_path / "mem")
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if mode == os.W_OK else real(p, mode, **kw))
    with Memory.open(mem, VlkngConfig(), read_only=True) as m:
        assert m.graph.count_objects() > 0
        with pytest.raises(StoreError, match="read-only"):
            m.graph.set_meta("x", "y")


# --- 6. honest exits and one-line errors --------------------------------------------------------
def test_disk_full_is_one_line(tiny, tmp_path, monkeypatch, caplog):
    from vlkng_ros.core.stores.frame_store import FileFrameStore

    def full(self, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "mem" / "frames" / "x.jpg"))

    monkeypatch.setattr(FileFrameStore, "put", full)
    with caplog.at_level(logging.ERROR):
        assert cli_main(["-q", "build", str(tiny["A"]), "--memory", str(tmp_path / "mem")]) == 1
    assert "disk full" in caplog.text and "Traceback" not in caplog.text
    assert error_line(sqlite3.OperationalError("database or disk is full")).startswith("disk full")
    assert error_line(StoreError("cannot open Qdrant at x: database or disk is full")).startswith("disk full")


def test_read_only_parent_and_unreachable_server_are_one_line(tiny, tmp_path, caplog):
    with caplog.at_level(logging.ERROR):
        assert cli_main(["-q", "stats", str(tiny["memA"]), "--set", "stores.qdrant_url=http://127.0.0.1:9"]) == 1
    assert "cannot open Qdrant at http://127.0.0.1:9" in caplog.text
    assert error_line(PermissionError(errno.EACCES, "Permission denied", "/ro/mem")).startswith("cannot write")


def test_neo4j_password_in_uri_is_never_printed(tiny, tmp_path, monkeypatch, capsys, caplog):
    pytest.importorskip("neo4j")
    monkeypatch.setenv("VLKNG_NEO4J_PASSWORD", "envsecret")
    with caplog.at_level(logging.DEBUG):
        rc = cli_main(["-vv", "build", str(tiny["A"]), "--memory", str(tmp_path / "mem"),
                       "--set", "stores.graph_backend=neo4j",
                       "--set", "stores.neo4j_uri=bolt://neo4j:hunter2secret@127.0.0.1:9"])
    out = capsys.readouterr()
    assert rc == 1
    text = caplog.text + out.out + out.err
    assert "hunter2secret" not in text and "envsecret" not in text and "neo4j:***@" in text


def test_api_key_over_plain_http_to_another_host_warns(caplog):
    from vlkng_ros.core.stores.registry import warn_plain_http_key

    with caplog.at_level(logging.WARNING):
        assert warn_plain_http_key("http://qdrant.example.org:6333", "k")
        assert not warn_plain_http_key("https://qdrant.example.org", "k")
        assert not warn_plain_http_key("http://localhost:6333", "k")
        assert not warn_plain_http_key("http://qdrant.example.org:6333", None)
    assert caplog.text.count("plain http") == 1


def test_build_exit_codes_for_damaged_and_unreadable_tours(sim_home, tiny, tmp_path, caplog):
    cut = tmp_path / "cut"
    shutil.copytree(sim_home, cut)  # several MCAP chunks: a cut keeps the first ones
    mcap = next((cut / "bag").glob("*.mcap"))
    data = mcap.read_bytes()
    mcap.write_bytes(data[: int(len(data) * 0.3)])
    with caplog.at_level(logging.WARNING):
        assert cli_main(["-q", "build", str(cut), "--memory", str(tmp_path / "m1")]) == 4
    assert "frames recovered" in caplog.text
    junk = tmp_path / "junk"
    shutil.copytree(tiny["A"], junk)
    mcap = next((junk / "bag").glob("*.mcap"))
    mcap.write_bytes(mcap.read_bytes()[:600])  # header, schemas: no frame survives
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        assert cli_main(["-q", "build", str(junk), "--memory", str(tmp_path / "m2")]) == 1
    assert "0 frames" in caplog.text


# --- 2. nothing invented: absent objects are not found --------------------------------------------
def test_absent_objects_are_not_found_and_get_no_goal(tiny):
    """The issue's examples (kettle, toilet, stove where this world lacks them) are not found,
    get no goal and no frames; most absent things are not found and present ones are. The rate
    is measured on larger tours by bench/bench_absent.py (docs/RESULTS.md)."""
    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.core.ask.types import AskRequest
    from vlkng_ros.eval.absent import presence_questions

    qs = presence_questions(tiny["A"])
    absent = [q for q in qs if not q.present]
    examples = [q for q in absent if q.target in ("kettle", "toilet", "stove", "piano", "bicycle")]
    assert examples
    from vlkng_ros.eval.sim.catalog import CLASSES

    # asked by the name perception gives them; synonyms only an embedding relates ("light" for a
    # lamp) are the bench's curve, where the rule trades them against false founds
    present = [q for q in qs if q.present and q.target in CLASSES][:8]
    cfg = VlkngConfig()
    with Memory.open(tiny["memA"], cfg, read_only=True) as m:
        engine = AskEngine(m, cfg)
        for q in examples:
            res = engine.ask(AskRequest(q.question, [], 3))
            assert res.success and not res.found, (q.question, res.answer, res.target_object_id)
            assert res.goal is None and res.frames == [] and res.target_object_id == ""
            assert res.answer.startswith("I have not seen")
        others = [engine.ask(AskRequest(q.question, [], 3)) for q in absent[::3]]
        hits = [engine.ask(AskRequest(q.question, [], 3)) for q in present]
    assert sum(r.found for r in others) <= 0.25 * len(others) + 1
    assert sum(r.found and r.goal is not None for r in hits) >= len(present) - 1, \
        [(q.question, r.answer) for q, r in zip(present, hits) if not r.found]


@pytest.fixture(scope="module")
def home_memory(tmp_path_factory) -> Path:
    """A hand-built memory: what was seen is known exactly, so the words asked can be chosen."""
    return _hand_built(tmp_path_factory.mktemp("found") / "mem", [
        {"id": "o-sofa", "label": "sofa", "description": "a large blue fabric sofa",
         "affordances": ["sit on", "lie on"], "position": (1.0, 1.0), "seen": [1, 2, 3]},
        {"id": "o-basket", "label": "laundry basket", "description": "a white plastic laundry basket",
         "affordances": ["put clothes in"], "position": (4.0, 0.5), "seen": [4, 5]},
        {"id": "o-table", "label": "coffee table", "description": "a low glass coffee table",
         "affordances": ["put things on"], "position": (1.5, 2.0), "seen": [2, 3, 6]},
        {"id": "o-kettle", "label": "electric kettle", "description": "a steel electric kettle",
         "affordances": ["boil water", "pour"], "position": (6.0, 1.0), "seen": [7, 8]},
        {"id": "o-bag", "label": "bag", "description": "a red fabric bag",
         "affordances": ["carry things"], "position": (3.0, 3.0), "seen": [9, 10]},
    ])


def _hand_built(path: Path, specs: list[dict]) -> Path:
    """A memory at ``path`` holding exactly these objects (helpers_ask.add_objects)."""
    from helpers_ask import add_objects, make_memory

    with make_memory(path) as m:
        add_objects(m, specs)
    return path


def _ask_home(path: Path, question: str):
    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.core.ask.types import AskRequest

    cfg = VlkngConfig()
    with Memory.open(path, cfg, read_only=True) as m:
        return AskEngine(m, cfg).ask(AskRequest(question, [], 3))


@pytest.mark.parametrize("question,expected", [
    ("where is the sofa?", "o-sofa"),
    ("take me to the couch", "o-sofa"),  # a synonym the lexicon knows
    ("have you seen my hamper?", "o-basket"),  # what was seen is a kind of what is asked
    ("where is the table?", "o-table"),  # the asked word is the seen label's head noun
    ("where did you see a kettle?", "o-kettle"),
    ("where can I boil water?", "o-kettle"),  # an activity: the affordance decides
])
def test_present_things_are_found_with_a_goal(home_memory, question, expected):
    res = _ask_home(home_memory, question)
    assert res.success and res.found, (question, res.answer)
    assert res.target_object_id == expected and res.goal is not None and res.frames


@pytest.mark.parametrize("question", [
    "where is the piano?", "take me to the bicycle", "have you seen my toothbrush?",
    "where is '; DROP TABLE objects; --?",  # the word "table" inside junk grounds nothing
    "where is blorptangle?", "where is the quantum flux capacitor?",
])
def test_absent_and_junk_are_not_found(home_memory, question):
    res = _ask_home(home_memory, question)
    assert res.success and not res.found, (question, res.answer, res.target_object_id)
    assert res.goal is None and res.frames == [] and res.target_object_id == ""


def test_a_related_thing_is_offered_in_words_never_as_a_goal(home_memory):
    """"suitcase" is one of "bag"'s rarer senses: the bag seen is offered in the answer text, and
    the robot is given no goal to drive to."""
    res = _ask_home(home_memory, "where is my suitcase?")
    assert res.success and not res.found and res.goal is None and res.target_object_id == ""
    assert res.answer.startswith("I have not seen") and "bag" in res.answer


@pytest.fixture(scope="module")
def synonym_memory(tmp_path_factory) -> Path:
    """Things whose everyday names the embedder alone does not tie to the label seen."""
    return _hand_built(tmp_path_factory.mktemp("found2") / "mem", [
        {"id": "o-apple", "label": "apple", "description": "a green apple",
         "affordances": ["eat"], "position": (1.0, 1.0), "seen": [1, 2]},
        {"id": "o-light", "label": "light", "description": "a tall white light",
         "affordances": ["switch on"], "position": (3.0, 1.0), "seen": [3, 4]},
        {"id": "o-toilet", "label": "toilet", "description": "a white toilet",
         "affordances": ["flush"], "position": (5.0, 2.0), "seen": [5, 6]},
    ])


@pytest.mark.parametrize("question,expected", [
    ("where is the fruit?", "o-apple"),  # an apple is an edible fruit, a fruit: two steps up
    ("where is the WC?", "o-toilet"),  # WordNet writes it "w.c.", a name for toilet
    ("take me to the lamp", "o-light"),  # lamp and light source: definitions alike
])
def test_synonyms_found_through_the_lexicon(synonym_memory, question, expected):
    res = _ask_home(synonym_memory, question)
    assert res.success and res.found, (question, res.answer)
    assert res.target_object_id == expected and res.goal is not None


@pytest.mark.parametrize("question", [
    "where is the pear?", "where is the candle?", "where is the bathtub?", "where is the banana?",
    "where is the fireplace?",
])
def test_related_but_other_things_stay_not_seen(synonym_memory, question):
    res = _ask_home(synonym_memory, question)
    assert res.success and not res.found, (question, res.answer, res.target_object_id)
    assert res.goal is None


def _memory_fixture(folder: str, specs: list[dict]):
    """A module-scoped fixture: a hand-built memory holding ``specs``."""
    return pytest.fixture(scope="module")(lambda tmp_path_factory: _hand_built(tmp_path_factory.mktemp(folder) / "mem", specs))


def _things(*rows: tuple) -> list[dict]:
    """Object specs from (id, label, description, affordances, position, keyframes seen) rows."""
    keys = ("id", "label", "description", "affordances", "position", "seen")
    return [dict(zip(keys, row)) for row in rows]


def _assert_found(path: Path, question: str, expected: str) -> None:
    res = _ask_home(path, question)
    assert res.success and res.found, (question, res.answer)
    assert res.target_object_id == expected and res.goal is not None


def _assert_not_seen(path: Path, question: str) -> None:
    res = _ask_home(path, question)
    assert res.success and not res.found, (question, res.answer, res.target_object_id)
    assert res.goal is None and res.target_object_id == ""


# a lamp, and a towel whose use ("dry hands with") is what another thing is named for
sense_memory = _memory_fixture("found3", _things(
    ("o-lamp", "lamp", "a small white lamp", ["give light", "read by"], (1.0, 1.0), [1, 2]),
    ("o-towel", "towel", "a white cotton towel", ["dry hands with"], (4.0, 2.0), [3, 4]),
    ("o-sofa", "sofa", "a large gray sofa", ["sit on"], (2.0, 5.0), [5, 6]),
))


def test_a_phrase_is_read_in_its_household_sense_too(sense_memory):
    """"Light" is first electromagnetic radiation to WordNet, then "any device serving as a source
    of illumination", which is how it defines a lamp: the phrase's first sense that is a thing
    counts (the embedding alone puts light and lamp 0.20 over background, under the margin)."""
    _assert_found(sense_memory, "where is the light?", "o-lamp")


@pytest.mark.parametrize("question", [
    "where is the hand dryer?",  # a towel is used to dry hands with; it is no hand dryer
    "where is the window?", "where is the chandelier?", "where is the fireplace?",
])
def test_things_sharing_a_sense_or_a_use_stay_not_seen(sense_memory, question):
    _assert_not_seen(sense_memory, question)


# a light (a lamp by definition), a coffee table and a desk: heads of compounds
compound_memory = _memory_fixture("found3c", _things(
    ("o-light", "light", "a small black light", ["switch on"], (1.0, 1.0), [1, 2]),
    ("o-table", "coffee table", "a low wood coffee table", ["put things on"], (3.0, 2.0), [3, 4]),
    ("o-desk", "desk", "a large black desk", ["work at"], (5.0, 1.0), [5, 6]),
))


def test_a_compound_the_lexicon_lacks_is_matched_through_its_head(compound_memory):
    """"Desk lamp" is no WordNet entry; a desk lamp is a lamp, and "lamp" and "light" are defined
    alike (a source of illumination): the head's definition stands in for the compound's."""
    _assert_found(compound_memory, "where is the desk lamp?", "o-light")


@pytest.mark.parametrize("question", [
    "where is the bedside table?",  # the coffee table is another kind of table; a desk is not defined as one
    "where is the ceiling fan?", "where is the picture frame?",
])
def test_a_compound_whose_head_matches_nothing_stays_not_seen(compound_memory, question):
    _assert_not_seen(compound_memory, question)


@pytest.mark.parametrize("question", ["where is the lamp shade?", "Where did we pass the white lampshade?"])
def test_a_part_is_found_where_the_whole_it_serves_was_seen(compound_memory, question):
    """A lampshade is a lamp's part only and its definition names the light it screens ("a ...
    shade used to screen a light bulb"); the simulator's worlds name their lamps so too (read
    generated tour 721: "the white lampshade", a lamp seen as "light", had no goal). The robot is
    sent to the light: the shade was seen on it."""
    _assert_found(compound_memory, question, "o-light")


@pytest.mark.parametrize("question", [
    "where is the coffee machine?",  # shares "coffee" with the coffee table seen; a machine is no table
    "take me to the desk drawer",  # a drawer is part of a desk, not the desk: the robot would drive there
    "where is the coffee mug?",
])
def test_a_compound_sharing_only_a_modifier_is_not_found(compound_memory, question):
    _assert_not_seen(compound_memory, question)


@pytest.mark.parametrize("question,expected", [
    ("where is the computer desk?", "o-desk"),  # same head: a kind of desk
    ("take me to the coffee table", "o-table"),
])
def test_a_compound_with_the_labels_head_stays_found(compound_memory, question, expected):
    _assert_found(compound_memory, question, expected)


# an exercise bike and a coffee table: a compound with another head than the label's may still
# name what the label is a kind of
kind_memory = _memory_fixture("found4k", _things(
    ("o-bike", "exercise bike", "a black stationary exercise bike", ["work out on"], (1.0, 1.0), [1, 2]),
    ("o-table", "coffee table", "a low wood coffee table", ["put things on"], (3.0, 2.0), [3, 4]),
))


def test_a_compound_naming_what_the_label_is_a_kind_of_is_found(kind_memory):
    """An exercise bike is an "exercise device" (WordNet): "exercise equipment" (an OpenEQA
    question) names it, though its head is not the label's."""
    _assert_found(kind_memory, "In which room does this home have exercise equipment?", "o-bike")


@pytest.mark.parametrize("question", ["where is the coffee machine?", "where is the exercise mat?"])
def test_what_the_label_is_a_kind_of_does_not_find_another_thing(kind_memory, question):
    _assert_not_seen(kind_memory, question)


# a sofa to watch TV from and an alarm clock to tell the time by
time_memory = _memory_fixture("found4t", _things(
    ("o-sofa", "sofa", "a large gray fabric sofa", ["sit on", "lie down on", "watch TV from"], (1.0, 1.0), [1, 2]),
    ("o-clock", "alarm clock", "a small black alarm clock", ["tell the time", "wake up with"], (5.0, 2.0), [3, 4]),
))


def test_something_that_shows_the_time_is_the_clock(time_memory):
    """"the time" was dropped as a function word: "something that shows" sent the robot to the
    sofa (watch TV from) on a generated tour."""
    _assert_found(time_memory, "Where did I see something that shows the time?", "o-clock")


# a cushion on an armchair, a fridge, a nightstand, a school bag: noun phrases whose first word is
# also a verb, relative clauses, names written as one word or two
parse_memory = _memory_fixture("found4p", _things(
    ("o-cushion", "cushion", "a pink square cushion", ["lean on"], (1.0, 1.0), [1, 2]),
    ("o-armchair", "armchair", "a gray fabric armchair", ["sit on"], (1.2, 1.5), [2, 3]),
    ("o-fridge", "fridge", "a tall white fridge", ["keep food cold", "store drinks"], (5.0, 1.0), [4, 5]),
    ("o-nightstand", "nightstand", "a small wood nightstand", ["put things on"], (8.0, 1.0), [6, 7]),
    ("o-bag", "school bag", "a blue school bag", ["carry books"], (8.0, 4.0), [8, 9]),
))


@pytest.mark.parametrize("question,expected", [
    # "scatter" is a verb too; after "the" and a colour it is a noun phrase: a cushion, not an
    # activity the armchair serves
    ("Where can I find the pink scatter cushion?", "o-cushion"),
    ("Which room was I in when I first noticed the pink scatter cushion?", "o-cushion"),
    # "that" after "something" starts a relative clause: an activity, not a thing named "keeps food cold"
    ("Where did I see something that keeps food cold?", "o-fridge"),
    # one word or two, the same name (the embedding alone: "night stand" 0.17 over background)
    ("where is the night stand?", "o-nightstand"),
    ("where is my schoolbag?", "o-bag"),
])
def test_noun_phrases_relative_clauses_and_spellings_are_read_as_meant(parse_memory, question, expected):
    _assert_found(parse_memory, question, expected)


# a white lamp, and a black one the detector called a "light"
colour_memory = _memory_fixture("colour", [
    {"id": "o-lamp", "label": "lamp", "description": "a medium white metal lamp", "attributes": {"color": "white"},
     "affordances": ["give light", "read by"], "position": (8.0, 7.1), "seen": [1, 2, 3]},
    {"id": "o-light", "label": "light", "description": "a medium black metal light", "attributes": {"color": "black"},
     "affordances": ["give light", "read by"], "position": (10.2, -3.1), "seen": [30, 31]},
])


@pytest.mark.parametrize("question,expected", [
    ("Which room was I in when I first noticed the black lamp?", "o-light"),
    ("Where is the black lamp?", "o-light"),
    ("Where is the white lamp?", "o-lamp"),
    ("Where is the lamp?", "o-lamp"),
])
def test_a_named_thing_of_another_colour_is_not_the_one_asked_for(colour_memory, question, expected):
    """"The black lamp": a white lamp is named by the word but not the thing asked for when a
    black light was seen too (a generated tour sent the robot 9.5 m to the white one)."""
    _assert_found(colour_memory, question, expected)


# a blue cup, and a yellow mug perception saw once yellow and once green (remembered green by the
# tie's order); a black shelf once called a bookcase, and a white one never called so
instance_memory = _memory_fixture("instance", [
    {"id": "o-cup", "label": "cup", "description": "a small blue ceramic cup", "attributes": {"color": "blue"},
     "labels_seen": ["cup", "mug"], "label_votes": {"cup": 2, "mug": 1}, "attribute_votes": {"color": {"blue": 3}},
     "affordances": ["drink from", "hold"], "position": (8.9, 4.8), "seen": [1, 2, 3, 4, 5, 6]},
    {"id": "o-mug", "label": "mug", "description": "a small green ceramic mug", "attributes": {"color": "green"},
     "label_votes": {"mug": 2}, "attribute_votes": {"color": {"green": 1, "yellow": 1}},
     "affordances": ["drink from", "hold"], "position": (-0.1, -1.6), "seen": [20, 21, 22]},
    {"id": "o-black-shelf", "label": "shelf", "description": "a large black wood shelf", "attributes": {"color": "black"},
     "labels_seen": ["shelf", "bookcase"], "label_votes": {"shelf": 4, "bookcase": 1},
     "attribute_votes": {"color": {"black": 4, "silver": 1}},
     "affordances": ["store books on", "put things on"], "position": (3.0, 2.0), "seen": [30, 31, 32, 33, 34]},
    {"id": "o-white-shelf", "label": "shelf", "description": "a large white wood shelf", "attributes": {"color": "white"},
     "label_votes": {"shelf": 3}, "attribute_votes": {"color": {"white": 3}},
     "affordances": ["store books on", "put things on"], "position": (5.7, -2.3), "seen": [40, 41, 42]},
])


@pytest.mark.parametrize("question,expected", [
    # a colour seen as often as the remembered one is one the object was seen in
    ("Where is the yellow cup?", "o-mug"),
    ("Where was I when I first saw the yellow cup?", "o-mug"),
    ("Where is the blue cup?", "o-cup"),
    # the asked colour chooses among the shelves, though only the black one was called a bookcase
    ("Where was the white bookcase?", "o-white-shelf"),
    ("Where was the black bookcase?", "o-black-shelf"),
    # one odd vote is not a colour seen: the black shelf is not the silver one, but no shelf is
    # silver and the one called so stays the answer
    ("Where was the silver bookcase?", "o-black-shelf"),
])
def test_the_asked_colour_chooses_among_instances_of_a_kind(instance_memory, question, expected):
    """On generated tours "the yellow cup" sent the robot 9.9 m to a blue cup (the yellow mug was
    seen once yellow, once green, and remembered green), and "the white bookcase" 3.6 m to the
    black shelf once called a bookcase rather than the white shelf never called so."""
    _assert_found(instance_memory, question, expected)


@pytest.mark.parametrize("question", ["Where was I when I first saw the white shelving unit?",
                                      "Take me to the white shelving unit."])
def test_a_noun_phrase_whose_first_word_reads_as_a_verb_names_a_thing(instance_memory, question):
    """"shelving" is no word the lexicon knows, but "shelve" is a verb: "the white shelving unit"
    was read as the activity "shelve unit", nothing served it, and a generated tour's question
    about the white shelf got no goal. Written after "the" it is a thing, found by its name."""
    _assert_found(instance_memory, question, "o-white-shelf")


@pytest.mark.parametrize("question", ["Where is the white piano?", "Where is the yellow bookcase in the garage?"])
def test_choosing_an_instance_finds_no_other_kind(instance_memory, question):
    """The colour picks an instance of what was found; with no piano, no white thing becomes one."""
    if "piano" in question:
        _assert_not_seen(instance_memory, question)
    else:  # a bookcase was found (the shelf called so); no shelf is yellow or in a garage
        _assert_found(instance_memory, question, "o-black-shelf")


# a chair perception called an armchair in the one chunk that named it, seen in more keyframes than
# the armchair, called so in four chunks of five
easy_memory = _memory_fixture("easy", [
    {"id": "o-chair", "label": "armchair", "description": "a brown wood armchair", "attributes": {"color": "brown"},
     "label_votes": {"armchair": 1}, "affordances": ["sit on"], "position": (2.8, 4.0), "seen": list(range(1, 9))},
    {"id": "o-armchair", "label": "armchair", "description": "a brown fabric armchair", "attributes": {"color": "brown"},
     "labels_seen": ["armchair", "chair"], "label_votes": {"armchair": 4, "chair": 1},
     "affordances": ["sit on"], "position": (12.2, 5.2), "seen": [20, 21, 22]},
])


@pytest.mark.parametrize("question", ["In which room did you see the easy chair?", "Take me to the easy chair."])
def test_a_name_never_given_counts_the_name_it_was_found_under(easy_memory, question):
    """No chunk called anything an "easy chair"; both things are found as armchairs. The one called
    an armchair by more of the chunks that named it is the target (a generated tour sent the robot
    9.8 m off, to a chair once called an armchair), as for a name that was given."""
    _assert_found(easy_memory, question, "o-armchair")


# a white shelf seen white in four chunks of five, called a bookcase or a bookshelf in two; and a
# brown shelf 4 m away, always called a shelf, seen brown twice and white once (one view's light)
rival_memory = _memory_fixture("rival", [
    {"id": "o-white", "label": "shelf", "description": "a large white metal shelf", "attributes": {"color": "white"},
     "labels_seen": ["shelf", "bookcase", "bookshelf"], "label_votes": {"shelf": 3, "bookcase": 1, "bookshelf": 1},
     "attribute_votes": {"color": {"white": 4, "black": 1}}, "affordances": ["store books on", "put things on"],
     "position": (0.9, 2.9), "seen": list(range(1, 23))},
    {"id": "o-brown", "label": "shelf", "description": "a large brown metal shelf", "attributes": {"color": "brown"},
     "label_votes": {"shelf": 3}, "attribute_votes": {"color": {"brown": 2, "white": 1}},
     "affordances": ["store books on", "put things on"], "position": (5.1, 2.7), "seen": list(range(30, 44))},
])


@pytest.mark.parametrize("question,expected", [
    ("Where did we pass the white shelf?", "o-white"),
    ("Take me to the white shelf.", "o-white"),
    ("Where did we pass the brown shelf?", "o-brown"),
    ("Where did we pass the shelf?", "o-brown"),  # no colour asked: the one called a shelf most often
])
def test_a_thing_seen_mostly_in_the_asked_colour_beats_one_seen_so_once(rival_memory, question, expected):
    """On a generated tour "the white shelf" sent the robot 4.2 m to the brown shelf: it was seen
    white once (a rival colour, so not "seen otherwise") and always called a shelf, so it led the
    white one, called a bookcase or bookshelf in two of its five chunks."""
    _assert_found(rival_memory, question, expected)


def _seen(first: int, n: int) -> list[int]:
    return list(range(first, first + n))


# a gray sofa seen gray in every chunk, and a bench seen gray in two chunks of three (once brown),
# as generated seed 741 saw them: "the gray seat bench" is the bench
bench_memory = _memory_fixture("bench", [
    {"id": "o-sofa", "label": "sofa", "description": "a large gray fabric sofa", "attributes": {"color": "gray"},
     "label_votes": {"sofa": 5}, "attribute_votes": {"color": {"gray": 5}},
     "affordances": ["sit on", "lie down on"], "position": (9.7, -2.5), "seen": _seen(1, 22)},
    {"id": "o-bench", "label": "bench", "description": "a large gray wood bench", "attributes": {"color": "gray"},
     "label_votes": {"bench": 3}, "attribute_votes": {"color": {"gray": 2, "brown": 1}},
     "affordances": ["sit on", "put on shoes at"], "position": (5.9, 7.4), "seen": _seen(40, 5)},
])


@pytest.mark.parametrize("question,expected", [
    ("Which room was I in when I first noticed the gray seat bench?", "o-bench"),
    ("Take me to the gray seat bench.", "o-bench"),
    ("Take me to the gray sofa.", "o-sofa"),
    ("Where can I find the gray settee?", "o-sofa"),
])
def test_the_asked_head_noun_leads_things_only_defined_alike(bench_memory, question, expected):
    """"The gray seat bench" (a compound the lexicon lacks) scores a bench by its head noun and a
    sofa, a seat, by its definitions; both are gray. A generated tour sent the robot 9.7 m off to
    the sofa, seen gray more surely than the bench; a thing seen under the asked head noun leads."""
    _assert_found(bench_memory, question, expected)


# a nightstand, and two desks perception once called a table each (seed 769)
bedside_memory = _memory_fixture("bedside", [
    {"id": "o-nightstand", "label": "nightstand", "description": "a small white wood nightstand",
     "attributes": {"color": "white"}, "label_votes": {"nightstand": 3}, "affordances": ["put things on"],
     "position": (12.8, 3.8), "seen": _seen(1, 6)},
    *({"id": f"o-desk-{k}", "label": "desk", "description": "a large brown wood desk", "attributes": {"color": "brown"},
       "labels_seen": ["desk", "table"], "label_votes": {"desk": 4, "table": 1}, "affordances": ["work at", "put things on"],
       "position": xy, "seen": _seen(first, 12)} for k, xy, first in ((1, (1.7, -2.9), 20), (2, (2.8, 3.4), 40))),
])


def test_a_name_given_once_is_not_the_asked_head_noun(bedside_memory):
    """"The bedside table": the desks were each called a table once; the head noun counts only as
    the name most chunks gave a thing, so the nightstand is not put behind them."""
    _assert_found(bedside_memory, "Which part of the house has the bedside table?", "o-nightstand")


# three kinds, two instances each, as generated tours saw them: a shelf called a bookshelf once and a
# shelf once, seen once brown and once pink, and one always called a shelf and seen brown; a brown
# table in the kitchen and a white one in the dining room, each mostly called a table
asked_memory = _memory_fixture("asked", [
    {"id": "o-bookshelf", "label": "bookshelf", "description": "a large brown wood bookshelf",
     "attributes": {"color": "brown"}, "labels_seen": ["bookshelf", "shelf"], "label_votes": {"bookshelf": 1, "shelf": 1},
     "attribute_votes": {"color": {"brown": 1, "pink": 1}}, "affordances": ["store books on", "put things on"],
     "position": (10.2, 7.1), "seen": _seen(1, 7)},
    {"id": "o-shelf", "label": "shelf", "description": "a large brown metal shelf", "attributes": {"color": "brown"},
     "label_votes": {"shelf": 2}, "attribute_votes": {"color": {"brown": 2}},
     "affordances": ["store books on", "put things on"], "position": (13.4, 7.4), "seen": _seen(10, 13)},
    {"id": "o-kitchen-table", "label": "table", "description": "a large brown wood table", "attributes": {"color": "brown"},
     "labels_seen": ["table", "desk"], "label_votes": {"table": 4, "desk": 1}, "attribute_votes": {"color": {"brown": 5}},
     "affordances": ["eat at", "put things on"], "position": (2.4, 5.6), "seen": _seen(30, 19),
     "place": "kitchen", "places": ["kitchen"]},
    {"id": "o-dining-table", "label": "table", "description": "a large white glass table", "attributes": {"color": "white"},
     "labels_seen": ["table", "desk"], "label_votes": {"table": 3, "desk": 1},
     "attribute_votes": {"color": {"white": 3, "brown": 1}}, "affordances": ["eat at", "put things on"],
     "position": (2.8, -2.2), "seen": _seen(60, 18), "place": "dining room", "places": ["dining room"]},
])


@pytest.mark.parametrize("question,expected", [
    ("Show me where the brown bookshelf is.", "o-shelf"),
    ("Show me where the pink bookshelf is.", "o-bookshelf"),
    ("Show me where the bookshelf is.", "o-bookshelf"),  # no colour asked: the one called so
])
def test_the_instance_seen_in_the_asked_colour_more_surely_is_the_one(asked_memory, question, expected):
    """On a generated tour "the brown bookshelf" sent the robot 4.1 m to a white shelf called a
    bookshelf once and seen brown once and pink once (a tie: brown was among its most voted
    colours), not to the shelf seen brown in both chunks that saw its colour."""
    _assert_found(asked_memory, question, expected)


@pytest.mark.parametrize("question,expected", [
    ("Where was the white kitchen table?", "o-dining-table"),
    ("Where was the kitchen table?", "o-kitchen-table"),
    ("Where was the brown table?", "o-kitchen-table"),
])
def test_the_asked_colour_outweighs_the_asked_room_among_instances(asked_memory, question, expected):
    """"The white kitchen table": no table in the kitchen is white, the white one stands in the dining
    room. The found rule puts the white one first (a thing seen in another colour comes last); the
    table called a table in more of its chunks then took the lead, the two counting as alike "not as
    asked", and a generated tour sent the robot 7.8 m to the brown kitchen table."""
    _assert_found(asked_memory, question, expected)


# two green plants as generated seed 785 saw them: the office's seen once silver and once black (a
# perceiver misreads colours now and then), the hallway's seen green in four chunks; and a plant in the
# kitchen perception agreed was brown
plants_memory = _memory_fixture("plants", [
    {"id": "o-office-plant", "label": "plant", "description": "a medium silver ceramic plant",
     "attributes": {"color": "silver"}, "label_votes": {"plant": 2}, "attribute_votes": {"color": {"silver": 1, "black": 1}},
     "affordances": ["water"], "position": (0.8, 2.3), "seen": _seen(1, 10), "place": "office", "places": ["office"]},
    {"id": "o-hall-plant", "label": "plant", "description": "a medium green ceramic plant", "attributes": {"color": "green"},
     "label_votes": {"plant": 4}, "attribute_votes": {"color": {"green": 4}}, "affordances": ["water"],
     "position": (3.8, 0.3), "seen": _seen(20, 13), "place": "hallway", "places": ["hallway"]},
    {"id": "o-kitchen-plant", "label": "plant", "description": "a medium brown ceramic plant", "attributes": {"color": "brown"},
     "label_votes": {"plant": 3}, "attribute_votes": {"color": {"brown": 3}}, "affordances": ["water"],
     "position": (8.2, -3.4), "seen": _seen(40, 9), "place": "kitchen", "places": ["kitchen"]},
])


@pytest.mark.parametrize("question,expected", [
    ("Take me to the green houseplant in the office.", "o-office-plant"),
    ("Which room was I in when I first noticed the green plant in the office?", "o-office-plant"),
    ("Where is the green plant?", "o-hall-plant"),
    ("Where is the green plant in the kitchen?", "o-hall-plant"),  # the kitchen's was surely brown
])
def test_a_colour_perception_was_unsure_of_does_not_outweigh_the_asked_room(plants_memory, question, expected):
    """"The green plant in the office" went 3.2 m to the green plant in the hallway on a generated
    tour: the office's plant, seen once silver and once black, counted as seen in another colour,
    and that came before the room. A colour no two chunks agreed on says little; one they agreed
    on still outweighs the room (the kitchen's brown plant)."""
    _assert_found(plants_memory, question, expected)


# a blue mug seen often and well placed, and a yellow one 1.3 m from it: close enough to pool as one
neighbour_memory = _memory_fixture("neighbour", [
    {"id": "o-blue", "label": "mug", "description": "a small blue ceramic mug", "attributes": {"color": "blue"},
     "attribute_votes": {"color": {"blue": 4}},
     "affordances": ["drink from"], "position": (3.0, 1.0), "position_var": 0.05, "seen": [1, 2, 3, 4, 5, 6, 7, 8]},
    {"id": "o-yellow", "label": "mug", "description": "a small yellow ceramic mug", "attributes": {"color": "yellow"},
     "attribute_votes": {"color": {"yellow": 2}},
     "affordances": ["drink from"], "position": (4.2, 1.5), "position_var": 0.2, "seen": [10, 11, 12]},
    # a bed split in two fragments 1 m apart, each seen in one chunk, once white and once gray
    {"id": "o-bed-a", "label": "bed", "description": "a large white fabric bed", "attributes": {"color": "white"},
     "attribute_votes": {"color": {"white": 1}}, "affordances": ["sleep in"], "position": (11.2, -3.0),
     "position_var": 0.12, "seen": [20, 21, 22]},
    {"id": "o-bed-b", "label": "bed", "description": "a small gray fabric bed", "attributes": {"color": "gray"},
     "attribute_votes": {"color": {"gray": 1}}, "affordances": ["sleep in"], "position": (10.2, -3.4),
     "position_var": 0.07, "seen": [23, 24, 25]},
])


@pytest.mark.parametrize("question,expected,xy", [
    ("Where is the yellow mug?", "o-yellow", (4.2, 1.5)),
    ("Where was I when I first saw the yellow mug?", "o-yellow", (4.2, 1.5)),
    ("Where is the blue mug?", "o-blue", (3.0, 1.0)),
])
def test_an_object_seen_in_another_colour_is_no_duplicate_of_the_asked_one(neighbour_memory, question, expected, xy):
    """Two mugs 1.3 m apart could be one mug split in two by position alone; seen in colours
    apart they are two, and the yellow one's goal is not pulled 1.1 m onto the blue one."""
    res = _ask_home(neighbour_memory, question)
    assert res.found and res.target_object_id == expected and res.goal is not None
    assert math.dist(res.target_position, xy) < 0.1, res.target_position


def test_fragments_each_seen_once_in_a_colour_still_pool(neighbour_memory):
    """One chunk's colour says little: the two fragments of a bed, one seen once white and one
    once gray, are still pooled into one goal position (between them)."""
    res = _ask_home(neighbour_memory, "Where is the bed?")
    assert res.found and res.target_object_id in ("o-bed-a", "o-bed-b")
    assert 10.3 < res.target_position[0] < 11.1, res.target_position


# a wooden lamp, and a metal one the detector called a "light"; a steel kettle and a plastic one
material_memory = _memory_fixture("material", [
    {"id": "o-lamp", "label": "lamp", "description": "a medium brown wooden lamp", "attributes": {"material": "wood"},
     "affordances": ["give light"], "position": (8.0, 7.1), "seen": [1, 2, 3]},
    {"id": "o-light", "label": "light", "description": "a medium brown metal light", "attributes": {"material": "metal"},
     "affordances": ["give light"], "position": (10.2, -3.1), "seen": [30, 31]},
])


@pytest.mark.parametrize("question,expected", [
    ("Where is the metal lamp?", "o-light"), ("Where is the metallic lamp?", "o-light"),
    ("Where is the steel lamp?", "o-light"),  # steel is a metal
    ("Where is the wooden lamp?", "o-lamp"), ("Where is the lamp?", "o-lamp"),
])
def test_a_named_thing_of_another_material_is_not_the_one_asked_for(material_memory, question, expected):
    """"The metal lamp": the lamp the label names is wooden, the metal one was seen as a "light";
    as for colours, the one seen in the material asked for comes first."""
    _assert_found(material_memory, question, expected)


# a lamp seen in the bedroom and hallway, and one the detector called a "light" in the office
place_memory = _memory_fixture("place", [
    {"id": "o-lamp", "label": "lamp", "description": "a medium white metal lamp", "attributes": {"color": "white"},
     "affordances": ["give light"], "position": (8.0, 7.1), "seen": [1, 2, 3, 4], "places": ["bedroom", "hallway"]},
    {"id": "o-light", "label": "light", "description": "a medium white metal light", "attributes": {"color": "white"},
     "affordances": ["give light"], "position": (10.2, -3.1), "seen": [30, 31], "places": ["office"]},
])


@pytest.mark.parametrize("question,expected", [
    ("Show me where the lamp in the office is.", "o-light"),
    ("Where is the lamp in the bedroom?", "o-lamp"),
    ("Where is the lamp?", "o-lamp"),
])
def test_a_named_thing_seen_in_another_place_is_not_the_one_asked_for(place_memory, question, expected):
    """"The lamp in the office": the lamp the label names, seen only in the bedroom and hallway, is
    not it when a light was seen in the office (on a fresh generated tour the found rule's
    named-first order sent the robot 6.4 m to another room's plant)."""
    _assert_found(place_memory, question, expected)


# a dining room and a hall: things whose dictionary definitions say what they are for
use_memory = _memory_fixture("found5u", _things(
    ("o-table", "table", "a brown wood table", ["eat at", "put things on"], (1.0, 1.0), [1, 2]),
    ("o-bowl", "bowl", "a white ceramic bowl", ["hold fruit", "eat from"], (1.3, 1.2), [2, 3]),
    ("o-apple", "apple", "a red apple", ["eat"], (1.5, 1.0), [3, 4]),
    ("o-wardrobe", "wardrobe", "a brown wood wardrobe", ["store clothes in"], (6.0, 1.0), [5, 6]),
    ("o-backpack", "backpack", "a blue fabric backpack", ["carry things"], (7.0, 2.0), [7, 8]),
    ("o-umbrella", "umbrella", "a black umbrella", ["keep dry in the rain"], (7.5, 2.5), [8, 9]),
    ("o-helmet", "helmet", "a white plastic helmet", ["protect your head"], (7.0, 3.0), [9, 10]),
))


@pytest.mark.parametrize("question,expected", [
    # "have" was a function word: the meal was a thing to find, and nothing seen is a meal. The
    # table's kind "a table where breakfast is eaten" names a meal; the apple, related 0.72 to
    # "have a meal" (eaten), is defined for no meal
    ("Where can I have a meal?", "o-table"),
])
def test_an_activity_is_served_by_what_a_thing_is_defined_for(use_memory, question, expected):
    _assert_found(use_memory, question, expected)


@pytest.mark.parametrize("question", [
    # nothing seen is, or is defined for, a shower or a bath: the umbrella (to keep dry in the
    # rain) is 0.72 related to "have a shower", a table "that has a drop-leaf to enlarge its
    # surface" is an artifact as a bath is: neither serves it
    "Where can I have a shower?", "Where can I have a bath?",
    "where is '; DROP TABLE objects; --?",  # a definition naming a table serves no "drop table"
])
def test_an_activity_nothing_is_defined_for_stays_not_seen(use_memory, question):
    _assert_not_seen(use_memory, question)


# a sink and a bed: names written as two words that the dictionary writes as one
spelling_memory = _memory_fixture("found5s", _things(
    ("o-sink", "sink", "a white ceramic sink", ["wash hands at"], (1.0, 1.0), [1, 2]),
    ("o-bed", "bed", "a large wood bed", ["sleep in"], (4.0, 2.0), [3, 4]),
))


def test_a_compound_written_apart_is_looked_up_as_one_word(spelling_memory):
    """"wash basin" is WordNet's "washbasin", a kind of sink; the embedding alone puts it 0.216
    over background, just under the 0.22 margin: not found, no goal."""
    _assert_found(spelling_memory, "where is the wash basin?", "o-sink")


@pytest.mark.parametrize("question", [
    "where is the head board?",  # a headboard is part of a bed, not a kind of one
    "where is the bath tub?",  # a bathtub, but none was seen
])
def test_a_compound_written_apart_names_no_other_thing(spelling_memory, question):
    _assert_not_seen(spelling_memory, question)


# a sofa, and a cushion on it whose node took in a few sightings of the sofa
def test_the_goal_is_not_a_better_seen_thing_of_another_kind(tmp_path):
    """The goal goes to the best-seen duplicate of the object asked for, but a cushion whose node
    once took the sofa's name is another kind of thing. On a fresh generated tour retrieval scored
    that cushion 0.86-0.88 of the sofa and "the sofa", "the settee" and "when I first noticed the
    sofa" all sent the robot to the cushion."""
    from helpers_stores import make_object

    from vlkng_ros.core.ask.answer import goal_target, prefer_by_time
    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.core.ask.graph_retrieval import Subgraph
    from vlkng_ros.core.ask.query import parse_offline

    sofa = make_object("o-sofa", "sofa", [("t", 2 + i) for i in range(6)], (11.7, 4.4))
    cushion = make_object("o-cushion", "cushion", [("t", 1 + i) for i in range(11)], (10.6, 4.7),
                          labels_seen=["cushion", "sofa", "couch"])
    armchair = make_object("o-arm", "armchair", [("t", 40), ("t", 41)], (3.0, 1.0))
    chair = make_object("o-chair", "chair", [("t", 30 + i) for i in range(9)], (3.3, 1.2), labels_seen=["chair", "armchair"])

    def sub_of(*scored):
        sub = Subgraph()
        for node, score in scored:
            sub.objects[node.id], sub.scores[node.id], sub.roles[node.id] = node, score, "target"
        return sub

    cfg = VlkngConfig()
    with Memory.open(_hand_built(tmp_path / "mem", []), cfg, read_only=True) as m:
        same_kind = AskEngine(m, cfg)._labels.same_kind
        assert goal_target(sub_of((sofa, 1.0), (cushion, 0.88)), "o-sofa") == "o-cushion"  # as before
        assert goal_target(sub_of((sofa, 1.0), (cushion, 0.88)), "o-sofa", same_kind=same_kind) == "o-sofa"
        # a chair node sometimes called armchair is still the better-seen duplicate of the armchair
        assert goal_target(sub_of((armchair, 1.0), (chair, 0.9)), "o-arm", same_kind=same_kind) == "o-chair"
        sub = sub_of((sofa, 1.0), (cushion, 0.88))
        rivals = prefer_by_time(sub, parse_offline("Which room was I in when I first noticed the sofa?"), same_kind)
        assert "o-cushion" not in rivals and sub.scores["o-sofa"] == 1.0


# round 6: activities on each candidate's own evidence (its affordances, its definitions)
PLANT = ("o-plant", "plant", "a green potted plant", ["water", "decorate"], (1.0, 1.0), [1, 2])
UMBRELLA = ("o-umbrella", "umbrella", "a black umbrella", ["keep dry in the rain"], (4.0, 1.0), [3, 4])
TOILETRY_BAG = ("o-bag", "bag", "a blue toiletry bag", ["carry soap and towels"], (6.0, 2.0), [5, 6])


@pytest.mark.parametrize("thing,question", [
    # the plant's "water" is what is boiled, not what the plant does (a shared word alone)
    (PLANT, "Where did I see something to boil water with?"),
    # the umbrella keeps *dry*, it dries no hands: "hands" against "keep ... rain" decides
    (UMBRELLA, "Where did I see something to dry my hands with?"),
    # a bag that carries soap is related to washing, but no use of it washes hands
    (TOILETRY_BAG, "Where can I wash my hands?"),
])
def test_an_activity_nothing_seen_serves_is_not_found(tmp_path, thing, question):
    """Issue 11: the activity path trusted any retrieval result above the relevance floor (the
    plant for "boil water", found with a goal on 29-63 % of absent uses in bench_absent
    --activities); a candidate must serve the activity by its own affordances or definitions."""
    _assert_not_seen(_hand_built(tmp_path / "mem", _things(thing)), question)


present_use_memory = _memory_fixture("found6p", _things(
    ("o-kettle", "kettle", "a red metal kettle", ["boil water", "make tea"], (1.0, 1.0), [1, 2]),
    ("o-table", "table", "a brown wood table", ["eat at", "put things on"], (2.0, 1.0), [2, 3]),
    ("o-sofa", "sofa", "a gray fabric sofa", ["sit on", "lie down on", "watch TV from"], (5.0, 1.0), [4, 5]),
    ("o-chair", "chair", "a black chair", ["sit on"], (2.5, 1.5), [3, 4]),
    ("o-tv", "tv", "a black tv", ["watch shows on"], (5.0, 3.0), [5, 6]),
    ("o-sink", "sink", "a white ceramic sink", ["wash hands at", "wash up at"], (8.0, 1.0), [7, 8]),
    ("o-towel", "towel", "a blue towel", ["dry hands with"], (8.5, 1.0), [8, 9]),
    ("o-plant", "plant", "a green potted plant", ["water", "decorate"], (3.0, 3.0), [9, 10]),
    ("o-umbrella", "umbrella", "a black umbrella", ["keep dry in the rain"], (9.0, 3.0), [10, 11]),
))


@pytest.mark.parametrize("question,expected", [
    ("Where did I see something to boil water with?", {"o-kettle"}),
    ("Where can I have a meal?", {"o-table"}),
    ("Where can I sit down?", {"o-sofa", "o-chair"}),
    ("Where can I sit to watch TV?", {"o-sofa", "o-tv"}),
    ("Where can I wash my hands?", {"o-sink"}),
    ("Where did I see something to dry my hands with?", {"o-towel"}),
    ("Where did I see something to keep me dry in the rain?", {"o-umbrella"}),
])
def test_an_activity_a_seen_thing_serves_stays_found(present_use_memory, question, expected):
    res = _ask_home(present_use_memory, question)
    assert res.success and res.found, (question, res.answer)
    assert res.target_object_id in expected and res.goal is not None, (question, res.target_object_id)


def test_a_shared_word_alone_does_not_serve_an_activity(present_use_memory):
    """The rule on its own: "water" (a plant's affordance) is a word of "boil water" but no use
    of it; "keep dry in the rain" shares only "dry" with "dry hands"; a use that says the whole
    activity, or is only its verb ("work at" for "sit and work"), does."""
    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.core.ask.found import ACTIVITY_MARGIN
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory

    cfg = VlkngConfig()
    with Memory.open(present_use_memory, cfg, read_only=True) as memory:
        rule = AskEngine(memory, cfg).found_rule
        assert rule.affordance_match("boil water", ["water", "decorate"]) < ACTIVITY_MARGIN
        assert rule.affordance_match("dry hands", ["keep dry in the rain"]) < ACTIVITY_MARGIN
        assert rule.affordance_match("wash hands", ["wash hands at"]) == 1.0
        assert rule.affordance_match("work computer", ["work at"], "where can I sit and work on my computer") == 1.0
        # ... but not the manner verb alone when the activity's purpose acts on a thing (round 7)
        assert rule.affordance_match("sit work computer", ["sit on"], "where can I sit and work on my computer") < ACTIVITY_MARGIN
        assert rule.affordance_match("water plants", ["water", "decorate"]) == 1.0


# round 7: how an activity phrase is built (its manner verb and purpose, what it acts on, what it is for)
CHAIR = ("o-chair", "chair", "a black wooden chair", ["sit on"], (2.5, 1.5), [3, 4])
FRIDGE = ("o-fridge", "fridge", "a white metal fridge", ["keep food cold", "store drinks"], (1.0, 1.0), [1, 2])
TOWEL = ("o-towel", "towel", "a blue fabric towel", ["dry hands with", "dry off"], (8.5, 1.0), [8, 9])
COUNTER = ("o-counter", "counter", "a white stone counter", ["prepare food on", "put things on"], (1.5, 1.0), [1, 2])
NOTEBOOK = ("o-notebook", "notebook", "a blue paper notebook", ["read"], (3.0, 1.0), [5, 6])
PRINTER = ("o-printer", "printer", "a gray plastic printer", ["print documents"], (3.0, 1.0), [5, 6])
BOOK = ("o-book", "book", "a red paper book", ["read"], (3.0, 1.0), [5, 6])


@pytest.mark.parametrize("thing,question", [
    # sitting is how, working on a computer is what for: a chair affords no work ("sit on" is
    # only the first verb; the later verb acts on a thing)
    (CHAIR, "Where can I sit and work on my computer?"),
    # the tea is what the water is heated for, not a drink the fridge stores
    (FRIDGE, "Where was the thing I could heat water for tea in?"),
    # "keep me dry": dry is the state the rain leaves one in, no drying of hands
    (TOWEL, "Where did I see something to keep me dry in the rain?"),
    # flowers go *in* something (a container); a counter is something to put things *on*
    (COUNTER, "Where did I see something to put flowers in?"),
    # a notebook is a book: what is read, not where one sits to read
    (NOTEBOOK, "Where can I sit and read a book?"),
    # round 8 (each found with a goal on 0eecf6d): one sits at a thing to write, and printing
    # documents is what the printer does, not where one sits (+0.33 over the activity background)
    (PRINTER, "Where could I sit and write a letter?"),
    (BOOK, "Where is a comfy spot to read a book?"),  # a spot to read a book is no book (was: the book)
    # tying laces is what the sitting is for: a plain chair's "sit on" is only how (was: "while"
    # read as a time cue, the target "sit")
    (CHAIR, "Where could I sit while tying my laces?"),
])
def test_what_an_activity_only_seems_to_share_does_not_serve_it(tmp_path, thing, question):
    """Issue 11: round 6 still sent the robot to the chair for "sit and work on my computer"
    (4 of 17 absent uses on read seeds), the fridge for "heat water for tea", the towel for "keep
    me dry in the rain", a counter for "put flowers in" and a notebook (a book) for "sit and read a
    book"; each read one word of the activity in another role than it has there."""
    _assert_not_seen(_hand_built(tmp_path / "mem", _things(thing)), question)


purpose_memory = _memory_fixture("act7p", _things(
    ("o-chair", "chair", "a black wooden chair", ["sit on"], (2.5, 1.5), [1, 2, 3, 4, 5]),
    ("o-table", "table", "a brown wood table", ["eat at", "put things on"], (2.0, 1.0), [3, 4]),
    ("o-desk", "desk", "a white wooden desk", ["work at", "put things on"], (6.0, 1.0), [6, 7]),
    ("o-kettle", "kettle", "a red metal kettle", ["boil water", "make tea"], (1.0, 2.0), [8, 9]),
    ("o-fridge", "fridge", "a white metal fridge", ["keep food cold", "store drinks"], (1.0, 1.0), [8, 9]),
    ("o-vase", "vase", "a blue glass vase", ["hold flowers"], (2.0, 1.2), [3, 4]),
    ("o-sofa", "sofa", "a gray fabric sofa", ["sit on", "lie down on", "watch TV from"], (5.0, 3.0), [10, 11]),
))


@pytest.mark.parametrize("question,expected", [
    ("Where can I sit and work on my computer?", "o-desk"),
    # the sofa sits and watches (its "watch TV from"), though no use of it names a film
    ("Where can I sit to watch a film?", "o-sofa"),
    ("Where was the thing I could heat water for tea in?", "o-kettle"),
    ("Where did I see something to put flowers in?", "o-vase"),
    ("Where should I put the milk?", "o-fridge"),
    ("Where can I stretch out and relax?", "o-sofa"),  # a later verb with nothing it acts on
    ("Where can I sit to rest my legs?", {"o-chair", "o-sofa"}),  # resting is a way of sitting
    ("Where can I sit to watch TV?", "o-sofa"),
])
def test_an_activity_is_served_by_what_it_is_for(purpose_memory, question, expected):
    res = _ask_home(purpose_memory, question)
    assert res.success and res.found, (question, res.answer)
    assert res.target_object_id in ({expected} if isinstance(expected, str) else expected), (question, res.target_object_id)
    assert res.goal is not None


# round 8: how a question names a use (a place for it, a passive, "while"), and what serves its purpose
phrasing_memory = _memory_fixture("act8", _things(
    ("o-chair", "chair", "a black wooden chair", ["sit on"], (2.5, 1.5), [1, 2, 3, 4, 5]),
    ("o-table", "table", "a brown wood table", ["eat at", "put things on"], (2.0, 1.0), [3, 4]),
    ("o-bench", "bench", "a gray wood bench", ["sit on", "put on shoes at", "put things on"], (8.0, 1.0), [6, 7]),
    ("o-shelf", "shelf", "a black wood shelf", ["store books on", "put things on"], (6.0, 3.0), [8, 9]),
    ("o-book", "book", "a red paper book", ["read"], (6.0, 3.1), [8, 9]),
    ("o-shoes", "shoe rack", "a brown wood shoe rack", ["store shoes on", "put things on"], (8.5, 1.5), [6, 7]),
))


@pytest.mark.parametrize("question,expected", [
    ("Where could I sit while tying my laces?", "o-bench"),  # the bench's "put on shoes at"
    ("Where do books get stored?", "o-shelf"),              # not the book, not the shoe rack
    ("Where could we sit down for dinner?", "o-table"),     # dinner: a meal, "eaten": eat at
    ("Where can I have a meal?", "o-table"),
    ("Where can I sit down?", {"o-chair", "o-bench"}),     # guard: no purpose, any seat
])
def test_a_use_named_by_its_phrasing_is_served_by_what_it_is_for(phrasing_memory, question, expected):
    """Issue 17's goals: 0eecf6d sent "sit while tying my laces" and "sit down for dinner" to a
    chair, "where do books get stored" to the book."""
    res = _ask_home(phrasing_memory, question)
    assert res.success and res.found, (question, res.answer)
    assert res.target_object_id in ({expected} if isinstance(expected, str) else expected), (question, res.target_object_id)
    assert res.goal is not None


def test_one_verb_with_another_thing_is_no_use(phrasing_memory):
    """"Store books" and a shoe rack's "store shoes on" share only the verb: the things stored must
    be alike too (books and shoes are not)."""
    from vlkng_ros.core.ask.engine import AskEngine
    from vlkng_ros.core.ask.found import ACTIVITY_MARGIN
    from vlkng_ros.core.config import VlkngConfig
    from vlkng_ros.core.memory import Memory

    cfg = VlkngConfig()
    with Memory.open(phrasing_memory, cfg, read_only=True) as memory:
        rule = AskEngine(memory, cfg).found_rule
        assert rule.affordance_match("store books", ["store shoes on"]) < ACTIVITY_MARGIN
        assert rule.affordance_match("store books", ["store books on"]) == 1.0


# a coffee table, and no other table
sibling_memory = _memory_fixture("sibling", _things(
    ("o-coffee", "coffee table", "a large black glass coffee table", ["put things on"], (7.9, 4.2), [1, 2, 3]),
    ("o-sofa", "sofa", "a large blue leather sofa", ["sit on"], (8.2, 5.7), [2, 3]),
))


def test_another_kind_of_the_same_thing_is_not_found(sibling_memory):
    """"Take me to the dining table" with only a coffee table seen (a fresh generated tour: the
    dining table was perceived as a desk) sent the robot to the coffee table (0.23 over background,
    margin 0.22): WordNet knows both as kinds of table, and neither is the other."""
    _assert_not_seen(sibling_memory, "Take me to the dining table.")
    _assert_found(sibling_memory, "Where is the coffee table?", "o-coffee")
    _assert_found(sibling_memory, "Where is the table?", "o-coffee")  # the label's head noun


# an umbrella and a television: named otherwise than the question does
alike_memory = _memory_fixture("alike", _things(
    ("o-umbrella", "umbrella", "a black folding umbrella", ["keep dry in the rain"], (1.0, 1.0), [1, 2]),
    ("o-tv", "television", "a large black television", ["watch shows on"], (4.0, 2.0), [3, 4]),
))


def test_a_thing_the_dictionary_defines_alike_is_found(alike_memory):
    """"Parasol" (a read generated tour: an umbrella seen, 0.18 over background, margin 0.22, and not
    retrieved at all in another): WordNet defines a parasol as "a handheld collapsible source of
    shade" and an umbrella as "a lightweight handheld collapsible canopy"."""
    _assert_found(alike_memory, "where is the parasol?", "o-umbrella")


@pytest.mark.parametrize("question", [
    "where is the telescope?",  # "a magnifier of images of distant objects": no kind of television
    "where is the ironing board?",  # "on collapsible supports": one distinctive word is chance
])
def test_a_thing_defined_in_one_shared_word_stays_not_seen(alike_memory, question):
    _assert_not_seen(alike_memory, question)


# a tv stand, a laundry basket and a coffee table: compounds named by other compounds
parts_memory = _memory_fixture("parts", _things(
    ("o-stand", "tv stand", "a low black tv stand", ["put the tv on"], (1.0, 1.0), [1, 2]),
    ("o-basket", "laundry basket", "a white plastic laundry basket", ["put dirty clothes in"], (4.0, 2.0), [3, 4]),
    ("o-table", "coffee table", "a low wood coffee table", ["put things on"], (2.0, 5.0), [5, 6]),
))


def test_a_compound_named_by_its_parts_is_found(parts_memory):
    """"Media console" (no WordNet entry; 0.04 over background for a tv stand on a read generated
    tour): television is a medium, and a console and a stand are both small tables to WordNet."""
    _assert_found(parts_memory, "where is the media console?", "o-stand")


@pytest.mark.parametrize("question", [
    "where is the coffee machine?",  # one modifier, and a machine is no table
    "where is the laundry bag?",  # one modifier: a bag and a basket are two containers
    "where is the tv desk?", "where is the chair laptop?",
])
def test_a_compound_whose_parts_name_other_things_stays_not_seen(parts_memory, question):
    _assert_not_seen(parts_memory, question)


# the things a read generated tour (722) ranked above its tv stand for "media console": by their
# descriptions and uses, all nearer "media" than "a large black wood tv stand, put things on"
media_memory = _memory_fixture("media", _things(
    ("o-sofa", "sofa", "a large gray leather sofa", ["sit on", "lie down on", "watch TV from"], (1.0, 1.0), [1, 2]),
    ("o-guitar", "guitar", "a large orange glass guitar", ["play music on"], (3.0, 1.0), [3, 4]),
    ("o-table", "table", "a large brown glass table", ["eat at", "put things on"], (5.0, 1.0), [5, 6]),
    ("o-remote", "remote", "a small gray plastic remote", ["change the channel", "turn on the TV"], (1.0, 3.0), [7, 8]),
    ("o-piano", "piano", "a large white wood piano", ["play music on"], (3.0, 3.0), [9, 10]),
    ("o-piano2", "piano", "a large black wood piano", ["play music on"], (5.0, 3.0), [11, 12]),
    ("o-tv", "tv", "a large black plastic tv", ["watch shows on"], (1.0, 5.0), [13, 14]),
    ("o-monitor", "monitor", "a large yellow plastic monitor", ["watch shows on"], (3.0, 5.0), [15, 16]),
    ("o-stand", "tv stand", "a large black wood tv stand", ["put things on"], (5.0, 5.0), [17, 18]),
))


def test_a_thing_retrieval_ranks_low_is_offered_by_its_label(media_memory):
    """"Media console" names the tv stand (``parts match``), but the fused retrieval ranks eight
    things above it (the remote's "turn on the TV", the sofa's "watch TV from"...), so the found
    rule, checking the first few, accepted none: retrieval also offers the labels nearest the name
    (tv stand: 4th of 8), and the found rule takes the tv stand from those."""
    _assert_found(media_memory, "The media console: which room was it in?", "o-stand")
    _assert_found(media_memory, "where is the media console?", "o-stand")


@pytest.mark.parametrize("question", ["where is the bicycle?", "where is the game controller?",
                                      "where is the keyboard?", "where is the coffee machine?"])
def test_what_is_offered_beyond_the_ranking_is_still_judged(media_memory, question):
    """Offered labels (the nearest by embedding) are judged by the same found rule: things never
    seen stay not seen, however near a label in memory is (a piano keyboard, a tv remote)."""
    _assert_not_seen(media_memory, question)


# a wine rack and a spice rack near each other, a bookshelf 12 m away, a woven basket: names the
# simulator's catalogue does not use
rack_memory = _memory_fixture("racks", _things(
    ("o-wine", "wine rack", "a black metal wine rack", ["store bottles in"], (1.0, 1.0), [1, 2, 3]),
    ("o-spice", "spice rack", "a small wood spice rack", ["store spices on"], (2.0, 1.5), [3, 4]),
    ("o-shelf", "shelf", "a tall brown wood shelf", ["store books on"], (13.0, 4.0), [5, 6, 7]),
    ("o-basket", "basket", "a woven wicker basket", ["hold fruit"], (4.0, 2.0), [8, 9]),
))


@pytest.mark.parametrize("question,expected", [
    # one modifier, and heads the dictionary defines for one use: a rack is a "framework for holding
    # objects", a shelf "a support ... for holding objects" (on a read generated tour "the shoe
    # shelf" sent the robot to a bookshelf 12 m away, the shoe rack 0.17 over background)
    ("where is the wine shelf?", "o-wine"),
    ("where is the spice shelf?", "o-spice"),
    ("where is the wineshelf?", "o-wine"),  # a closed compound the lexicon lacks, read apart
    ("where is the shelf?", "o-shelf"), ("where is the bookshelf?", "o-shelf"),
    ("where is the spice rack?", "o-spice"), ("where is the basket?", "o-basket"),
    ("where is the fruit basket?", "o-basket"),  # a compound the lexicon lacks: a kind of basket
])
def test_a_compound_is_found_at_what_its_modifier_and_use_name(rack_memory, question, expected):
    _assert_found(rack_memory, question, expected)


@pytest.mark.parametrize("question", [
    # WordNet's wastebasket is a container, no kind of basket: the woven basket (0.35 over
    # background by the shared word) is another thing
    "where is the waste basket?", "where is the wastepaper basket?",
    "where is the wine bag?",  # one modifier: a bag is for no use a rack is for
])
def test_a_compound_the_lexicon_knows_as_no_kind_of_its_head_stays_not_seen(rack_memory, question):
    _assert_not_seen(rack_memory, question)


# a potted plant (a label WordNet lacks), a cushion, a kettle, a dumbbell, a bag and a computer
kinds_memory = _memory_fixture("kinds", _things(
    ("o-plant", "potted plant", "a green potted plant", ["water"], (1.0, 1.0), [1, 2]),
    ("o-cushion", "cushion", "a red velvet cushion", ["lean on"], (4.0, 2.0), [3, 4]),
    ("o-kettle", "kettle", "a steel kettle", ["boil water in"], (2.0, 5.0), [5, 6]),
    ("o-dumbbell", "dumbbell", "a black iron dumbbell", ["lift"], (6.0, 1.0), [7, 8]),
    ("o-bag", "bag", "a brown leather bag", ["carry things in"], (7.0, 4.0), [9, 10]),
    ("o-computer", "computer", "a grey desktop computer", ["work on"], (3.0, 7.0), [11, 12]),
    ("o-guitar", "guitar", "a brown wooden guitar", ["play music on"], (5.0, 7.0), [13, 14]),
))


@pytest.mark.parametrize("question,expected", [
    # "potted plant" is no WordNet entry: it is read by its head, a plant, which a houseplant is (a
    # read generated tour: the potted plant 0.13 over background for "green houseplant", not found)
    ("where is the houseplant?", "o-plant"),
    ("where is the fern?", "o-plant"),  # fern, pteridophyte, vascular plant, plant: 3 steps up
    ("where is the bolster?", "o-cushion"),  # bolster, pillow, cushion (its third sense): 2 steps
    # a compound WordNet files under its head word, whose definition names only its sound (a
    # generated tour's "The acoustic guitar: which room was it in?" for a guitar, not seen)
    ("where is the acoustic guitar?", "o-guitar"),
    # compounds WordNet lacks read by their head when the dictionary describes the label with the
    # modifier: kettle, boiler; a teakettle "for boiling water". A dumbbell is an exercising weight,
    # "raised and lowered by use of the hands"
    ("where is the water boiler?", "o-kettle"),
    ("where is the hand weight?", "o-dumbbell"),
])
def test_a_kind_of_the_label_a_few_steps_down_is_found(kinds_memory, question, expected):
    _assert_found(kinds_memory, question, expected)


@pytest.mark.parametrize("question", [
    "where is the suitcase?",  # a bag in bag's rarer senses only
    "where is the coffee machine?",  # a computer is a machine, but no definition of it says coffee
    "where is the telescope?", "where is the rice cooker?", "where is the tea kettle stand?",
])
def test_a_thing_a_label_names_only_rarely_or_by_its_head_alone_stays_not_seen(kinds_memory, question):
    _assert_not_seen(kinds_memory, question)


# round 11: a kind WordNet files under a label without its definition calling it one
lamp_memory = _memory_fixture("filed", _things(
    ("o-lamp", "lamp", "a black metal lamp", ["give light"], (1.0, 1.0), [1, 2]),
    ("o-table", "table", "a brown wood dining table", ["eat at"], (4.0, 2.0), [3, 4]),
    ("o-sofa", "sofa", "a gray fabric sofa", ["sit on"], (2.0, 5.0), [5, 6]),
    ("o-sink", "sink", "a white ceramic sink", ["wash hands at"], (6.0, 1.0), [7, 8]),
    ("o-quilt", "quilt", "a blue cotton quilt", ["keep warm"], (7.0, 4.0), [9, 10]),
))


@pytest.mark.parametrize("question", [
    # WordNet: a candle (taper) is a lamp one step up, defined as "stick of wax with a wick in the
    # middle"; a desk is a table, "a piece of furniture with a writing surface": 1.0 on 680bb87
    "where did you see a candle?", "where is the taper?", "where is my desk?",
])
def test_a_kind_the_dictionary_only_files_under_the_label_stays_not_seen(lamp_memory, question):
    """Issue 11: 680bb87 answered an absent candle with the black metal lamp at 1.0."""
    _assert_not_seen(lamp_memory, question)


@pytest.mark.parametrize("question,expected", [
    # definitions naming the label or a kind on the way to it: "a small sofa", "a bathroom sink
    # ...", "a soft quilt usually filled with the down of the eider"
    ("where is the settee?", "o-sofa"), ("where is the washbasin?", "o-sink"),
    ("where is the duvet?", "o-quilt"), ("where is the lamp?", "o-lamp"), ("where is the table?", "o-table"),
])
def test_a_kind_the_dictionary_defines_as_the_label_is_found(lamp_memory, question, expected):
    _assert_found(lamp_memory, question, expected)


@pytest.fixture(scope="module")
def notebook_memory(tmp_path_factory):
    """A paper notebook, seen as "book" and as "notebook"; a grey desktop computer."""
    return _hand_built(tmp_path_factory.mktemp("sense") / "mem", [
        {"id": "o-book", "label": "book", "description": "a small red paper book", "affordances": ["read"],
         "position": (1.0, 1.0), "seen": [1, 2, 3], "labels_seen": ["book", "book", "notebook"]},
        {"id": "o-chair", "label": "chair", "description": "a black office chair", "affordances": ["sit on"],
         "position": (4.0, 2.0), "seen": [4, 5]},
    ])


@pytest.mark.parametrize("question", ["have you seen my laptop?", "where is the notebook computer?"])
def test_a_label_read_in_the_sense_its_other_labels_name_stays_not_seen(notebook_memory, question):
    """Issue 11: 680bb87 found an absent laptop at 0.34 (the embedder reads "notebook" in both
    senses) and a notebook computer at 1.0 (a name of notebook's second sense) at a paper notebook
    also seen as "book", what "notebook" in its first sense is a kind of."""
    _assert_not_seen(notebook_memory, question)


@pytest.mark.parametrize("question", ["where is my notebook?", "where is the book?", "where is the chair?"])
def test_a_label_read_in_its_sense_is_still_found(notebook_memory, question):
    _assert_found(notebook_memory, question, "o-chair" if "chair" in question else "o-book")


# a word's rare sense: "stool" is a seat; a toilet only in its fourth, untagged sense
toilet_memory = _memory_fixture("rare", _things(
    ("o-toilet", "toilet", "a white ceramic toilet", ["flush"], (1.0, 1.0), [1, 2]),
    ("o-sink", "sink", "a white ceramic sink", ["wash hands at"], (2.0, 1.0), [3, 4]),
    ("o-bed", "bed", "a double bed with a blue cover", ["sleep in"], (6.0, 4.0), [5, 6]),
))
stool_memory = _memory_fixture("rare2", _things(
    ("o-toilet", "toilet", "a white ceramic toilet", ["flush"], (1.0, 1.0), [1, 2]),
    ("o-stool", "stool", "a small wooden stool", ["sit on"], (4.0, 2.0), [3, 4]),
))


@pytest.mark.parametrize("question", ["where is the stool?", "have you seen a couch?", "where is the lavatory?"])
def test_a_rare_sense_of_the_asked_word_finds_no_other_thing(toilet_memory, question):
    """Issues 11/17: 945178c found an absent stool at the toilet (1.0, and a goal there: stool's
    rare plumbing-fixture sense), and an absent couch at the bed (the psychoanalyst's couch)."""
    if "lavatory" in question:  # its common sense is the toilet: still found there, not at the sink
        _assert_found(toilet_memory, question, "o-toilet")
    else:
        _assert_not_seen(toilet_memory, question)


def test_a_word_in_its_common_sense_is_found_by_it(stool_memory):
    _assert_found(stool_memory, "where is the stool?", "o-stool")
    _assert_found(stool_memory, "where is the toilet?", "o-toilet")


# round 9: a place to do something is where one is while doing it, not what one does it by
reading_memory = _memory_fixture("act9", _things(
    ("o-lamp", "lamp", "a brass reading lamp for reading books", ["read by", "give light"], (3.0, 1.0), [1, 2, 3, 4, 5]),
    ("o-armchair", "armchair", "a green fabric armchair", ["sit on", "read in"], (3.5, 1.5), [4, 5]),
    ("o-table", "table", "a brown wood table", ["eat at", "put things on"], (6.0, 1.0), [6, 7]),
    ("o-kettle", "kettle", "a red metal kettle", ["boil water", "make tea"], (8.0, 2.0), [8, 9]),
    ("o-desk", "desk", "a white wooden desk", ["work at", "put things on"], (9.0, 4.0), [10]),
))


@pytest.mark.parametrize("question,expected", [
    ("Where is a comfy spot to read a book?", "o-armchair"),  # one reads IN it, BY the lamp
    ("Where is a good place to do paperwork?", "o-desk"),     # paperwork: "work that involves ...": work at
    ("Where can I read by some light?", "o-lamp"),            # guard: asks for what one reads by
    ("Where can I sit and read?", "o-armchair"),              # guard
])
def test_a_place_to_do_something_is_where_one_does_it(reading_memory, question, expected):
    """Issues 11/17: e86afd2 sent "a comfy spot to read a book" to the lamp ("read by"), which the
    retrieval ranked above the armchair ("read in")."""
    res = _ask_home(reading_memory, question)
    assert res.success and res.found, (question, res.answer)
    assert res.target_object_id == expected, (question, res.target_object_id, res.answer)
    assert res.goal is not None


# round 10: a use that does the opposite of the activity, or names its verb only as a thing
@pytest.mark.parametrize("thing,question", [
    # heating makes hot, the opposite of cold (WordNet's antonyms): was the stove, with a goal
    (("o-stove", "stove", "a white metal stove", ["cook on", "heat food"], (1.0, 1.0), [1, 2]),
     "Where can I keep my groceries cold?"),
    # outside the simulator's words: a heater warms, the butter is to stay cool
    (("o-heater", "heater", "a white oil heater", ["warm the room"], (1.0, 1.0), [1, 2]),
     "Where could I keep the butter cool?"),
    (("o-box", "cool box", "a blue plastic cool box", ["keep drinks cold"], (1.0, 1.0), [1, 2]),
     "Where can I keep my soup warm?"),
    # the fridge's "store *drinks*" names drinks as a thing stored, no drinking from it
    (FRIDGE, "Where did I see something I could drink coffee from?"),
    (FRIDGE, "Where could I drink some juice from?"),
])
def test_a_use_doing_the_opposite_does_not_serve_an_activity(tmp_path, thing, question):
    """Issues 11/17: 2004ba3 sent the robot to the stove, the cool box and the fridge (coffee); the
    heater and the juice were not found there either (guards)."""
    _assert_not_seen(_hand_built(tmp_path / "mem", _things(thing)), question)


opposite_memory = _memory_fixture("act10", _things(
    ("o-stove", "stove", "a white metal stove", ["cook on", "heat food"], (1.0, 1.0), [1, 2]),
    ("o-fridge", "fridge", "a white metal fridge", ["keep food cold", "store drinks"], (2.0, 1.0), [3, 4]),
    ("o-heater", "heater", "a white oil heater", ["warm the room"], (5.0, 1.0), [5, 6]),
    ("o-mug", "mug", "a red ceramic mug", ["drink from"], (3.0, 2.0), [7, 8]),
))


@pytest.mark.parametrize("question,expected", [
    ("Where can I keep my groceries cold?", "o-fridge"),
    ("Where could I keep the butter cool?", "o-fridge"),
    ("Where can I heat up my soup?", "o-stove"),
    ("Where did I see something I could drink coffee from?", "o-mug"),
    ("Where should I put the milk?", "o-fridge"),
])
def test_an_activity_is_served_by_what_does_it(opposite_memory, question, expected):
    res = _ask_home(opposite_memory, question)
    assert res.success and res.found, (question, res.answer)
    assert res.target_object_id == expected, (question, res.target_object_id, res.answer)
    assert res.goal is not None


# "put away" is a verb of its own (storing, not putting on), and a jacket is clothing
@pytest.mark.parametrize("thing,question", [
    (("o-ctable", "coffee table", "a low wood coffee table", ["put things on"], (1.0, 1.0), [1, 2]),
     "Where should I put away my jacket?"),
    (("o-ctable", "coffee table", "a low wood coffee table", ["put things on"], (1.0, 1.0), [1, 2]),
     "Where can I put my scarf away?"),
    (("o-wardrobe", "wardrobe", "a brown wood wardrobe", ["store clothes in"], (1.0, 1.0), [1, 2]),
     "Where can I put my books away?"),
])
def test_putting_away_is_storing_what_a_thing_stores(tmp_path, thing, question):
    """Issues 11/17: 2004ba3 sent the robot to the coffee table for "put my scarf away" (its "put
    things on" shares the word "put"); the jacket there and books (no clothes) are guards."""
    _assert_not_seen(_hand_built(tmp_path / "mem", _things(thing)), question)


closet_memory = _memory_fixture("act10c", _things(
    ("o-ctable", "coffee table", "a low wood coffee table", ["put things on"], (1.0, 1.0), [1, 2, 3, 4, 5]),
    ("o-wardrobe", "wardrobe", "a brown wood wardrobe", ["store clothes in"], (6.0, 1.0), [6, 7]),
    ("o-cupboard", "cupboard", "a white wood cupboard", ["store dishes in"], (3.0, 4.0), [8, 9]),
    ("o-rack", "shoe rack", "a black metal shoe rack", ["store shoes on"], (8.0, 3.0), [10]),
))


@pytest.mark.parametrize("question,expected", [
    ("Where should I put away my jacket?", "o-wardrobe"),
    ("Where can I put my scarf away?", "o-wardrobe"),
    ("Where do I put away the plates?", "o-cupboard"),
    ("Where can I put my boots away?", {"o-rack", "o-wardrobe"}),
    ("Where can I put my keys down?", "o-ctable"),  # guard: "put down" is a way to put
])
def test_an_activity_is_served_by_what_stores_it(closet_memory, question, expected):
    """2004ba3 found nothing for the jacket, the scarf and the boots (plates, keys: guards)."""
    res = _ask_home(closet_memory, question)
    assert res.success and res.found, (question, res.answer)
    assert res.target_object_id in ({expected} if isinstance(expected, str) else expected), (question, res.target_object_id)
    assert res.goal is not None


# two uses acting on one thing are matched by their verbs: washing hands is no drying them
@pytest.mark.parametrize("thing,question", [
    (TOWEL, "Where can I wash my hands?"),
    (("o-dryer", "hand dryer", "a white plastic hand dryer", ["dry hands"], (1.0, 1.0), [1, 2]),
     "Where could I wash my hands?"),
    (("o-basin", "basin", "a white ceramic basin", ["wash hands at"], (1.0, 1.0), [1, 2]),
     "Where can I dry my hands?"),
])
def test_a_use_sharing_only_what_is_acted_on_does_not_serve(tmp_path, thing, question):
    """Issues 11/17: 2004ba3 sent the robot to the towel for "wash my hands" (read depth seed 231:
    the sink unseen); its "dry hands with" was 0.41 over the background through "hands" alone."""
    _assert_not_seen(_hand_built(tmp_path / "mem", _things(thing)), question)


wash_memory = _memory_fixture("act10w", _things(
    TOWEL,
    ("o-sink", "sink", "a white ceramic sink", ["wash hands at"], (2.0, 1.0), [3, 4]),
))


@pytest.mark.parametrize("question,expected", [
    ("Where can I wash my hands?", "o-sink"),
    ("Where can I dry my hands?", "o-towel"),
    ("Where could I rinse my hands?", "o-sink"),
])
def test_washing_and_drying_hands_each_find_their_thing(wash_memory, question, expected):
    _assert_found(wash_memory, question, expected)


# what the purpose is done at, just below the relevance floor, before what one only sits on
meal_memory = _memory_fixture("act10m", _things(
    ("o-bench", "bench", "a gray wood bench", ["sit on", "put on shoes at", "put things on"], (8.0, 1.0),
     [1, 2, 3, 4, 5, 6, 7]),
    ("o-sofa", "sofa", "a gray fabric sofa", ["sit on", "lie down on", "watch TV from"], (5.0, 3.0), [10, 11]),
    ("o-stool", "stool", "a black metal stool", ["sit on"], (3.0, 3.0), [12, 13]),
    ("o-table", "dining table", "a brown wood dining table", ["eat at", "put things on"], (2.0, 1.0), [3]),
))


@pytest.mark.parametrize("question", ["Where could we sit down for breakfast?", "Where could we sit down for dinner?"])
def test_sitting_down_for_a_meal_is_at_the_table(meal_memory, question):
    """Issues 11/17: 2004ba3 sent "sit down for breakfast" to the stool (the table 0.33 against the
    0.36 floor; breakfast is "the first meal of the day", a meal is "eaten"); dinner: guard."""
    _assert_found(meal_memory, question, "o-table")


# round 11: a use done at a thing is where one is, not what one does the activity with
SOFA = ("o-sofa", "sofa", "a gray fabric sofa", ["sit on", "lie down on", "watch TV from"], (5.0, 3.0), [10, 11])
BOARD = ("o-board", "chopping board", "a brown wood chopping board", ["cut bread on", "chop vegetables on"],
         (3.0, 2.0), [8, 9])
LOW_TABLE = ("o-ctable", "coffee table", "a low wood coffee table", ["put things on"], (1.0, 1.0), [5, 6, 7])


@pytest.mark.parametrize("thing,question", [
    (SOFA, "Where did I see something to switch TV channels with?"),
    (SOFA, "Where can I change the TV channel?"),  # no "with": the verbs decide
    (BOARD, "Where is something to cut bread with?"),  # outside the simulator's things and words
    (BOARD, "What can I slice bread with?"),
    (LOW_TABLE, "Where could I put on my coat?"),  # "put on" is donning, not putting things on
    (SOFA, "What can I flip channels with?"),  # guard: not found on 680bb87 either
])
def test_a_place_for_another_use_of_the_same_thing_does_not_serve(tmp_path, thing, question):
    """Issue 11: 680bb87 sent the robot to the sofa for "something to switch TV channels with" (read
    seed 516, no remote seen: its "watch TV from" 0.39 over the background through "TV" alone), to the
    sofa for "change the TV channel", to a chopping board for a thing to cut bread with, and to the
    coffee table's "put things on" for "put on my coat"."""
    _assert_not_seen(_hand_built(tmp_path / "mem", _things(thing)), question)


tools_memory = _memory_fixture("act11", _things(
    SOFA, BOARD, LOW_TABLE,
    ("o-remote", "remote", "a black plastic remote", ["change the channel", "turn on the TV"], (2.0, 1.0), [1, 2]),
    ("o-knife", "knife", "a steel kitchen knife", ["cut food with"], (6.0, 2.0), [12, 13]),
    ("o-bench", "bench", "a gray wood bench", ["sit on", "put on shoes at", "put things on"], (8.0, 1.0), [3, 4]),
))


@pytest.mark.parametrize("question,expected", [
    ("Where did I see something to switch TV channels with?", "o-remote"),
    ("Where can I change the TV channel?", "o-remote"),
    ("What could I zap channels with?", "o-remote"),
    ("Where can I sit to watch TV?", "o-sofa"),
    ("Where is something to cut bread with?", "o-knife"),
    ("What can I slice bread with?", "o-knife"),
    ("Where can I chop vegetables?", "o-board"),
    ("Where can I sit to put on my shoes?", "o-bench"),
    ("Where can I sit to put my boots on?", "o-bench"),
])
def test_the_thing_an_activity_is_done_with_or_at_is_found(tools_memory, question, expected):
    _assert_found(tools_memory, question, expected)


# round 12: a thing named by its kind and what it is for ("a comfy seat for reading")
seat_memory = _memory_fixture("act12", _things(
    ("o-chair", "chair", "a white plastic chair", ["sit on"], (1.0, 1.0), [1, 2, 3, 4, 5, 6]),
    ("o-armchair", "armchair", "a navy leather armchair", ["sit on", "read in"], (4.0, 2.0), [7, 8]),
    ("o-sofa", "couch", "a blue leather couch", ["sit on", "lie down on", "watch TV from"], (6.0, 3.0), [9, 10]),
    ("o-kettle", "kettle", "a red metal kettle", ["boil water", "make tea"], (8.0, 1.0), [11, 12]),
))
plain_seat_memory = _memory_fixture("act12b", _things(
    ("o-chair", "chair", "a white plastic chair", ["sit on"], (1.0, 1.0), [1, 2, 3]),
    ("o-kettle", "kettle", "a red metal kettle", ["boil water", "make tea"], (8.0, 1.0), [4, 5]),
))


@pytest.mark.parametrize("question,expected", [
    ("Where is a comfy seat for reading?", "o-armchair"),  # a seat (lexicon) whose use is reading
    ("Where is a nice seat to read in?", "o-armchair"),
])
def test_a_kind_named_with_its_use_is_found_at_one_that_serves_it(seat_memory, question, expected):
    """Issue 11: 2f709df answered "not seen" although an armchair that one reads in was seen: no
    label is "comfy seat reading", and the question names a thing, so the activity rules never ran."""
    _assert_found(seat_memory, question, expected)


@pytest.mark.parametrize("question", [
    "Where is a comfy seat for reading?",  # only a kitchen chair: a seat, but nothing says reading
    "Where is a good seat for cooking?",
])
def test_a_kind_named_with_a_use_nothing_serves_stays_not_seen(plain_seat_memory, question):
    """The kind alone is no answer: the chair is named in the text at most, never as a goal."""
    _assert_not_seen(plain_seat_memory, question)


def test_activity_questions_count_a_generalisation_worlds_own_classes(tmp_path):
    """A --varied world's dresser ("store clothes in") serves "put away my jacket": 2f709df asked it
    as a use nothing in the world serves (any find a false one) and never accepted the dresser."""
    from vlkng_ros.eval.absent import activity_questions

    objs = [{"label": "dresser", "gt_track": "t1"}, {"label": "candle", "gt_track": "t2"},
            {"label": "bed", "gt_track": "t3"}]
    (tmp_path / "world.json").write_text(json.dumps({"objects": objs}))
    (tmp_path / "annotations.jsonl").write_text(json.dumps({"objects": [{"gt_track": "t1"}, {"gt_track": "t3"}]}) + "\n")
    qs = {q.question: q for q in activity_questions(tmp_path)}
    jacket = qs["Where should I put away my jacket?"]
    assert jacket.present and jacket.label == "dresser"
    # the candle is in the world, unseen: light is neither asked as present nor as absent
    assert "Where did I see something that gives light?" not in qs
    assert not qs["Where can I take a bath?"].present  # guard: nothing in this world serves it


# a seat and a table named without an adjective ("a seat for cooking"): "seat" and "table" are verbs
# too, and 945178c read the question as an activity ("seat cooking") and found what serves it
home_uses_memory = _memory_fixture("act13", _things(
    ("o-counter", "counter", "a gray stone counter", ["prepare food on", "put things on"], (1.0, 1.0), [1, 2, 3]),
    ("o-stove", "stove", "a black metal stove", ["cook on"], (2.0, 1.0), [4, 5]),
    ("o-rack", "shoe rack", "a black metal shoe rack", ["store shoes on"], (5.0, 0.5), [6, 7, 8]),
    ("o-bench", "bench", "a gray wood bench", ["sit on", "put on shoes at", "put things on"], (5.5, 1.5), [9, 10]),
    ("o-table", "table", "a brown wood table", ["eat at", "put things on"], (3.0, 3.0), [11, 12]),
    ("o-desk", "desk", "a black wood desk", ["work at", "put things on"], (7.0, 4.0), [13, 14]),
))


@pytest.mark.parametrize("question", [
    "Where is a seat for cooking?",  # 945178c: the counter (its "prepare food on"), with a goal
    "Where can I find a seat for cooking?",
])
def test_a_seat_or_table_named_for_a_use_none_of_them_serves_is_not_seen(home_uses_memory, question):
    """Issue 11: after a determiner "seat" and "table" are nouns; the thing must be one (lexicon)
    and serve the use (``kind_for_use``). None here cooks: not seen, no goal."""
    _assert_not_seen(home_uses_memory, question)


@pytest.mark.parametrize("question,expected", [
    ("Where is a seat to put on my shoes?", "o-bench"),  # 945178c: the shoe rack, which is no seat
    ("Where is a table to eat at?", "o-table"),
    ("Where is a table to work at?", "o-desk"),  # the lexicon files a desk under table
])
def test_a_seat_or_table_named_for_a_use_is_found_at_one_that_serves_it(home_uses_memory, question, expected):
    _assert_found(home_uses_memory, question, expected)


# round 14: a use named by a noun ("a movie night", "a long soak"), read through the dictionary to a
# thing's use: "watch" is to "see a movie"; a bath is where "you soak and wash your body"
bath_memory = _memory_fixture("act14", _things(
    ("o-tub", "bathtub", "a white bathtub", ["take a bath in"], (1.0, 1.0), [1, 2, 3]),
    ("o-sink", "sink", "a white sink", ["wash hands at"], (2.0, 1.0), [4, 5]),
    ("o-table", "table", "a brown wood table", ["eat at", "put things on"], (6.0, 3.0), [6, 7]),
    ("o-chair", "chair", "a black wood chair", ["sit on"], (6.5, 3.5), [8, 9]),
))
no_bath_memory = _memory_fixture("act14b", _things(
    ("o-sink", "sink", "a white sink", ["wash hands at"], (2.0, 1.0), [4, 5]),
    ("o-table", "table", "a brown wood table", ["eat at", "put things on"], (6.0, 3.0), [6, 7]),
    ("o-kettle", "kettle", "a red metal kettle", ["boil water", "make tea"], (8.0, 1.0), [11, 12]),
))


def test_a_seat_for_a_movie_night_is_the_one_to_watch_tv_from(seat_memory):
    """1b61aee: not seen, though the couch one watches TV from was: "movie night" names no verb,
    and nothing compared it with "watch TV"; the kitchen chair and the armchair stay no answer."""
    _assert_found(seat_memory, "Where is the best seat for a movie night?", "o-sofa")


def test_a_long_soak_is_had_in_the_bathtub(bath_memory):
    """1b61aee: not seen, though a bathtub ("take a bath in") was: "have a long soak" names no thing
    the definitions look for."""
    _assert_found(bath_memory, "Where could I have a long soak?", "o-tub")


@pytest.mark.parametrize("memory,question", [
    ("bath_memory", "Where is a table to take a bath?"),  # 1b61aee: the table, "eat" being "take in food"
    ("no_bath_memory", "Where could I have a long soak?"),  # a sink is no place to soak
    ("no_bath_memory", "Where is the best seat for a movie night?"),  # nothing to watch TV from
    ("plain_seat_memory", "Where is the best seat for a movie night?"),  # a chair is only sat on
])
def test_a_use_nothing_seen_serves_stays_not_seen(request, memory, question):
    _assert_not_seen(request.getfixturevalue(memory), question)


# a refrigerator also seen as "fridge", a sideboard, a table and a bench also seen as "seat": absent compounds and closed compounds
# that share a word, a synonym or letters with them (read --varied tours: all three were found)
lookalike_memory = _memory_fixture("lookalike", [{**_things(
    ("o-fridge", "refrigerator", "a tall white refrigerator", ["store food in"], (1.0, 1.0), [1, 2]))[0],
    "labels_seen": ["refrigerator", "fridge"]}, *_things(
    ("o-sideboard", "sideboard", "a long brown wooden sideboard", ["store dishes in"], (4.0, 2.0), [3, 4]),
    ("o-table", "table", "a large wooden table", ["eat at"], (6.0, 3.0), [5, 6]),
), {**_things(("o-bench", "bench", "a long wooden bench", ["sit on"], (8.0, 1.0), [7, 8]))[0],
    "labels_seen": ["bench", "seat"]}])


@pytest.mark.parametrize("question", [
    "where is the skateboard?",  # a board with wheels; a sideboard is furniture (0.26 over background)
    "where is the table board?",  # a kind of board; "table" and "board" are one only as "food or meals"
    "have you seen my fridge printer?",  # a printer: the refrigerator is only what its modifier names
])
def test_a_lookalike_of_a_seen_thing_is_not_found(lookalike_memory, question):
    _assert_not_seen(lookalike_memory, question)


@pytest.mark.parametrize("question,expected", [
    ("where is the sideboard?", "o-sideboard"),
    ("where is the fridge?", "o-fridge"),
    ("have you seen my refrigerator?", "o-fridge"),
    ("take me to the table", "o-table"),
    ("where is the seat bench?", "o-bench"),  # a bench is "a long seat": its label "seat" names it too
])
def test_the_seen_lookalikes_stay_found(lookalike_memory, question, expected):
    _assert_found(lookalike_memory, question, expected)


# a table and a nightstand ("night" + "stand", a small table; WordNet knows neither "night table" nor
# "nightstand"), and a table alone: a compound the lexicon lacks, its modifier closed up in a label
nightstand_memory = _memory_fixture("nightstand", _things(
    ("o-table", "table", "a large wooden table", ["eat at"], (1.0, 1.0), [1, 2]),
    ("o-nightstand", "nightstand", "a small wood nightstand", ["put things on"], (9.0, 4.0), [3, 4]),
))
table_only_memory = _memory_fixture("tableonly", _things(
    ("o-table", "table", "a large wooden table", ["eat at"], (1.0, 1.0), [1, 2]),
    ("o-lamp", "lamp", "a small white lamp", ["give light"], (4.0, 2.0), [3, 4]),
))


@pytest.mark.parametrize("question", ["what room was the night table in?", "where is the night table?"])
def test_a_night_table_is_the_nightstand_not_the_table(nightstand_memory, question):
    """Read depth tour 735: "the night table" sent the robot to a table 10 m from the nightstand seen.
    A stand is "a small table for holding articles", and "night" is the nightstand's own front: the
    modifier shared, the heads one; the table is only the head (0.41 over background, 0.24 the
    nightstand by the embedder alone)."""
    _assert_found(nightstand_memory, question, "o-nightstand")


def test_a_night_table_is_the_table_where_no_nightstand_was_seen(table_only_memory):
    _assert_found(table_only_memory, "where is the night table?", "o-table")


@pytest.mark.parametrize("question", ["where is the night light?", "where is the night lamp?"])
def test_another_head_after_the_nightstands_front_stays_not_seen(nightstand_memory, question):
    _assert_not_seen(nightstand_memory, question)
