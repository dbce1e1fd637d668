"""Qdrant vector store. Congruence: the same operations on local on-disk mode and ``:memory:``
give the same results. A Qdrant server cannot run here (no binary, no network), so the URL
path (and its payload indexes) is only exercised by the constructor's error handling."""

from __future__ import annotations

import numpy as np
import pytest

from vlkng_ros.core.stores.base import StoreError
from vlkng_ros.core.stores.qdrant_store import QdrantVectorStore, point_uuid

DIM = 16


def unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def exercise(store: QdrantVectorStore) -> list:
    """A fixed script of operations; returns everything observable."""
    rng = np.random.default_rng(7)
    vecs = unit(rng, 40)
    ids = [f"obj-{i}" for i in range(40)]
    payloads = [{"object_id": f"obj-{i}", "tour_id": "home" if i % 2 else "office", "label": "cup"}
                for i in range(40)]
    store.ensure_collection("ns_objects", DIM)
    store.upsert("ns_objects", ids, vecs, payloads)
    store.upsert("ns_objects", ["obj-3"], vecs[5:6], [{"object_id": "obj-3", "tour_id": "home"}])
    out = [store.count("ns_objects")]
    for q in (vecs[5], vecs[0], unit(rng, 1)[0]):
        for where in (None, {"tour_id": "home"}, {"tour_id": "office", "label": "cup"}):
            out.append([(h.point_id, round(h.score, 5), h.payload)
                        for h in store.search("ns_objects", q, 5, where)])
    return out


def test_local_path_and_memory_are_congruent(tmp_path):
    disk = QdrantVectorStore(path=str(tmp_path / "q"))
    mem = QdrantVectorStore(path=":memory:")
    try:
        a, b = exercise(disk), exercise(mem)
    finally:
        disk.close()
        mem.close()
    assert a == b
    assert a[0] == 40  # re-upsert replaced, did not add
    top = a[1]  # query = vecs[5]: obj-5 and the re-upserted obj-3 both match exactly
    assert {top[0][0], top[1][0]} == {"obj-3", "obj-5"} and top[0][1] == pytest.approx(1.0, abs=1e-4)
    assert all(h[2]["tour_id"] == "home" for h in a[2]) and len(a[2]) == 5
    assert all(h[2]["tour_id"] == "office" for h in a[3])
    assert a[1][0][2] in ({"object_id": "obj-3", "tour_id": "home"},
                          {"object_id": "obj-5", "tour_id": "home", "label": "cup"})


def test_persistence_across_reopen(tmp_path):
    rng = np.random.default_rng(1)
    vecs = unit(rng, 3)
    store = QdrantVectorStore(path=str(tmp_path / "q"))
    store.upsert("c", ["a", "b", "c"], vecs, [{"i": 0}, {"i": 1}, {"i": 2}])
    store.close()
    again = QdrantVectorStore(path=str(tmp_path / "q"))
    try:
        assert again.count("c") == 3
        hit = again.search("c", vecs[1], 1)[0]
        assert hit.point_id == "b" and hit.payload == {"i": 1}
        with pytest.raises(StoreError, match="16-d|3-d|holds"):
            again.ensure_collection("c", DIM + 1)
    finally:
        again.close()


def test_dim_clash_and_bad_input(tmp_path):
    store = QdrantVectorStore(path=":memory:")
    try:
        store.ensure_collection("c", DIM)
        store.ensure_collection("c", DIM)  # same dim: fine
        with pytest.raises(StoreError, match="holds 16-d vectors"):
            store.ensure_collection("c", 8)
        with pytest.raises(ValueError, match="line up"):
            store.upsert("c", ["a", "b"], np.zeros((1, DIM)), [{}])
        with pytest.raises(ValueError, match="NaN"):
            store.upsert("c", ["a"], np.full((1, DIM), np.nan), [{}])
        with pytest.raises(ValueError, match="collection"):
            store.count("bad/name")
        with pytest.raises(ValueError, match="8-d query"):
            store.search("c", np.ones(8), 3)
        assert store.search("missing", np.ones(DIM), 3) == [] and store.count("missing") == 0
    finally:
        store.close()


