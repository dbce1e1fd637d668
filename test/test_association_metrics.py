"""Association scoring against gt_track, on hand-computed cases."""

import pytest

from vlkng_ros.eval.metrics import association_scores, iou, match_observations
from vlkng_ros.core.model import ObjectNode, Observation


def test_iou():
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(50 / 150)
    assert iou((0, 0, 1, 1), (2, 2, 3, 3)) == 0.0


def test_perfect_split_and_merged_identities():
    perfect = [("n1", "a")] * 3 + [("n2", "b")] * 2
    s = association_scores(perfect)
    assert s["f1"] == 1.0 and s["fragmentation"] == 1.0
    # object a split over two nodes (2+1 observations): recall 1/3 of its 3 pairs lost
    split = [("n1", "a"), ("n1", "a"), ("n3", "a"), ("n2", "b"), ("n2", "b")]
    s = association_scores(split)
    assert s["precision"] == 1.0 and s["recall"] == pytest.approx(2 / 4) and s["fragmentation"] == 1.5
    # a and b merged into one node: precision = true pairs (3+1) / predicted pairs C(5,2)=10
    merged = [("n1", "a")] * 3 + [("n1", "b")] * 2
    s = association_scores(merged)
    assert s["recall"] == 1.0 and s["precision"] == pytest.approx(0.4)


def test_match_observations_by_iou_one_to_one():
    node = ObjectNode("n1", "mug", observations=[Observation("t", 5, (10, 10, 50, 50), "t#0", "o1")])
    other = ObjectNode("n2", "mug", observations=[Observation("t", 5, (12, 10, 52, 50), "t#0", "o2")])
    ann = {"t": {5: {"objects": [{"gt_track": "mug-1", "bbox": [10, 10, 50, 50]},
                                 {"gt_track": "mug-2", "bbox": [300, 300, 340, 340]}]}}}
    pairs = match_observations([node, other], ann)
    assert pairs == [("n1", "mug-1")]  # n2 overlaps mug-1 too, but mug-1 is taken
