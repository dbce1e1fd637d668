"""The GraphStore contract, run on every backend available (see helpers_stores.graph_backends)."""

from __future__ import annotations

import threading

import pytest

from helpers_stores import (StoreFactory, falkordb_server, falkordb_skip_reason, graph_backends,
                             make_keyframe, make_object, make_relation)
from vlkng_ros.core.model import ObjectNode, Pose
from vlkng_ros.core.stores.base import GraphStore, StoreError

EVIL = '"); MATCH (n) DETACH DELETE n //'


@pytest.fixture(params=graph_backends())
def factory(request, tmp_path):
    if request.param == "neo4j-falkordb" and falkordb_server() is None:
        pytest.skip(falkordb_skip_reason())
    f = StoreFactory(request.param, tmp_path)
    yield f
    f.cleanup()


@pytest.fixture
def store(factory):
    s = factory.open()
    yield s
    s.close()


def ids(objs: list[ObjectNode]) -> list[str]:
    return [o.id for o in objs]


# --- keyframes ----------------------------------------------------------------------------------
def test_keyframes_upsert_get_order_count(store: GraphStore):
    pose = Pose.from_xy_yaw(1.5, -2.0, 0.3)
    store.upsert_keyframes([make_keyframe("b", 30, 1, pose), make_keyframe("a", 20, 1),
                            make_keyframe("b", 10, 0), make_keyframe("a", 5, 0, pose)])
    assert store.get_keyframe("b", 30).pose == pose
    assert store.get_keyframe("b", 10).pose is None  # None round-trips, nothing made up
    assert store.get_keyframe("b", 11) is None
    assert [(k.tour_id, k.stamp_ns) for k in store.keyframes()] == [("a", 5), ("a", 20), ("b", 10), ("b", 30)]
    assert [k.stamp_ns for k in store.keyframes("b")] == [10, 30]
    assert store.count_keyframes() == 4 and store.count_keyframes("a") == 2
    assert store.count_keyframes("zzz") == 0
    assert store.tours() == ["a", "b"]
    replaced = make_keyframe("b", 10, 0, pose)
    replaced.place = "kitchen"
    store.upsert_keyframes([replaced])
    assert store.get_keyframe("b", 10) == replaced and store.count_keyframes() == 4


def test_stamps_are_full_int64_nanoseconds(store: GraphStore):
    stamp = 1_726_000_000_123_456_789
    store.upsert_keyframes([make_keyframe("t", stamp)])
    store.apply_merge("t#000000", [make_object("o1", "cup", [("t", stamp)])], [])
    assert store.get_keyframe("t", stamp).stamp_ns == stamp
    assert store.objects_in_frames([("t", stamp)]) == {("t", stamp): ["o1"]}
    assert store.get_objects(["o1"])[0].last_seen_ns == stamp


# --- merge --------------------------------------------------------------------------------------
def test_apply_merge_creates_and_replaces_objects(store: GraphStore):
    cup = make_object("o1", "cup", [("t", 1), ("t", 2)], (1.0, 1.0), description="red cup")
    table = make_object("o2", "table", [("t", 2)], None)
    assert store.apply_merge("t#000000", [cup, table], [make_relation("o1", "on", "o2", [2])])
    assert store.chunk_merged("t#000000") and not store.chunk_merged("t#000001")
    assert store.get_objects(["o2", "o1", "nope"]) == [table, cup]
    assert store.objects_in_frames([("t", 1)]) == {("t", 1): ["o1"]}

    moved = make_object("o1", "mug", [("t", 5)], (4.0, 4.0), labels_seen=["mug", "cup"])
    assert store.apply_merge("t#000001", [moved], [])
    assert store.get_objects(["o1"]) == [moved]  # full state replaced, observations included
    # ... and so were the index rows: old frames, position and labels no longer find it
    assert store.objects_in_frames([("t", 1), ("t", 5)]) == {("t", 1): [], ("t", 5): ["o1"]}
    assert ids(store.objects_near(1.0, 1.0, 0.5)) == []
    assert ids(store.objects_near(4.0, 4.0, 0.5)) == ["o1"]
    assert ids(store.objects_by_label(["mug"])) == ["o1"]
    assert store.count_objects() == 2
    assert ids(store.iter_objects()) == ["o1", "o2"]
    assert store.merged_chunks() == {"t#000000", "t#000001"}
    assert store.merged_chunks("t") == {"t#000000", "t#000001"} and store.merged_chunks("u") == set()