def test_ids_map_deterministically():
    assert point_uuid("obj-1") == point_uuid("obj-1") != point_uuid("obj-2")
    assert len(point_uuid("any string / with ' quotes")) == 36


def test_10k_points_search_sanity():
    rng = np.random.default_rng(3)
    vecs = unit(rng, 10_000, 32)
    store = QdrantVectorStore(path=":memory:")
    try:
        store.upsert("big", [f"p{i}" for i in range(10_000)], vecs,
                     [{"tour_id": f"t{i % 10}"} for i in range(10_000)])
        assert store.count("big") == 10_000
        for i in (0, 4321, 9999):
            query = vecs[i] + 0.05 * unit(rng, 1, 32)[0]
            hits = store.search("big", query, 10)
            exact = np.argsort(-(vecs @ (query / np.linalg.norm(query))))[:10]
            assert [h.point_id for h in hits] == [f"p{j}" for j in exact]
            assert hits[0].point_id == f"p{i}"
            filtered = store.search("big", query, 10, where={"tour_id": "t3"})
            assert len(filtered) == 10 and all(h.payload["tour_id"] == "t3" for h in filtered)
    finally:
        store.close()


def test_unreachable_server_is_a_clear_store_error():
    with pytest.raises(StoreError, match="127.0.0.1:9"):
        QdrantVectorStore(url="http://127.0.0.1:9", timeout_s=2)


def test_local_index_equals_qdrant_brute_force():
    """Below the ANN threshold the in-process index returns exactly what Qdrant's own search does."""
    rng = np.random.default_rng(21)
    vecs = unit(rng, 600)
    store = QdrantVectorStore(path=":memory:")  # same index path as a folder, without the fsyncs
    try:
        store.upsert("c", [f"p{i}" for i in range(600)], vecs,
                     [{"tour_id": f"t{i % 3}", "n": i} for i in range(600)])
        for q in unit(rng, 10):
            for where in (None, {"tour_id": "t1"}):
                ours = store.search("c", q, 10, where)
                theirs = store._qdrant_search("c", q, 10, where)
                assert [h.point_id for h in ours] == [h.point_id for h in theirs]
                assert [h.payload for h in ours] == [h.payload for h in theirs]
                np.testing.assert_allclose([h.score for h in ours], [h.score for h in theirs],
                                           atol=1e-5)
    finally:
        store.close()


def test_ann_index_rebuilt_on_reopen_and_nested_filter_falls_back(tmp_path):
    """Reopening rebuilds the index from Qdrant's points (its lists may differ from the ones built
    while ingesting, so results are checked against exact search, not against each other).
    Local Qdrant commits every point to sqlite, so this stays small."""
    rng = np.random.default_rng(22)
    n = 800
    vecs = unit(rng, n)
    payloads = [{"tour_id": f"t{i % 4}", "meta": {"kind": "mug" if i % 50 == 0 else "cup"}}
                for i in range(n)]
    store = QdrantVectorStore(path=str(tmp_path / "q"), ann_exact_below=200)
    try:
        store.upsert("c", [f"p{i}" for i in range(n)], vecs, payloads)
        store.upsert("c", ["p5"], vecs[7:8], [{"tour_id": "t9"}])  # re-upsert: new vector, payload
    finally:
        store.close()
    vecs[5] = vecs[7]
    again = QdrantVectorStore(path=str(tmp_path / "q"), ann_exact_below=200)
    try:
        assert again.count("c") == n
        assert again.ann_stats("c")["lists"] > 0  # the IVF path is the one under test
        recalls = []
        for q in vecs[10:40] + 0.1 * unit(rng, 30):
            q = q / np.linalg.norm(q)
            exact = [f"p{j}" for j in np.argsort(-(vecs @ q))[:5]]
            hits = again.search("c", q, 5)
            assert hits[0].point_id == exact[0]
            assert hits[0].payload == payloads[int(exact[0][1:])]
            recalls.append(len(set(exact) & {h.point_id for h in hits}) / 5)
            in_t2 = again.search("c", q, 5, {"tour_id": "t2"})
            assert len(in_t2) == 5 and all(h.payload["tour_id"] == "t2" for h in in_t2)
        assert np.mean(recalls) >= 0.9
        assert {h.point_id for h in again.search("c", vecs[7], 2)} == {"p5", "p7"}
        moved = again.search("c", vecs[7], 1, {"tour_id": "t9"})
        assert [(h.point_id, h.payload) for h in moved] == [("p5", {"tour_id": "t9"})]
        mugs = again.search("c", vecs[0], 100, {"meta.kind": "mug"})  # nested key: Qdrant's filter
        assert sorted(h.point_id for h in mugs) == sorted(f"p{i}" for i in range(0, n, 50))
    finally:
        again.close()


