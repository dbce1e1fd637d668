"""The in-process ANN index behind local-mode vector search, checked against exact search."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from vlkng_ros.core.stores.ann import AnnIndex, filter_supported, unit_rows


def exact_top(unit_vecs: np.ndarray, query: np.ndarray, k: int,
              allowed: np.ndarray | None = None):
    """Ids (p<i>) and scores of the exact top-k by cosine over unit rows (random data: no ties)."""
    q = unit_rows(query)[0]
    slots = np.arange(len(unit_vecs)) if allowed is None else np.flatnonzero(allowed)
    scores = unit_vecs[slots] @ q
    best = np.argpartition(-scores, min(k, len(slots) - 1))[:k + 1]
    order = best[np.lexsort((slots[best], -scores[best]))][:k]
    return [f"p{slots[i]}" for i in order], scores[order]


def clustered_plus_random(rng: np.random.Generator, n_clustered: int, n_random: int, dim: int):
    centres = unit_rows(rng.normal(size=(150, dim)))
    members = centres[rng.integers(0, len(centres), n_clustered)]
    clustered = members + 0.5 * unit_rows(rng.normal(size=(n_clustered, dim)))
    data = np.concatenate([clustered, rng.normal(size=(n_random, dim))])
    return unit_rows(data[rng.permutation(len(data))])


@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(11)
    vecs = clustered_plus_random(rng, 16_000, 4_000, 64)
    index = AnnIndex(64, exact_below=4096)
    index.upsert([f"p{i}" for i in range(len(vecs))], vecs,
                 [{"tour": f"t{i % 5}", "rare": i % 400 == 0} for i in range(len(vecs))])
    return vecs, index


def test_exact_below_threshold():
    rng = np.random.default_rng(2)
    vecs = 3.0 * unit_rows(rng.normal(size=(3000, 48)))  # the index normalises what it stores
    index = AnnIndex(48, exact_below=4096)
    index.upsert([f"p{i}" for i in range(3000)], vecs, [{} for _ in range(3000)])
    assert not index.trained
    for q in rng.normal(size=(20, 48)).astype(np.float32):
        ids, scores = exact_top(vecs / 3.0, q, 10)
        hits = index.search(q, 10)
        assert [h.point_id for h in hits] == ids
        np.testing.assert_allclose([h.score for h in hits], scores, atol=1e-6)


def test_recall_at_10_on_20k_clustered_and_random(big):
    vecs, index = big
    stats = index.stats()
    assert index.trained and stats["lists"] > 100
    # the index must really be approximate: it probes well under half of the points
    assert stats["nprobe"] * 2 < stats["lists"]
    rng = np.random.default_rng(5)
    near_data = vecs[rng.choice(len(vecs), 100)] + 0.3 * unit_rows(rng.normal(size=(100, 64)))
    queries = np.concatenate([near_data, rng.normal(size=(50, 64))]).astype(np.float32)
    recalls = []
    for q in queries:
        ids, scores = exact_top(vecs, q, 10)
        hits = index.search(q, 10)
        recalls.append(len(set(ids) & {h.point_id for h in hits}) / 10)
        exact_score = {i: s for i, s in zip(ids, scores)}
        for h in hits:  # candidates are re-scored exactly
            if h.point_id in exact_score:
                assert h.score == pytest.approx(exact_score[h.point_id], abs=1e-5)
    assert np.mean(recalls) >= 0.95, np.mean(recalls)
    assert np.mean(recalls[:100]) >= 0.95


def test_filters_match_exact_filtered_search(big):
    vecs, index = big
    rng = np.random.default_rng(8)
    tours = np.array([i % 5 for i in range(len(vecs))])
    rare = np.array([i % 400 == 0 for i in range(len(vecs))])
    for q in vecs[rng.choice(len(vecs), 10)] + 0.2 * unit_rows(rng.normal(size=(10, 64))):
        ids, _ = exact_top(vecs, q, 10, allowed=rare)  # selective: answered exactly
        assert [h.point_id for h in index.search(q, 10, {"rare": True})] == ids
        hits = index.search(q, 10, {"tour": "t3"})  # broad: probed, then filtered
        assert len(hits) == 10 and all(h.payload["tour"] == "t3" for h in hits)
        ids, _ = exact_top(vecs, q, 10, allowed=tours == 3)
        assert len(set(ids) & {h.point_id for h in hits}) >= 8
        both = index.search(q, 50, {"tour": "t0", "rare": True})
        assert {h.point_id for h in both} == {f"p{i}" for i in np.flatnonzero(rare & (tours == 0))}
    assert index.search(vecs[0], 5, {"tour": "nowhere"}) == []


def test_filter_typing_lists_and_payload_updates():
    index = AnnIndex(4)
    vecs = np.eye(4, dtype=np.float32)
    index.upsert(["a", "b", "c", "d"], vecs,
                 [{"n": 1}, {"n": True}, {"n": 1.0}, {"tags": ["x", "y"], "n": "1"}])
    q = np.ones(4, dtype=np.float32)
    assert [h.point_id for h in index.search(q, 9, {"n": 1})] == ["a"]
    assert [h.point_id for h in index.search(q, 9, {"n": True})] == ["b"]
    assert [h.point_id for h in index.search(q, 9, {"n": "1"})] == ["d"]
    assert [h.point_id for h in index.search(q, 9, {"tags": "y"})] == ["d"]
    index.upsert(["a"], vecs[:1], [{"n": 2, "tags": "y"}])  # postings follow the new payload
    assert [h.point_id for h in index.search(q, 9, {"n": 1})] == []
    assert [h.point_id for h in index.search(q, 9, {"tags": "y"})] == ["a", "d"]
    assert not filter_supported({"meta.kind": "x"}) and not filter_supported({"n": 1.5})
    with pytest.raises(ValueError, match="exact match"):
        index.search(q, 3, {"n": [1]})
    with pytest.raises(ValueError, match="3-d query"):
        index.search(np.ones(3), 3)
    with pytest.raises(ValueError, match="line up"):
        index.upsert(["a", "b"], vecs[:1], [{}, {}])
    hits = index.search(q, 9)
    hits[0].payload["mutated"] = True  # returned payloads are copies
    assert "mutated" not in index.search(q, 9)[0].payload


def test_reupsert_moves_vector_and_growth_retrains():
    rng = np.random.default_rng(4)
    vecs = clustered_plus_random(rng, 5000, 0, 32)
    index = AnnIndex(32, exact_below=2000)
    index.upsert([f"p{i}" for i in range(5000)], vecs, [{"i": i} for i in range(5000)])
    assert index.trained and index.trainings == 1 and index.trained_at == 5000
    target = vecs[4321]
    index.upsert(["p7"], target[None, :] * 3.0, [{"i": -7}])  # same id, new vector
    assert len(index) == 5000
    top = index.search(target, 2)
    assert {h.point_id for h in top} == {"p7", "p4321"} and top[0].score == pytest.approx(1.0, abs=1e-5)
    assert index.search(vecs[7], 1)[0].point_id != "p7"  # the old vector is gone
    # incremental adds land in the nearest list and are found; doubling the size re-trains
    more = clustered_plus_random(rng, 5000, 0, 32)
    for start in range(0, 5000, 1000):
        index.upsert([f"n{i}" for i in range(start, start + 1000)], more[start:start + 1000],
                     [{} for _ in range(1000)])
        assert index.search(more[start + 5], 1)[0].point_id == f"n{start + 5}"
    assert index.trainings == 2 and index.trained_at == 10_000 and len(index) == 10_000
    assert index.search(target, 2)[0].score == pytest.approx(1.0, abs=1e-5)


def test_concurrent_search_while_upserting():
    rng = np.random.default_rng(9)
    vecs = rng.normal(size=(6000, 16)).astype(np.float32)
    index = AnnIndex(16, exact_below=1500)
    index.upsert([f"p{i}" for i in range(1000)], vecs[:1000], [{} for _ in range(1000)])
    errors: list[BaseException] = []
    done = threading.Event()

    def searcher() -> None:
        try:
            while not done.is_set():
                q = vecs[int(rng.integers(0, 1000))]
                hits = index.search(q, 5)
                assert len(hits) == 5 and hits[0].score == pytest.approx(1.0, abs=1e-4)
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=searcher) for _ in range(3)]
    for t in threads:
        t.start()
    for start in range(1000, 6000, 250):
        index.upsert([f"p{i}" for i in range(start, start + 250)], vecs[start:start + 250],
                     [{} for _ in range(250)])
    done.set()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert len(index) == 6000 and index.trained


def assert_layout_consistent(index: AnnIndex, current: dict[str, np.ndarray]) -> None:
    """Every point sits in exactly one list, at the row its position says, with its current
    vector; no list holds a row twice."""
    lists = index._lists
    seen: set[int] = set()
    for lst in range(lists.nlist):
        members = lists.members[lst][:lists.sizes[lst]].tolist()
        assert len(set(members)) == len(members)
        for row, slot in enumerate(members):
            assert slot not in seen
            seen.add(slot)
            assert lists.list_of[slot] == lst and lists.pos_of[slot] == row
            np.testing.assert_allclose(lists.blocks[lst][row], current[index._ids[slot]],
                                       atol=1e-6)
    assert len(seen) == len(index) == len(current)


def test_swap_remove_under_reupserts_keeps_lists_exact():
    rng = np.random.default_rng(31)
    vecs = clustered_plus_random(rng, 3000, 0, 24)
    index = AnnIndex(24, exact_below=1000)
    ids = [f"p{i}" for i in range(3000)]
    index.upsert(ids, vecs, [{"v": 0} for _ in ids])
    assert index.trained
    current = dict(zip(ids, vecs))
    for round_ in range(5):  # re-upserts move points between lists (and back), in batches
        picked = rng.choice(3000, size=400, replace=False)
        donors = rng.choice(3000, size=400)
        new = unit_rows(vecs[donors] + 0.05 * rng.normal(size=(400, 24)))
        index.upsert([ids[i] for i in picked], new, [{"v": round_ + 1} for _ in picked])
        current.update({ids[i]: v for i, v in zip(picked, new)})
        assert_layout_consistent(index, current)
    assert len(index) == 3000
    index.nprobe = index._lists.nlist  # probe everything: must equal exact search
    matrix = np.stack([current[i] for i in ids])
    for q in rng.normal(size=(10, 24)).astype(np.float32):
        want, scores = exact_top(matrix, q, 10)
        hits = index.search(q, 10)
        assert [h.point_id for h in hits] == want
        np.testing.assert_allclose([h.score for h in hits], scores, atol=1e-5)


def test_search_and_upsert_while_retraining_in_another_thread():
    rng = np.random.default_rng(33)
    vecs = clustered_plus_random(rng, 4000, 0, 16)
    index = AnnIndex(16, exact_below=1000)
    ids = [f"p{i}" for i in range(2000)]
    index.upsert(ids, vecs[:2000], [{} for _ in ids])
    assert index.trainings == 1
    started, release = threading.Event(), threading.Event()
    real_fit = index._fit

    def slow_fit(data, rng_):  # k-means that waits until the test lets it finish
        started.set()
        assert release.wait(30)
        return real_fit(data, rng_)

    index._fit = slow_fit
    grower = threading.Thread(  # doubling the size re-trains, inside this thread's upsert
        target=index.upsert, args=([f"p{i}" for i in range(2000, 4000)], vecs[2000:4000],
                                   [{} for _ in range(2000)]))
    grower.start()
    try:
        assert started.wait(30)
        results: list = []
        searcher = threading.Thread(target=lambda: results.append(index.search(vecs[3500], 1)))
        searcher.start()
        searcher.join(30)
        assert not searcher.is_alive(), "a search waited for the training run"
        assert results[0][0].point_id == "p3500"
        # written while the training runs: a new point and a moved one
        index.upsert(["late", "p10"], np.stack([vecs[3999] * -1, vecs[3000]]), [{}, {"m": 1}])
    finally:
        release.set()
        grower.join(60)
    assert index.trainings == 2 and index.trained_at == 4000 and len(index) == 4001
    current = {f"p{i}": unit_rows(v)[0] for i, v in enumerate(vecs)}
    current["late"], current["p10"] = unit_rows(-vecs[3999])[0], unit_rows(vecs[3000])[0]
    assert_layout_consistent(index, current)
    assert index.search(-vecs[3999], 1)[0].point_id == "late"
    assert {h.point_id for h in index.search(vecs[3000], 2)} == {"p10", "p3000"}
    assert index.search(vecs[10], 1)[0].point_id != "p10"


def test_exported_state_is_reused_and_rejected_when_stale():
    rng = np.random.default_rng(35)
    vecs = clustered_plus_random(rng, 3000, 0, 32)
    ids = [f"p{i}" for i in range(3000)]
    built = AnnIndex(32, exact_below=1000)
    built.upsert(ids, vecs, [{"i": i} for i in range(3000)])
    state = built.export_state()
    order = rng.permutation(3000)  # another scroll order: matched by id, not by position
    again = AnnIndex(32, exact_below=1000)
    assert again.bulk_load([ids[i] for i in order], vecs[order],
                           [{"i": int(i)} for i in order], state) == "reused"
    assert again.trainings == 0 and again.nprobe == built.nprobe
    for i in (0, 1234, 2999):
        assert again._lists.list_of[again._slot_of[ids[i]]] == \
            built._lists.list_of[built._slot_of[ids[i]]]
        assert again.search(vecs[i], 1)[0].payload == {"i": i}
    # a few changed vectors: still reused, the changed points go to their nearest list
    changed = vecs.copy()
    changed[:50] = unit_rows(rng.normal(size=(50, 32)))
    few = AnnIndex(32, exact_below=1000)
    assert few.bulk_load(ids, changed, [{} for _ in ids], state) == "reused"
    assert all(few.search(changed[i], 1)[0].point_id == f"p{i}" for i in range(50))
    # most vectors changed, or another dim: the state is ignored and k-means runs
    stale = AnnIndex(32, exact_below=1000)
    assert stale.bulk_load(ids, unit_rows(rng.normal(size=(3000, 32))), [{} for _ in ids],
                           state) == "rebuilt"
    assert stale.trainings == 1
    other_dim = AnnIndex(16, exact_below=1000)
    assert other_dim.bulk_load(ids, vecs[:, :16], [{} for _ in ids], state) == "rebuilt"
    truncated = {**state, "lists": state["lists"][:10]}
    assert AnnIndex(32, exact_below=1000).bulk_load(ids, vecs, [{} for _ in ids],
                                                    truncated) == "rebuilt"