def test_apply_merge_is_idempotent(store: GraphStore):
    obj = make_object("o1", "cup", [("t", 1)], (0.0, 0.0))
    assert store.apply_merge("t#000000", [obj], []) is True
    other = make_object("o1", "bowl", [("t", 9)], (5.0, 5.0))
    assert store.apply_merge("t#000000", [other, make_object("o9", "x")],
                             [make_relation("o1", "on", "o9", [9])]) is False
    assert store.get_objects(["o1"]) == [obj]
    assert store.count_objects() == 1 and store.count_relations() == 0


def test_apply_merge_removes_consolidated_objects(store: GraphStore):
    a = make_object("a", "bench", [("t", 1)], (1.0, 1.0))
    b = make_object("b", "bench", [("t", 2)], (1.4, 1.0), labels_seen=["bench", "seat"])
    lamp = make_object("l", "lamp", [("t", 2)], (2.0, 1.0))
    store.apply_merge("t#000000", [a, b, lamp], [make_relation("b", "next to", "l", [2]),
                                                 make_relation("l", "next to", "b", [2])])
    # b turns out to be a: one node with both sightings; b and its relations are gone
    both = make_object("a", "bench", [("t", 1), ("t", 2)], (1.2, 1.0))
    assert store.apply_merge("t#000001", [both], [make_relation("a", "next to", "l", [2])],
                             removed_ids=["b"])
    assert store.get_objects(["a", "b"]) == [both] and store.count_objects() == 2
    assert store.objects_in_frames([("t", 2)]) == {("t", 2): ["a", "l"]}
    assert store.objects_by_label(["seat"]) == []
    assert ids(store.objects_near(1.4, 1.0, 0.1)) == []
    assert [r.key for r in store.iter_relations()] == [("a", "next to", "l")]
    # a removal in a chunk that was already merged changes nothing
    assert store.apply_merge("t#000001", [], [], removed_ids=["a"]) is False
    assert store.count_objects() == 2


def test_same_id_twice_in_one_merge_keeps_the_last(store: GraphStore):
    first = make_object("o1", "cup", [("t", 1)], (0.0, 0.0))
    last = make_object("o1", "mug", [("t", 2)], (3.0, 0.0))
    store.apply_merge("t#000000", [first, last], [])
    assert store.get_objects(["o1"]) == [last] and store.count_objects() == 1
    assert store.objects_in_frames([("t", 1), ("t", 2)]) == {("t", 1): [], ("t", 2): ["o1"]}
    assert store.objects_by_label(["cup"]) == []


def test_relation_stamps_union(store: GraphStore):
    a, b = make_object("a", "cup", [("t", 1)]), make_object("b", "table", [("t", 1)])
    store.apply_merge("t#000000", [a, b], [make_relation("a", "on", "b", [3, 1]),
                                           make_relation("a", "on", "b", [2])])
    store.apply_merge("t#000001", [], [make_relation("a", "on", "b", [5, 2]),
                                       make_relation("b", "under", "a", [5])])
    rels = list(store.iter_relations())
    assert [(r.key, r.stamps) for r in rels] == [(("a", "on", "b"), [1, 2, 3, 5]),
                                                 (("b", "under", "a"), [5])]
    assert rels[0].tour_id == "t"
    assert store.count_relations() == 2
    assert [r.key for r in store.relations_of(["b"])] == [("a", "on", "b"), ("b", "under", "a")]
    assert [r.key for r in store.relations_of(["a"], limit=1)] == [("a", "on", "b")]
    assert store.relations_of(["zzz"]) == []


def test_relation_to_unknown_object_is_rejected_whole(store: GraphStore):
    with pytest.raises(ValueError, match="ghost"):
        store.apply_merge("t#000000", [make_object("a", "cup")], [make_relation("a", "on", "ghost", [1])])
    assert not store.chunk_merged("t#000000") and store.count_objects() == 0