def test_search_while_another_thread_upserts():
    import threading

    rng = np.random.default_rng(23)
    vecs = unit(rng, 1500)
    store = QdrantVectorStore(path=":memory:", ann_exact_below=600)
    store.upsert("c", [f"p{i}" for i in range(300)], vecs[:300], [{} for _ in range(300)])
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for start in range(300, 1500, 100):
                store.upsert("c", [f"p{i}" for i in range(start, start + 100)],
                             vecs[start:start + 100], [{} for _ in range(100)])
        except BaseException as e:
            errors.append(e)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while thread.is_alive():
            i = int(rng.integers(0, 300))
            assert store.search("c", vecs[i], 1)[0].point_id == f"p{i}"
        thread.join()
        assert not errors and store.count("c") == 1500
        assert store.search("c", vecs[1400], 1)[0].point_id == "p1400"
    finally:
        store.close()


def test_ann_state_saved_reused_and_invalidated(tmp_path, caplog):
    """Closing saves the trained quantiser beside Qdrant's data; reopening reuses it (no k-means)
    when it fits Qdrant's points, re-trains when most points changed behind its back, and
    survives an unreadable state file."""
    from qdrant_client import QdrantClient, models

    rng = np.random.default_rng(24)
    n = 900
    vecs = unit(rng, n)
    folder = tmp_path / "q"
    store = QdrantVectorStore(path=str(folder), ann_exact_below=300)
    store.upsert("c", [f"p{i}" for i in range(n)], vecs, [{"i": i} for i in range(n)])
    built = store.ann_stats("c")
    store.close()
    state_file = folder / "vlkng_ann" / "c.npz"
    assert state_file.exists()

    again = QdrantVectorStore(path=str(folder), ann_exact_below=300)
    try:
        stats = again.ann_stats("c")
        assert again.ann_loads["c"] == "reused" and stats["trainings"] == 0
        assert (stats["lists"], stats["nprobe"]) == (built["lists"], built["nprobe"])
        for i in (0, 450, 899):
            hit = again.search("c", vecs[i], 1)[0]
            assert (hit.point_id, hit.payload) == (f"p{i}", {"i": i})
    finally:
        again.close()

    # most vectors replaced by another writer: the saved lists no longer fit
    fresh = unit(rng, n)
    raw = QdrantClient(path=str(folder))
    raw.upsert("c", points=[models.PointStruct(id=point_uuid(f"p{i}"), vector=fresh[i].tolist(),
                                               payload={"i": i, "_vlkng_id": f"p{i}"})
                            for i in range(n)])
    raw.close()
    stale = QdrantVectorStore(path=str(folder), ann_exact_below=300)
    try:
        assert stale.ann_stats("c")["trainings"] == 1 and stale.ann_loads["c"] == "rebuilt"
        assert all(stale.search("c", fresh[i], 1)[0].point_id == f"p{i}" for i in (1, 500, 898))
    finally:
        stale.close()

    state_file.write_bytes(b"not an npz")
    with caplog.at_level("WARNING", logger="vlkng.stores.qdrant"):
        broken = QdrantVectorStore(path=str(folder), ann_exact_below=300)
        try:
            assert broken.count("c") == n
            assert broken.search("c", fresh[7], 1)[0].point_id == "p7"
            assert broken.ann_loads["c"] == "fresh"
        finally:
            broken.close()
    assert "unreadable ANN state" in caplog.text