def test_apply_merge_is_atomic(store: GraphStore):
    store.apply_merge("t#000000", [make_object("keep", "cup", [("t", 1)], (0.0, 0.0))], [])
    good = make_object("new", "plate", [("t", 2)], (1.0, 0.0))
    replaced = make_object("keep", "bowl", [("t", 2)], (9.0, 9.0))
    bad = make_object("bad", "chair")
    bad.attributes = {"color": object()}  # cannot be serialised: fails after the others
    with pytest.raises(TypeError):
        store.apply_merge("t#000001", [good, replaced, bad], [make_relation("new", "on", "keep", [2])])
    assert not store.chunk_merged("t#000001")
    assert ids(store.iter_objects()) == ["keep"]
    assert store.get_objects(["keep"])[0].label == "cup"
    assert ids(store.objects_near(0.0, 0.0, 0.1)) == ["keep"]
    assert store.count_relations() == 0
    # the chunk can be merged once its data is fixed
    assert store.apply_merge("t#000001", [good, replaced], [])


def test_database_error_mid_statement_rolls_back(factory, tmp_path):
    """A failure inside the database while the merge statement runs leaves nothing behind."""
    if factory.backend == "sqlite":
        pytest.skip("sqlite: covered by test_apply_merge_is_atomic (serialised inside the tx)")
    from vlkng_ros.core.stores import neo4j_store

    store = factory.open()
    try:
        real_row = neo4j_store._object_row

        def poisoned_row(obj):
            row = real_row(obj)
            if obj.id == "bad":
                row["x"] = {"not": "a property value"}  # rejected by the engine, mid-UNWIND
            return row

        neo4j_store._object_row = poisoned_row
        try:
            with pytest.raises(Exception) as failure:
                store.apply_merge("t#000000", [make_object("good", "cup", [("t", 1)], (0.0, 0.0)),
                                               make_object("bad", "cup", [("t", 1)], (0.0, 0.0))], [])
        finally:
            neo4j_store._object_row = real_row
        assert not isinstance(failure.value, (TypeError, ValueError)), failure.value  # from the engine
        assert not store.chunk_merged("t#000000")
        assert store.count_objects() == 0 and store.objects_in_frames([("t", 1)]) == {("t", 1): []}
    finally:
        store.close()


# --- queries ------------------------------------------------------------------------------------
def test_objects_near(store: GraphStore):
    objs = [make_object("far", "cup", [("t", 1)], (10.0, 0.0)),
            make_object("mid", "cup", [("t", 1)], (1.5, 0.0)),
            make_object("near", "cup", [("t", 1)], (0.0, 0.5)),
            make_object("edge", "cup", [("t", 1)], (-2.0, 0.0)),
            make_object("diag", "cup", [("t", 1)], (1.9, 1.9)),  # inside the box, outside the circle
            make_object("nopos", "cup", [("t", 1)], None)]
    store.apply_merge("t#000000", objs, [])
    assert ids(store.objects_near(0.0, 0.0, 2.0)) == ["near", "mid", "edge"]
    assert ids(store.objects_near(0.0, 0.0, 2.0, limit=2)) == ["near", "mid"]
    assert ids(store.objects_near(10.0, 0.0, 0.01)) == ["far"]
    assert ids(store.objects_near(0.0, 0.0, 100.0)) == ["near", "mid", "edge", "diag", "far"]
    assert store.objects_near(50.0, 50.0, 1.0) == []


def test_objects_by_label(store: GraphStore):
    store.apply_merge("t#000000", [
        make_object("o1", "Mug", [("t", 1)], labels_seen=["Mug", "Cup"]),
        make_object("o2", "cup", [("t", 3)]),
        make_object("o3", "plate", [("t", 2)]),
        make_object("o4", "cup holder", [("t", 4)])], [])
    assert ids(store.objects_by_label(["CUP"])) == ["o2", "o1"]  # most recently seen first
    assert ids(store.objects_by_label(["mug", "plate"])) == ["o3", "o1"]
    assert ids(store.objects_by_label(["cup", "mug"], limit=1)) == ["o2"]
    assert store.objects_by_label(["cu"]) == [] and store.objects_by_label([]) == []