def test_direct_local_read_equals_scroll():
    """Opening reads local mode's arrays directly when it can; that must give exactly what the
    public scroll gives (ids, vectors, payloads without the hidden id key)."""
    rng = np.random.default_rng(25)
    vecs = unit(rng, 300)
    store = QdrantVectorStore(path=":memory:")
    try:
        store.upsert("c", [f"p{i}" for i in range(300)], vecs,
                     [{"i": i, "tags": ["a", str(i % 3)]} for i in range(300)])
        store.upsert("c", ["p4"], vecs[9:10], [{"moved": True}])
        direct = store._mode.local_points("c", DIM)
        assert direct is not None  # the fast path is the one used with this qdrant-client
        scrolled = store._mode.scrolled_points("c", DIM)
        def key(pts):
            return sorted(zip(pts[0], pts[1].round(6).tolist(), map(repr, pts[2])))

        assert key(direct) == key(scrolled)
        assert len(direct[0]) == 300 and {"moved": True} in direct[2]
    finally:
        store.close()


def test_store_search_does_not_wait_for_index_training(monkeypatch):
    """An upsert that re-trains the local index holds the writer lock only: searches (and
    counts) from other threads are answered meanwhile, from the lists in use until the swap."""
    import threading

    from vlkng_ros.core.stores.ann import AnnIndex

    rng = np.random.default_rng(26)
    vecs = unit(rng, 1200)
    store = QdrantVectorStore(path=":memory:", ann_exact_below=400)
    store.upsert("c", [f"p{i}" for i in range(600)], vecs[:600], [{} for _ in range(600)])
    started, release = threading.Event(), threading.Event()
    real_fit = AnnIndex._fit

    def slow_fit(self, data, rng_):
        started.set()
        assert release.wait(30)
        return real_fit(self, data, rng_)

    monkeypatch.setattr(AnnIndex, "_fit", slow_fit)
    writer = threading.Thread(target=store.upsert, args=(
        "c", [f"p{i}" for i in range(600, 1200)], vecs[600:1200], [{} for _ in range(600)]))
    writer.start()
    try:
        assert started.wait(30)
        answers: list = []
        reader = threading.Thread(target=lambda: answers.append(
            (store.search("c", vecs[3], 1)[0].point_id, store.count("c"))))
        reader.start()
        reader.join(30)
        assert not reader.is_alive(), "a search waited for the training run"
        assert answers[0][0] == "p3" and answers[0][1] >= 600
    finally:
        release.set()
        writer.join(60)
    assert store.count("c") == 1200 and store.ann_stats("c")["trainings"] == 2
    assert store.search("c", vecs[1100], 1)[0].point_id == "p1100"
    store.close()