def test_objects_in_frames_and_recent(store: GraphStore):
    store.apply_merge("a#000000", [
        make_object("o1", "cup", [("a", 10), ("a", 20)]),
        make_object("o2", "plate", [("a", 20), ("b", 50)]),
        make_object("o3", "fork", [("b", 60)])], [])
    got = store.objects_in_frames([("a", 20), ("a", 10), ("b", 60), ("c", 1)])
    assert got == {("a", 20): ["o1", "o2"], ("a", 10): ["o1"], ("b", 60): ["o3"], ("c", 1): []}
    assert store.objects_in_frames([]) == {}
    assert ids(store.recent_objects("a", 15)) == ["o1", "o2"]  # both last seen in "a" at 20
    assert ids(store.recent_objects("b", 0)) == ["o3", "o2"]
    assert ids(store.recent_objects("b", 55)) == ["o3"]
    assert ids(store.recent_objects("a", 21)) == [] and ids(store.recent_objects("b", 0, limit=1)) == ["o3"]


def test_meta(store: GraphStore):
    assert store.get_meta("embedder") is None
    store.set_meta("embedder", "minilm")
    store.set_meta("embedder", "siglip2")
    assert store.get_meta("embedder") == "siglip2"


def test_counts_on_empty_store(store: GraphStore):
    assert (store.count_objects(), store.count_relations(), store.count_keyframes()) == (0, 0, 0)
    assert store.tours() == [] and list(store.iter_objects()) == [] and store.merged_chunks() == set()
    assert store.get_objects([]) == [] and store.relations_of([]) == []


def test_iteration_pages_through_many(store: GraphStore):
    objs = [make_object(f"o{i:04d}", "box", [("t", i)]) for i in range(1203)]
    rels = [make_relation(f"o{i:04d}", "next to", f"o{i + 1:04d}", [i]) for i in range(1202)]
    store.apply_merge("t#000000", objs, rels)
    assert ids(store.iter_objects()) == [o.id for o in objs]
    assert [r.key for r in store.iter_relations()] == [r.key for r in rels]
    assert store.count_objects() == 1203 and store.count_relations() == 1202
    # a walk that stops and resumes (the camera height re-solve, a page per chunk)
    assert ids(store.objects_after("o0499", 3)) == ["o0500", "o0501", "o0502"]
    assert ids(store.objects_after("o1201", 10)) == ["o1202"] and store.objects_after("o1202", 10) == []
    assert store.objects_after("", 0) == []


def test_reopen_keeps_everything(factory):
    store = factory.open()
    store.upsert_keyframes([make_keyframe("t", 1, 0, Pose(1.0, 2.0))])
    store.apply_merge("t#000000", [make_object("o1", "cup", [("t", 1)], (1.0, 2.0)),
                                   make_object("o2", "table", [("t", 1)])],
                      [make_relation("o1", "on", "o2", [1])])
    store.set_meta("k", "v")
    store.close()
    with pytest.raises(StoreError):
        store.count_objects()
    again = factory.open()
    try:
        assert again.get_keyframe("t", 1).pose == Pose(1.0, 2.0)
        assert ids(again.objects_near(1.0, 2.0, 0.1)) == ["o1"]
        assert again.count_relations() == 1 and again.get_meta("k") == "v"
        assert again.apply_merge("t#000000", [], []) is False
    finally:
        again.close()


def test_injection_text_is_stored_verbatim_and_harmless(store: GraphStore):
    label = EVIL
    obj = make_object("o'1\"", label, [("t", 1)], (0.0, 0.0), labels_seen=[label, "x' OR '1'='1"],
                      description=f"desc {EVIL} ; DROP TABLE objects; --")
    other = make_object("o2", "table", [("t", 1)])
    store.apply_merge("t#000000", [obj, other], [make_relation(obj.id, EVIL, "o2", [1])])
    store.set_meta(EVIL, EVIL)
    assert store.get_objects([obj.id]) == [obj]
    assert ids(store.objects_by_label([label.upper()])) == [obj.id]
    assert ids(store.objects_by_label(["x' or '1'='1"])) == [obj.id]
    assert store.relations_of([obj.id])[0].predicate == EVIL
    assert store.get_meta(EVIL) == EVIL
    assert store.count_objects() == 2 and store.count_relations() == 1


def test_namespaces_are_separate(factory):
    if factory.backend == "sqlite":
        pytest.skip("sqlite: one file per memory, namespaces are for shared servers")
    first, second = factory.open("site_a"), factory.open("site_b")
    try:
        first.apply_merge("t#000000", [make_object("o1", "cup", [("t", 1)], (0.0, 0.0))], [])
        first.upsert_keyframes([make_keyframe("t", 1)])
        assert second.count_objects() == 0 and second.objects_near(0.0, 0.0, 1.0) == []
        assert second.tours() == [] and not second.chunk_merged("t#000000")
        assert second.apply_merge("t#000000", [make_object("o1", "plate")], [])
        assert first.get_objects(["o1"])[0].label == "cup"
    finally:
        first.close()
        second.close()


def test_invalid_namespace_rejected():
    from vlkng_ros.core.stores.neo4j_store import Neo4jGraphStore

    with pytest.raises(ValueError, match="namespace"):
        Neo4jGraphStore(namespace="a b`) DETACH DELETE", runner=object())


def test_concurrent_merges_from_threads(store: GraphStore):
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            for i in range(5):
                store.apply_merge(f"t#{k:03d}{i:03d}", [make_object(f"w{k}-{i}", "cup", [("t", i)])], [])
                store.objects_by_label(["cup"])
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and store.count_objects() == 20 and len(store.merged_chunks("t")) == 20


# --- sqlite specifics ---------------------------------------------------------------------------
def test_sqlite_objects_near_uses_index(tmp_path):
    from vlkng_ros.core.stores.sqlite_store import SqliteGraphStore

    for use_rtree, marker in ((True, "VIRTUAL TABLE INDEX"), (False, "USING INDEX objects_by_xy")):
        s = SqliteGraphStore(tmp_path / f"g{use_rtree}.sqlite", use_rtree=use_rtree)
        try:
            s.apply_merge("t#0", [make_object(f"o{i}", "cup", [("t", i)], (float(i), 0.0))
                                  for i in range(50)] + [make_object("np", "cup")], [])
            plan = " | ".join(s.explain_objects_near())
            assert marker in plan and "SCAN o" not in plan.replace("SCAN o USING", ""), plan
            assert ids(s.objects_near(10.2, 0.0, 1.5)) == ["o10", "o11", "o9"]
        finally:
            s.close()


def test_sqlite_corrupt_file_is_a_store_error(tmp_path):
    from vlkng_ros.core.stores.sqlite_store import SqliteGraphStore

    path = tmp_path / "graph.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="graph.sqlite"):
        SqliteGraphStore(path)


# --- registry -----------------------------------------------------------------------------------
def test_registry_opens_configured_stores(tmp_path, monkeypatch):
    from vlkng_ros.core.config import StoreConfig
    from vlkng_ros.core.stores.registry import open_graph_store, open_vector_store

    graph = open_graph_store(StoreConfig(), tmp_path)
    try:
        assert graph.name == "sqlite" and (tmp_path / "graph.sqlite").exists()
    finally:
        graph.close()
    vectors = open_vector_store(StoreConfig(), tmp_path)
    vectors.close()
    assert (tmp_path / "qdrant").is_dir()
    with pytest.raises(ValueError, match="sqlite"):
        open_graph_store(StoreConfig(graph_backend="mysql"), tmp_path)
    with pytest.raises(ValueError, match="qdrant"):
        open_vector_store(StoreConfig(vector_backend="faiss"), tmp_path)
    monkeypatch.delenv("VLKNG_NO_SUCH_PASSWORD", raising=False)
    with pytest.raises(StoreError, match="VLKNG_NO_SUCH_PASSWORD"):
        open_graph_store(StoreConfig(graph_backend="neo4j", neo4j_password_env="VLKNG_NO_SUCH_PASSWORD"),
                         tmp_path)


def test_unreachable_neo4j_is_a_store_error_without_the_password(tmp_path, monkeypatch):
    from vlkng_ros.core.config import StoreConfig
    from vlkng_ros.core.stores.registry import open_graph_store

    monkeypatch.setenv("VLKNG_TEST_SECRET_PW", "s3cret-value")
    cfg = StoreConfig(graph_backend="neo4j", neo4j_uri="bolt://127.0.0.1:9",
                      neo4j_password_env="VLKNG_TEST_SECRET_PW")
    with pytest.raises(StoreError, match="bolt://127.0.0.1:9") as err:
        open_graph_store(cfg, tmp_path)
    assert "s3cret-value" not in str(err.value)