def test_reader_answers_from_the_mirror_and_notices_other_writers(tmp_path, caplog):
    """A reader (``snapshot_local``, as ``vlkng ask`` opens a memory) answers searches from the
    points mirror a writer left at close, as Qdrant would, without importing qdrant-client or
    writing into the memory; once anyone writes to Qdrant the mirror is stale and the reader goes
    to Qdrant; a damaged mirror is only ignored."""
    import json
    import subprocess
    import sys

    from qdrant_client import QdrantClient, models

    from vlkng_ros.core.stores.qdrant_store import snapshot_local

    rng = np.random.default_rng(27)
    vecs = unit(rng, 50)
    folder = tmp_path / "q"
    store = QdrantVectorStore(path=str(folder))
    store.upsert("c", [f"p{i}" for i in range(50)], vecs, [{"i": i, "tour_id": f"t{i % 2}"} for i in range(50)])
    store.close()
    mirror = folder / "vlkng_ann" / "c.points.npz"
    assert mirror.is_file()

    def answers(reader) -> list:
        return [reader.count("c")] + [[(h.point_id, round(h.score, 5), h.payload) for h in reader.search("c", q, 4, w)]
                                      for q in (vecs[3], vecs[40]) for w in (None, {"tour_id": "t1"})]

    qdrant = QdrantVectorStore(path=str(folder))
    qdrant._mode._mirror = None  # Qdrant's own answers
    try:
        want = answers(qdrant)
    finally:
        qdrant.close()
    before = sorted((p.relative_to(folder), p.stat().st_mtime_ns) for p in folder.rglob("*"))
    reader = snapshot_local(folder)
    try:
        assert answers(reader) == want and reader._client_obj is None  # never opened Qdrant
    finally:
        reader.close()
    assert sorted((p.relative_to(folder), p.stat().st_mtime_ns) for p in folder.rglob("*")) == before
    child = ("import sys, json, numpy as np\n"
             "from vlkng_ros.core.stores.qdrant_store import snapshot_local\n"
             f"r = snapshot_local(__import__('pathlib').Path({str(folder)!r}))\n"
             f"hits = r.search('c', np.array({vecs[3].tolist()}, dtype=np.float32), 2)\n"
             "r.close()\n"
             "print(json.dumps([[h.point_id for h in hits], 'qdrant_client' in sys.modules]))\n")
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [["p3", want[1][1][0]], False]

    # another writer moves p3: the mirror is stale, the reader must see the move
    raw = QdrantClient(path=str(folder))
    raw.upsert("c", points=[models.PointStruct(id=point_uuid("p3"), vector=vecs[40].tolist(),
                                               payload={"i": 3, "moved": True, "_vlkng_id": "p3"})])
    raw.close()
    reader = snapshot_local(folder)
    try:
        hits = reader.search("c", vecs[40], 2)
        assert {h.point_id for h in hits} == {"p3", "p40"} and reader._client_obj is not None
    finally:
        reader.close()

    # the next writer's close refreshes the mirror; a damaged mirror is ignored with a warning
    writer = QdrantVectorStore(path=str(folder))
    try:
        moved = answers(writer)
    finally:
        writer.close()
    reader = snapshot_local(folder)
    try:
        assert answers(reader) == moved and reader._client_obj is None
    finally:
        reader.close()
    mirror.write_bytes(b"PK not really")
    with caplog.at_level("WARNING", logger="vlkng.stores.qdrant"):
        reader = snapshot_local(folder)
        try:
            assert answers(reader) == moved
        finally:
            reader.close()
    assert "unreadable points mirror" in caplog.text


def test_writer_answers_from_the_mirror_and_stays_the_only_writer(tmp_path):
    """A writer (a restarted node) answers from the mirror without opening Qdrant, opens it at
    its first write, and a second writer of the same folder fails at opening, with a clear
    one-line error, as it did on Qdrant's own lock."""
    rng = np.random.default_rng(28)
    vecs = unit(rng, 20)
    folder = tmp_path / "q"
    first = QdrantVectorStore(path=str(folder))
    first.upsert("c", [f"p{i}" for i in range(20)], vecs, [{"i": i} for i in range(20)])
    first.close()
    writer = QdrantVectorStore(path=str(folder))
    try:
        with pytest.raises(StoreError, match="another process has this memory open for writing"):
            QdrantVectorStore(path=str(folder))
        assert writer.count("c") == 20 and writer.search("c", vecs[4], 1)[0].payload == {"i": 4}
        assert writer._client_obj is None  # answered from the mirror
        writer.upsert("c", ["p4"], vecs[9:10], [{"i": 4, "moved": True}])
        assert writer._client_obj is not None
        assert {h.point_id for h in writer.search("c", vecs[9], 2)} == {"p4", "p9"}
    finally:
        writer.close()
    again = QdrantVectorStore(path=str(folder))  # the lock was released; the new mirror is used
    try:
        assert again.search("c", vecs[9], 2)[0].score == pytest.approx(1.0, abs=1e-5)
        assert again.count("c") == 20 and again._client_obj is None
    finally:
        again.close()
